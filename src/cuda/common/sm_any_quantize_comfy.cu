// bf16 -> NVFP4 with recipe comfy-cuda (NVFP4-SPEC.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. Memory-bound, so the layout serves the loads: each thread owns half a
// 16-element block (one 16-byte load, one 4-byte packed store, both coalesced across the warp),
// the two halves of a block sit in adjacent lanes and combine their amax with one shuffle, and
// every thread keeps kHalvesPerThread independent loads in flight. Built for every target
// (sm_90a, sm_120a, sm_121a): the sequence uses no arch-specific instruction.
#include <cuda_runtime.h>

#include <algorithm>

#include "check.cuh"
#include "kernels.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;
constexpr int kHalf = 8;                  // elements per thread per step: one 16-byte load
constexpr int kHalvesPerThread = 2;       // independent loads in flight per thread
constexpr int kMaxGridY = 65535;
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6): what "/6" became under fast-math
static_assert(kThreads % 32 == 0 && kBlock == 2 * kHalf, "a block's two halves are adjacent lanes of one warp");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  int64_t rows, cols, rows16, sf_cols, sf_cols_pad;
  float s;
  bool hi_first, swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

__device__ __forceinline__ void load_half(const QuantParams& p, int64_t r, int64_t k0, float (&xf)[kHalf]) {
  if (p.vec_ok && r < p.rows && k0 + kHalf <= p.cols) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p.x + r * p.cols + k0));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      xf[2 * i] = __uint_as_float(w[i] << 16);
      xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int i = 0; i < kHalf; ++i)
      xf[i] = (r < p.rows && k0 + i < p.cols) ? bf16_to_f32(p.x[r * p.cols + k0 + i]) : 0.0f;
  }
}

// grid.y walks rows (strided past 65535); threads of a row walk its half-blocks.
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const int64_t halves = p.sf_cols * 2;
  const float rcp_s = rcp_approx_ftz(p.s);
  for (int64_t r = blockIdx.y; r < p.rows16; r += gridDim.y) {
    // Every lane of a warp runs the same iterations (shuffles need both halves present).
    const int64_t base = static_cast<int64_t>(blockIdx.x) * kThreads * kHalvesPerThread + threadIdx.x;
    float xf[kHalvesPerThread][kHalf];
#pragma unroll
    for (int u = 0; u < kHalvesPerThread; ++u) {
      const int64_t h = base + u * kThreads;
      if (h < halves) load_half(p, r, h * kHalf, xf[u]);
      else
#pragma unroll
        for (int i = 0; i < kHalf; ++i) xf[u][i] = 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kHalvesPerThread; ++u) {
      const int64_t h = base + u * kThreads;
      float amax = 0.0f;  // step 1: NaN elements ignored by max.f32
#pragma unroll
      for (int i = 0; i < kHalf; ++i) amax = fmax_nan_ignored(amax, fabsf(xf[u][i]));
      amax = fmax_nan_ignored(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));  // the block's other half
      float d = fmul_rn_ftz(amax, kOneSixth);             // step 2
      d = fmul_rn_ftz(d, rcp_s);                          // step 3
      d = fmin_ftz(d, 448.0f);                            // step 4: NaN -> 448
      const uint8_t sf = e4m3_rn_sat(d);                  // step 5
      const float t = fmul_rn_ftz(p.s, e4m3_to_f32(sf));  // step 6
      const float e = fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f);
      if (h >= halves) continue;
      uint32_t packed = 0;
#pragma unroll
      for (int i = 0; i < kHalf; i += 2) {
        const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[u][i]));      // step 7
        const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[u][i + 1]));
        packed |= (p.hi_first ? ((q0 << 4) | q1) : ((q1 << 4) | q0)) << (4 * i);  // step 8
      }
      *reinterpret_cast<uint32_t*>(p.data + r * (p.sf_cols * 8) + h * 4) = packed;
      if ((h & 1) == 0) {
        const int64_t c = h >> 1;
        const int64_t off = p.swizzled ? ((r / 128) * (p.sf_cols_pad / 4) + (c / 4)) * 512 + (r % 32) * 16 +
                                             ((r % 128) / 32) * 4 + (c % 4)
                                       : r * p.sf_cols + c;
        p.scales[off] = sf;
      }
    }
  }
}

}  // namespace

Status launch_quantize_comfy(const uint16_t* x, int64_t rows, int64_t cols, float s, uint8_t* data,
                             uint8_t* scales, bool hi_first, bool swizzled, cudaStream_t stream) {
  QuantParams p;
  p.x = x;
  p.data = data;
  p.scales = scales;
  p.rows = rows;
  p.cols = cols;
  p.rows16 = (rows + 15) / 16 * 16;
  p.sf_cols = (cols + 15) / 16;
  p.sf_cols_pad = (p.sf_cols + 3) / 4 * 4;
  p.s = s;
  p.hi_first = hi_first;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const int64_t per_cta = static_cast<int64_t>(kThreads) * kHalvesPerThread;
  const int64_t gx = (p.sf_cols * 2 + per_cta - 1) / per_cta;
  if (gx > 0x7FFFFFFF) return invalid_argument("quantize_gpu: rows too long for one launch");
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min<int64_t>(p.rows16, kMaxGridY)));
  sm_any_quantize_comfy<<<grid, kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
