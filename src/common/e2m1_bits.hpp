// e2m1_rn_sat (docs/numerics.md §1) as integer arithmetic on an fp32 pattern, shared by the GPU
// quantizer and the host test that checks it against the threshold definition:
//  - |v| >= 1: E2M1's normal codes are fp32's exponent and top mantissa bit; adding the rebias,
//    2^21 - 1 and the kept bit's parity rounds to nearest-even in one integer add (then >> 22;
//    0xC11FFFFF = -(126 << 23) + 2^21 - 1 modulo 2^32); past 6, +Inf and NaN patterns the result
//    exceeds 7 and min() saturates;
//  - |v| < 1: codes 0, 1, 2 are rint(2|v|): the bits of fma(|v|, 2, 2^23) minus those of 2^23
//    (2|v| is exact, so the fma rounds once, to nearest-even).
// A NaN of either sign gets code 7 with the input's sign bit; the comfy-cuda product feeding it
// (mul.ftz) only ever yields the positive canonical NaN, hence +6 as the reference writes it.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define NVFP4_E2M1_HD __host__ __device__ __forceinline__
#else
#define NVFP4_E2M1_HD inline
#endif

namespace nvfp4::detail {

NVFP4_E2M1_HD uint32_t e2m1_rn_sat_bits(uint32_t b) {
  const uint32_t a = b & 0x7FFFFFFFu;
  uint32_t hi = (a + 0xC11FFFFFu + ((a >> 22) & 1u)) >> 22;
  hi = hi < 7u ? hi : 7u;
#if defined(__CUDA_ARCH__)
  const uint32_t lo = __float_as_uint(__fmaf_rn(__uint_as_float(a), 2.0f, 8388608.0f)) - 0x4B000000u;
#else
  float af;
  std::memcpy(&af, &a, 4);
  const float r = af * 2.0f + 8388608.0f;  // 2|v| is exact, so this rounds once, like the fma (no contraction: -ffp-contract=off)
  uint32_t lo;
  std::memcpy(&lo, &r, 4);
  lo -= 0x4B000000u;
#endif
  return (a < 0x3F800000u ? lo : hi) | ((b >> 28) & 0x8u);
}

// The unsigned code of a magnitude pattern a (sign bit clear; NaN patterns give 7). Fewer steps:
// the E2M1 grid has spacing 1/k with k = 2 on [0, 2), 1 on [2, 4), 1/2 from 4 on, i.e.
// k = 2^(128 - e) with e the fp32 biased exponent clamped to [127, 129]; rint(a * k) comes from
// fma(a, k, 2^23) (a * k is exact, so one rounding, to nearest-even), and the code is
// rint(a * k) + 2 (e - 127), saturated at 7. Ties go to the even grid index, which is the even code.
// kMaySaturate = false is the same function for a < 7 (no code above 7 can arise, e <= 129): the
// quantizer checks that once per block and drops the upper clamp and the saturation.
template <bool kMaySaturate = true>
NVFP4_E2M1_HD uint32_t e2m1_rn_sat_abs_bits(uint32_t a) {
  uint32_t e = a >> 23;
  e = e < 127u ? 127u : e;
  if (kMaySaturate) e = e > 129u ? 129u : e;
#if defined(__CUDA_ARCH__)
  const float r = __fmaf_rn(__uint_as_float(a), __uint_as_float((255u - e) << 23), 8388608.0f);
  const uint32_t rb = __float_as_uint(r);
#else
  float af, k;
  const uint32_t kb = (255u - e) << 23;
  std::memcpy(&af, &a, 4);
  std::memcpy(&k, &kb, 4);
  const float r = af * k + 8388608.0f;  // a * k exact: the same single rounding as the fma
  uint32_t rb;
  std::memcpy(&rb, &r, 4);
#endif
  const uint32_t c = rb - 0x4B000000u + 2u * (e - 127u);
  return kMaySaturate ? (c < 7u ? c : 7u) : c;
}

}  // namespace nvfp4::detail
