// bf16 -> NVFP4 with recipe comfy-cuda (NVFP4-SPEC.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. One thread per 16-element block; a warp covers 32 consecutive blocks of
// a row (1 KiB of input), so loads and the 8-byte packed stores are coalesced. Built for every
// target (sm_90a, sm_120a, sm_121a): the sequence uses no arch-specific instruction.
#include <cuda_runtime.h>

#include "check.cuh"
#include "kernels.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6): what "/6" became under fast-math
static_assert(kThreads % 32 == 0, "whole warps");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  int64_t rows, cols, rows16, sf_cols, sf_cols_pad;
  float s;
  bool hi_first, swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const int64_t blk = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t r = blk / p.sf_cols, c = blk % p.sf_cols;
  if (r >= p.rows16) return;
  const int64_t k0 = c * kBlock;

  float xf[kBlock];
  if (p.vec_ok && r < p.rows && k0 + kBlock <= p.cols) {
    const uint4* src = reinterpret_cast<const uint4*>(p.x + r * p.cols + k0);
    const uint4 v0 = __ldg(src), v1 = __ldg(src + 1);
    const uint32_t w[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      xf[2 * i] = __uint_as_float(w[i] << 16);
      xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int i = 0; i < kBlock; ++i)
      xf[i] = (r < p.rows && k0 + i < p.cols) ? bf16_to_f32(p.x[r * p.cols + k0 + i]) : 0.0f;
  }

  float amax = 0.0f;  // step 1: NaN elements ignored by max.f32
#pragma unroll
  for (int i = 0; i < kBlock; ++i) amax = fmax_nan_ignored(amax, fabsf(xf[i]));
  float d = fmul_rn_ftz(amax, kOneSixth);       // step 2
  d = fmul_rn_ftz(d, rcp_approx_ftz(p.s));      // step 3
  d = fmin_ftz(d, 448.0f);                      // step 4: NaN -> 448
  const uint8_t sf = e4m3_rn_sat(d);            // step 5
  const float t = fmul_rn_ftz(p.s, e4m3_to_f32(sf));  // step 6
  const float e = fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f);

  uint32_t packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < kBlock; i += 2) {
    const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7
    const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
    const uint32_t byte = p.hi_first ? ((q0 << 4) | q1) : ((q1 << 4) | q0);  // step 8
    packed[i / 8] |= byte << (8 * ((i % 8) / 2));
  }
  *reinterpret_cast<uint2*>(p.data + r * (p.sf_cols * 8) + c * 8) = make_uint2(packed[0], packed[1]);
  const int64_t off = p.swizzled ? ((r / 128) * (p.sf_cols_pad / 4) + (c / 4)) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4)
                                 : r * p.sf_cols + c;
  p.scales[off] = sf;
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
  const int64_t blocks = p.rows16 * p.sf_cols;
  const int64_t grid = (blocks + kThreads - 1) / kThreads;
  if (grid > 0x7FFFFFFF) return invalid_argument("quantize_gpu: tensor too large for one launch");
  sm_any_quantize_comfy<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
