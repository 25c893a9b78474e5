// bf16 -> NVFP4 with recipe comfy-cuda (NVFP4-SPEC.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. The kernel is bound by instruction issue as much as by DRAM, so each thread
// owns whole blocks (16-byte loads, 8-byte stores, the block's scale arithmetic done once), index
// math avoids integer division, and the E2M1 rounding is integer arithmetic on the product's bits
// (common/e2m1_bits.hpp) instead of seven compares.
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
constexpr int kPerThread = 2;            // blocks per thread: loads in flight, interleaved scale math
static_assert(kThreads % 32 == 0 && kBlock == 16, "whole warps, 16-element blocks");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  int64_t rows, cols, rows16, sf_cols, sf_cols_pad;
  int64_t blocks;      // rows16 * sf_cols
  double inv_sf_cols;  // 1 / sf_cols
  float s;
  bool hi_first, swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

__device__ __forceinline__ void unpack8(uint4 v, float* xf) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    xf[2 * i] = __uint_as_float(w[i] << 16);
    xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
  }
}

// Quantizes one block whose 16 inputs are in xf; returns the 8 packed bytes, writes the scale.
__device__ __forceinline__ uint2 quantize_block(const QuantParams& p, const float (&xf)[kBlock], float rcp_s, uint8_t& sf_out) {
  float amax = 0.0f;  // step 1: fmaxf (max.f32) ignores NaN elements
#pragma unroll
  for (int i = 0; i < kBlock; ++i) amax = fmaxf(amax, fabsf(xf[i]));
  float d = fmul_rn_ftz(amax, kOneSixth);              // step 2
  d = fmul_rn_ftz(d, rcp_s);                           // step 3
  d = fmin_ftz(d, 448.0f);                             // step 4: NaN -> 448
  const uint8_t sf = e4m3_rn_sat(d);                   // step 5
  sf_out = sf;
  const float t = fmul_rn_ftz(p.s, e4m3_to_f32(sf));   // step 6
  const float e = fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f);
  uint32_t packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < kBlock; i += 2) {
    const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7
    const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
    packed[i / 8] |= (p.hi_first ? ((q0 << 4) | q1) : ((q1 << 4) | q0)) << (4 * (i % 8));  // step 8
  }
  return make_uint2(packed[0], packed[1]);
}

__device__ __forceinline__ void load_block(const QuantParams& p, int64_t r, int64_t k0, float (&xf)[kBlock]) {
  if (p.vec_ok && r < p.rows && k0 + kBlock <= p.cols) {
    const uint4* src = reinterpret_cast<const uint4*>(p.x + r * p.cols + k0);
    const uint4 v0 = __ldg(src), v1 = __ldg(src + 1);
    unpack8(v0, xf);
    unpack8(v1, xf + 8);
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int i = 0; i < kBlock; ++i) xf[i] = (r < p.rows && k0 + i < p.cols) ? bf16_to_f32(p.x[r * p.cols + k0 + i]) : 0.0f;
  }
}

// Thread t owns blocks kPerThread*t .. +kPerThread-1 of the padded [rows16][cols16/16] block grid
// (flat, so a row's end runs into the next row): their loads are issued together and their
// scale arithmetic interleaves. Row and column come from one double-precision multiply by 1/sf_cols
// and an exact integer correction, cheaper than an integer division.
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const int64_t b0 = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * kPerThread;
  if (b0 >= p.blocks) return;
  int64_t r = static_cast<int64_t>(static_cast<double>(b0) * p.inv_sf_cols);
  int64_t c = b0 - r * p.sf_cols;
  if (c < 0) { --r; c += p.sf_cols; }
  if (c >= p.sf_cols) { ++r; c -= p.sf_cols; }
  int64_t rr[kPerThread], cc[kPerThread];
  float xf[kPerThread][kBlock];
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    rr[u] = r;
    cc[u] = c;
    if (b0 + u < p.blocks) load_block(p, r, c * kBlock, xf[u]);
    if (++c == p.sf_cols) { c = 0; ++r; }
  }
  const float rcp_s = rcp_approx_ftz(p.s);
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    if (b0 + u >= p.blocks) break;
    uint8_t sf;
    const uint2 q = quantize_block(p, xf[u], rcp_s, sf);
    reinterpret_cast<uint2*>(p.data)[b0 + u] = q;  // row pitch cols16/2 = 8 bytes per block
    const int64_t off = p.swizzled ? ((rr[u] >> 7) * (p.sf_cols_pad >> 2) + (cc[u] >> 2)) * 512 + (rr[u] & 31) * 16 +
                                         ((rr[u] & 127) >> 5) * 4 + (cc[u] & 3)
                                   : rr[u] * p.sf_cols + cc[u];
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
  p.blocks = p.rows16 * p.sf_cols;
  p.s = s;
  p.hi_first = hi_first;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  p.inv_sf_cols = 1.0 / static_cast<double>(p.sf_cols);
  const int64_t threads = (p.blocks + kPerThread - 1) / kPerThread;
  const int64_t grid = (threads + kThreads - 1) / kThreads;
  if (grid > 0x7FFFFFFF) return invalid_argument("quantize_gpu: tensor too large for one launch");
  sm_any_quantize_comfy<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
