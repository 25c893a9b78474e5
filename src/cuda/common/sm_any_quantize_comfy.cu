// bf16 -> NVFP4 with recipe comfy-cuda (NVFP4-SPEC.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. The kernel is bound by instruction issue more than by DRAM at 16 elements
// per block, so each thread owns one whole block (two 16-byte loads, one 8-byte store; the block's
// scale arithmetic is done once), index math is 32-bit where the tensor allows, and the E2M1
// rounding is integer arithmetic on the product's bits (numerics.cuh) instead of seven compares.
// Built for every target (sm_90a, sm_120a, sm_121a): the sequence uses no arch-specific instruction.
#include <cuda_runtime.h>

#include <algorithm>

#include "check.cuh"
#include "kernels.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6): what "/6" became under fast-math
static_assert(kThreads % 32 == 0 && kBlock == 16, "one 16-element block per thread");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  int64_t rows, cols, rows16, sf_cols, sf_cols_pad;
  int64_t blocks;      // rows16 * sf_cols
  float s;
  bool swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

__device__ __forceinline__ void unpack8(uint4 v, float* xf) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    xf[2 * i] = __uint_as_float(w[i] << 16);
    xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
  }
}

// Thread b owns block b of the padded [rows16][cols16/16] block grid. Index is 32-bit whenever the
// tensor allows (a 64-bit division costs more than a block's arithmetic).
template <typename Index, bool kHiFirst>
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const Index b = static_cast<Index>(blockIdx.x) * kThreads + threadIdx.x;
  if (b >= static_cast<Index>(p.blocks)) return;
  const Index sf_cols = static_cast<Index>(p.sf_cols);
  const Index r = b / sf_cols, c = b - r * sf_cols;
  const Index k0 = c * kBlock;

  float xf[kBlock];
  if (p.vec_ok && r < p.rows && k0 + kBlock <= p.cols) {
    const uint4* src = reinterpret_cast<const uint4*>(p.x + static_cast<int64_t>(r) * p.cols + k0);
    const uint4 v0 = __ldg(src), v1 = __ldg(src + 1);
    unpack8(v0, xf);
    unpack8(v1, xf + 8);
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int i = 0; i < kBlock; ++i)
      xf[i] = (r < p.rows && k0 + i < p.cols) ? bf16_to_f32(p.x[static_cast<int64_t>(r) * p.cols + k0 + i]) : 0.0f;
  }

  // step 1: fmaxf (max.f32) ignores NaN elements; a tree, so the max is 4 steps deep, not 16
  float m8[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) m8[i] = fmaxf(fabsf(xf[i]), fabsf(xf[i + 8]));
#pragma unroll
  for (int w = 4; w >= 1; w /= 2)
#pragma unroll
    for (int i = 0; i < w; ++i) m8[i] = fmaxf(m8[i], m8[i + w]);
  const float amax = fmaxf(m8[0], 0.0f);
  float d = fmul_rn_ftz(amax, kOneSixth);              // step 2
  d = fmul_rn_ftz(d, rcp_approx_ftz(p.s));             // step 3
  d = fmin_ftz(d, 448.0f);                             // step 4: NaN -> 448
  const uint8_t sf = e4m3_rn_sat(d);                   // step 5
  const float t = fmul_rn_ftz(p.s, e4m3_to_f32(sf));   // step 6
  const float e = fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f);
  uint32_t packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < kBlock; i += 2) {
    const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7
    const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
    packed[i / 8] |= (kHiFirst ? ((q0 << 4) | q1) : ((q1 << 4) | q0)) << (4 * (i % 8));  // step 8
  }
  reinterpret_cast<uint2*>(p.data)[b] = make_uint2(packed[0], packed[1]);  // row pitch cols16/2 = 8 B per block
  const int64_t off = p.swizzled ? (static_cast<int64_t>(r / 128) * (p.sf_cols_pad / 4) + (c / 4)) * 512 + (r % 32) * 16 +
                                       ((r % 128) / 32) * 4 + (c % 4)
                                 : static_cast<int64_t>(r) * p.sf_cols + c;
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
  p.blocks = p.rows16 * p.sf_cols;
  p.s = s;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const int64_t grid = (p.blocks + kThreads - 1) / kThreads;
  if (grid > 0x7FFFFFFF) return invalid_argument("quantize_gpu: tensor too large for one launch");
  const bool narrow = p.blocks + kThreads < (int64_t{1} << 31);
  const unsigned g = static_cast<unsigned>(grid);
  if (narrow && hi_first) sm_any_quantize_comfy<uint32_t, true><<<g, kThreads, 0, stream>>>(p);
  else if (narrow) sm_any_quantize_comfy<uint32_t, false><<<g, kThreads, 0, stream>>>(p);
  else if (hi_first) sm_any_quantize_comfy<uint64_t, true><<<g, kThreads, 0, stream>>>(p);
  else sm_any_quantize_comfy<uint64_t, false><<<g, kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
