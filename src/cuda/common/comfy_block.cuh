// One 16-element block quantized with recipe comfy-cuda (docs/numerics.md §2.1, steps 1-8) from its
// bf16 patterns, as the GPU quantizer (sm_any_quantize_comfy.cu) and the sm90 activation pre-pass
// (sm90_prep_a.cu) both do it. Instruction issue bounds both, so the per-element work is small:
//  - the block's amax as an unsigned max over bf16 patterns two at a time (their order is the
//    value order), which also tells whether the block holds Inf or NaN;
//  - blocks without Inf/NaN (all real data) quantize magnitudes, e * |x|, with the short E2M1
//    rounding of common/e2m1_bits.hpp, and take the eight sign bits of a packed word from the
//    inputs in two byte permutes; blocks with Inf/NaN take the per-element path that reproduces
//    the reference's canonical-NaN rule.
// No arch-specific instruction: built for every target.
#pragma once

#include <cstdint>

#include "../../common/e2m1_bits.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

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
__device__ __forceinline__ void quantize_magnitudes(const float (&xf)[16], float e, uint32_t (&packed)[2]) {
#pragma unroll
  for (int i = 0; i < 16; i += 2) {
    const uint32_t q0 = detail::e2m1_rn_sat_abs_bits<kMaySaturate>(__float_as_uint(fmul_abs_rn_ftz(e, xf[i])));
    const uint32_t q1 = detail::e2m1_rn_sat_abs_bits<kMaySaturate>(__float_as_uint(fmul_abs_rn_ftz(e, xf[i + 1])));
    packed[i / 8] |= pack_pair<kHiFirst>(q0, q1) << (4 * (i % 8));
  }
}

// Steps 1-8 on the block's 16 bf16 patterns w (element 2j in the low half of w[j]; zeros past the
// data, as F.pad gives the reference) with global scale s: its 16 codes into packed (two words,
// OR-ed in: start from zero) and its scale byte, returned.
template <bool kHiFirst>
__device__ __forceinline__ uint8_t comfy_quantize_block(const uint32_t (&w)[8], float s, uint32_t (&packed)[2]) {
  float xf[16];
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
    for (int i = 0; i < 16; ++i) amax = fmaxf(amax, fabsf(xf[i]));  // max.f32 ignores NaN
  }
  const BlockEncoding enc = comfy_block_encoding(amax, s, rcp_approx_ftz(s));  // steps 2-6
  const float e = enc.e;
  if (!special) {
    // steps 7-8 on magnitudes: e >= 0 and x finite, so sign(e * x) is x's sign, even for zeros.
    // Products are monotone in |x|: when e * amax < 7 no code can pass 7 (the usual case).
    if (fmul_rn_ftz(e, amax) < 7.0f) quantize_magnitudes<kHiFirst, false>(xf, e, packed);
    else quantize_magnitudes<kHiFirst, true>(xf, e, packed);
    packed[0] |= packed_signs<kHiFirst>(w);
    packed[1] |= packed_signs<kHiFirst>(w + 4);
  } else {
#pragma unroll
    for (int i = 0; i < 16; i += 2) {
      const uint32_t q0 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i]));      // step 7: NaN products -> +6
      const uint32_t q1 = e2m1_rn_sat(fmul_rn_ftz(e, xf[i + 1]));
      packed[i / 8] |= pack_pair<kHiFirst>(q0, q1) << (4 * (i % 8));  // step 8
    }
  }
  return enc.sf;
}

}  // namespace nvfp4::cuda
