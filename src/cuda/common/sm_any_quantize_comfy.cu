// bf16 -> NVFP4 with recipe comfy-cuda (docs/numerics.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. Loads are not the limit here, instruction issue is (a variant that skips
// the loads runs as long), so the per-element work is kept small:
//  - one thread per 16-element block: two 16-byte loads, one 8-byte store, the scale math once;
//  - row and column by a multiply-high instead of an integer division (common/fast_div.hpp);
//  - the block's amax as an unsigned max over bf16 patterns two at a time (their order is the
//    value order), which also tells whether the block holds Inf or NaN;
//  - blocks without Inf/NaN (all real data) quantize magnitudes, e * |x|, with the short E2M1
//    rounding of common/e2m1_bits.hpp, and take the eight sign bits of a packed word from the
//    inputs in two byte permutes; blocks with Inf/NaN take the per-element path that reproduces
//    the reference's canonical-NaN rule.
// Built for every target (sm_90a, sm_120a, sm_121a): no arch-specific instruction is needed.
#include <cuda_runtime.h>

#include "../../common/fast_div.hpp"
#include "check.cuh"
#include "kernels.hpp"
#include "nvfp4/format.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;
static_assert(kThreads % 32 == 0 && kBlock == 16, "whole warps, 16-element blocks");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  uint32_t rows, cols, sf_cols, sf_cols_pad;  // 32-bit: the launcher checks every size fits
  uint32_t blocks;     // rows16 * sf_cols
  detail::FastDiv div_sf_cols;
  float s;
  bool swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

__device__ __forceinline__ uint32_t max_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}
// mul.rn.ftz of e and |x| (the abs folds into the multiply's operand)
__device__ __forceinline__ float fmul_abs_rn_ftz(float e, float x) { return fmul_rn_ftz(e, fabsf(x)); }

// The sign bits of the 8 elements in bf16 words w[0..3] (element 2j in the low half of w[j]),
// placed where a packed byte keeps them: bit 7 for its high nibble, bit 3 for its low one.
template <bool kHiFirst>
__device__ __forceinline__ uint32_t packed_signs(const uint32_t* w) {
  const uint32_t even = prmt(prmt(w[0], w[1], 0x0051), prmt(w[2], w[3], 0x0051), 0x5410);  // byte j: bf16 hi byte of element 2j
  const uint32_t odd = prmt(prmt(w[0], w[1], 0x0073), prmt(w[2], w[3], 0x0073), 0x5410);   // element 2j+1
  return kHiFirst ? (even & 0x80808080u) | ((odd >> 4) & 0x08080808u)
                  : ((even >> 4) & 0x08080808u) | (odd & 0x80808080u);
}

template <bool kHiFirst>
__device__ __forceinline__ uint32_t pack_pair(uint32_t q0, uint32_t q1) {
  return kHiFirst ? ((q0 << 4) | q1) : ((q1 << 4) | q0);
}

template <bool kHiFirst, bool kMaySaturate>
__device__ __forceinline__ void quantize_magnitudes(const float (&xf)[kBlock], float e, uint32_t (&packed)[2]) {
#pragma unroll
  for (int i = 0; i < kBlock; i += 2) {
    const uint32_t q0 = detail::e2m1_rn_sat_abs_bits<kMaySaturate>(__float_as_uint(fmul_abs_rn_ftz(e, xf[i])));
    const uint32_t q1 = detail::e2m1_rn_sat_abs_bits<kMaySaturate>(__float_as_uint(fmul_abs_rn_ftz(e, xf[i + 1])));
    packed[i / 8] |= pack_pair<kHiFirst>(q0, q1) << (4 * (i % 8));
  }
}

template <bool kHiFirst>
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const uint32_t b = blockIdx.x * kThreads + threadIdx.x;  // 32-bit: the launcher checks the size
  if (b >= p.blocks) return;
  const uint32_t r = detail::fast_div(b, p.div_sf_cols), c = b - r * p.sf_cols;
  const uint32_t k0 = c * kBlock;

  uint32_t w[8];  // 16 bf16 patterns, element 2j in the low half of w[j]
  if (p.vec_ok && r < p.rows && k0 + kBlock <= p.cols) {
    const uint4* src = reinterpret_cast<const uint4*>(p.x + static_cast<int64_t>(r) * p.cols + k0);
    const uint4 v0 = __ldg(src), v1 = __ldg(src + 1);
    w[0] = v0.x; w[1] = v0.y; w[2] = v0.z; w[3] = v0.w; w[4] = v1.x; w[5] = v1.y; w[6] = v1.z; w[7] = v1.w;
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t k = k0 + 2 * j;
      const uint32_t lo = (r < p.rows && k < p.cols) ? p.x[static_cast<int64_t>(r) * p.cols + k] : 0u;
      const uint32_t hi = (r < p.rows && k + 1 < p.cols) ? p.x[static_cast<int64_t>(r) * p.cols + k + 1] : 0u;
      w[j] = lo | (hi << 16);
    }
  }
  float xf[kBlock];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    xf[2 * j] = __uint_as_float(w[j] << 16);
    xf[2 * j + 1] = __uint_as_float(w[j] & 0xFFFF0000u);
  }

  // step 1: amax of |x|, NaN ignored
  uint32_t m2 = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) m2 = max_u16x2(m2, w[j] & 0x7FFF7FFFu);
  const uint32_t m = max(m2 & 0xFFFFu, m2 >> 16);
  const bool special = m >= 0x7F80u;  // an Inf or NaN in the block
  float amax = bf16_to_f32(static_cast<uint16_t>(m));
  if (special) {
    amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kBlock; ++i) amax = fmaxf(amax, fabsf(xf[i]));  // max.f32 ignores NaN
  }
  const BlockEncoding enc = comfy_block_encoding(amax, p.s, rcp_approx_ftz(p.s));  // steps 2-6
  const float e = enc.e;
  const uint8_t sf = enc.sf;

  uint32_t packed[2] = {0, 0};
  if (!special) {
    // steps 7-8 on magnitudes: e >= 0 and x finite, so sign(e * x) is x's sign, even for zeros.
    // Products are monotone in |x|: when e * amax < 7 no code can pass 7 (the usual case).
    if (fmul_rn_ftz(e, amax) < 7.0f) quantize_magnitudes<kHiFirst, false>(xf, e, packed);
    else quantize_magnitudes<kHiFirst, true>(xf, e, packed);
    packed[0] |= packed_signs<kHiFirst>(w);
    packed[1] |= packed_signs<kHiFirst>(w + 4);
  } else {
#pragma unroll
    for (int i = 0; i < kBlock; i += 2) {
      const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7: NaN products -> +6
      const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
      packed[i / 8] |= pack_pair<kHiFirst>(q0, q1) << (4 * (i % 8));  // step 8
    }
  }
  reinterpret_cast<uint2*>(p.data)[b] = make_uint2(packed[0], packed[1]);  // row pitch cols16/2 = 8 B per block
  const uint32_t off = p.swizzled ? ((r >> 7) * (p.sf_cols_pad >> 2) + (c >> 2)) * 512 + (r & 31) * 16 +
                                        ((r & 127) >> 5) * 4 + (c & 3)
                                  : r * p.sf_cols + c;
  p.scales[off] = sf;
}

}  // namespace

Status launch_quantize_comfy(const uint16_t* x, int64_t rows, int64_t cols, float s, uint8_t* data,
                             uint8_t* scales, bool hi_first, bool swizzled, cudaStream_t stream) {
  const int64_t rows16 = (rows + 15) / 16 * 16, sf_cols = (cols + 15) / 16, sf_cols_pad = (sf_cols + 3) / 4 * 4;
  const int64_t blocks = rows16 * sf_cols;
  // Every index the kernel forms (blocks, scale offsets, columns) must fit 31 bits.
  if (blocks + kThreads >= (int64_t{1} << 31) || roundup(rows16, 128) * sf_cols_pad >= (int64_t{1} << 31) ||
      cols >= (int64_t{1} << 31))
    return invalid_argument("quantize_gpu: [" + std::to_string(rows) + ", " + std::to_string(cols) +
                            "] is too large for one launch (2^31 blocks or scale bytes)");
  QuantParams p;
  p.x = x;
  p.data = data;
  p.scales = scales;
  p.rows = static_cast<uint32_t>(rows);
  p.cols = static_cast<uint32_t>(cols);
  p.sf_cols = static_cast<uint32_t>(sf_cols);
  p.sf_cols_pad = static_cast<uint32_t>(sf_cols_pad);
  p.blocks = static_cast<uint32_t>(blocks);
  p.s = s;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  p.div_sf_cols = detail::make_fast_div(p.sf_cols);
  const unsigned grid = static_cast<unsigned>((p.blocks + kThreads - 1) / kThreads);
  if (hi_first) sm_any_quantize_comfy<true><<<grid, kThreads, 0, stream>>>(p);
  else sm_any_quantize_comfy<false><<<grid, kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
