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
constexpr int kHalf = 8;                  // elements per thread: one 16-byte load, one 4-byte store
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6): what "/6" became under fast-math
static_assert(kThreads % 32 == 0 && kBlock == 2 * kHalf, "a block's two halves are adjacent lanes of one warp");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  int64_t rows, cols, rows16, sf_cols, sf_cols_pad;
  int64_t halves;      // rows16 * sf_cols * 2
  float s;
  bool hi_first, swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

// Flat over half-blocks: thread h owns elements [8h, 8h+8) of the padded [rows16][cols16] tensor.
// Index math in Index (32-bit whenever the tensor allows: a 64-bit division costs more than the
// eight elements' arithmetic).
template <typename Index>
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const Index h = static_cast<Index>(blockIdx.x) * kThreads + threadIdx.x;
  const bool live = h < static_cast<Index>(p.halves);  // only the last warp has dead lanes
  const Index blk = h >> 1, sf_cols = static_cast<Index>(p.sf_cols);
  const Index r = blk / sf_cols, c = blk - r * sf_cols;
  const Index k0 = c * kBlock + (h & 1) * kHalf;

  float xf[kHalf];
  if (live && p.vec_ok && r < p.rows && k0 + kHalf <= p.cols) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p.x + static_cast<int64_t>(r) * p.cols + k0));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      xf[2 * i] = __uint_as_float(w[i] << 16);
      xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  } else {  // padded edge, unaligned rows, dead lane: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int i = 0; i < kHalf; ++i)
      xf[i] = (live && r < p.rows && k0 + i < p.cols) ? bf16_to_f32(p.x[static_cast<int64_t>(r) * p.cols + k0 + i]) : 0.0f;
  }

  float amax = 0.0f;  // step 1: fmaxf (max.f32) ignores NaN elements
#pragma unroll
  for (int i = 0; i < kHalf; ++i) amax = fmaxf(amax, fabsf(xf[i]));
  amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));  // the block's other half
  float d = fmul_rn_ftz(amax, kOneSixth);              // step 2
  d = fmul_rn_ftz(d, rcp_approx_ftz(p.s));             // step 3
  d = fmin_ftz(d, 448.0f);                             // step 4: NaN -> 448
  const uint8_t sf = e4m3_rn_sat(d);                   // step 5
  const float t = fmul_rn_ftz(p.s, e4m3_to_f32(sf));   // step 6
  const float e = fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f);
  if (!live) return;
  uint32_t packed = 0;
#pragma unroll
  for (int i = 0; i < kHalf; i += 2) {
    const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7
    const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
    packed |= (p.hi_first ? ((q0 << 4) | q1) : ((q1 << 4) | q0)) << (4 * i);  // step 8
  }
  reinterpret_cast<uint32_t*>(p.data)[h] = packed;  // row pitch cols16/2 = 4 bytes per half-block
  if ((h & 1) == 0) {
    const int64_t off = p.swizzled ? (static_cast<int64_t>(r / 128) * (p.sf_cols_pad / 4) + (c / 4)) * 512 + (r % 32) * 16 +
                                         ((r % 128) / 32) * 4 + (c % 4)
                                   : static_cast<int64_t>(r) * p.sf_cols + c;
    p.scales[off] = sf;
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
  p.halves = p.rows16 * p.sf_cols * 2;
  p.s = s;
  p.hi_first = hi_first;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const int64_t grid = (p.halves + kThreads - 1) / kThreads;
  if (grid > 0x7FFFFFFF) return invalid_argument("quantize_gpu: tensor too large for one launch");
  if (p.halves + kThreads < (int64_t{1} << 31))
    sm_any_quantize_comfy<uint32_t><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(p);
  else
    sm_any_quantize_comfy<uint64_t><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
