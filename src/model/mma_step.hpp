// One output element of the SM120/SM121 block-scaled MMA
//   mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
// given the four exact 16-element group sums. This is the model of docs/numerics.md §3 (MMA-Sim's,
// with the probed zero rule) in integer arithmetic, shared by the CPU oracle and the GPU kernels
// so every backend runs the very same rounding steps.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define NVFP4_HD __host__ __device__ __forceinline__
#else
#define NVFP4_HD inline
#endif

namespace nvfp4::model {

constexpr int kEZero = -139;       // §3 step 3: exponent of an all-zero group, a zero scale product, c = ±0
constexpr int kFracBits = 35;      // §3 step 5: terms truncated to 35 fractional bits below 2^e_max
constexpr uint32_t kCanonicalNaN = 0x7FFFFFFFu;  // §3 step 8

struct ScaleParts {
  int32_t sig;   // significand * 8: 8..15 for normal, 0..7 for subnormal (value sig/8 * 2^exp)
  int32_t exp;   // unbiased; -6 for subnormals
  bool nan;
};

// UE4M3, sign bit ignored (§1, §3 step 2).
NVFP4_HD ScaleParts decode_scale(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  ScaleParts p;
  p.nan = (b & 0x7F) == 0x7F;
  p.sig = e == 0 ? m : 8 + m;
  p.exp = e == 0 ? -6 : e - 7;
  return p;
}

NVFP4_HD int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

NVFP4_HD uint32_t as_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
#endif
}
NVFP4_HD float from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

// mag * 2^scale_exp with sign, rounded toward zero to fp32: subnormals kept on the 2^-149 grid,
// a leading bit at 2^128 or above is Inf (§3 step 7). Bit-building only: no host FPU mode matters.
NVFP4_HD float rz_to_f32(bool neg, uint64_t mag, int scale_exp) {
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (mag == 0) return from_bits(0);  // an exact zero sum is +0 (model rule)
  const int len = 64 - clz64(mag);
  const int lead = len - 1 + scale_exp;
  if (lead >= 128) return from_bits(sign | 0x7F800000u);
  if (lead >= -126) {
    // trunc: keep the 24 leading bits
    const uint64_t m24 = len > 24 ? (mag >> (len - 24)) : (mag << (24 - len));
    return from_bits(sign | (static_cast<uint32_t>(lead + 127) << 23) | (static_cast<uint32_t>(m24) & 0x7FFFFFu));
  }
  // Subnormal: units of 2^-149, truncated.
  const int sh = scale_exp + 149;
  const uint64_t q = sh >= 0 ? (mag << sh) : (-sh >= 64 ? 0 : (mag >> -sh));
  return from_bits(sign | static_cast<uint32_t>(q));
}

// trunc toward zero of v * 2^-sh for sh >= 0 (sign-magnitude, §3 step 5)
NVFP4_HD int64_t trunc_shift(int64_t v, int sh) {
  if (sh >= 63) return 0;
  return v >= 0 ? (v >> sh) : -((-v) >> sh);
}

// §3 steps 4-8 once the four group terms are known: term g is sig[g] * 2^(e[g] - 8) (e[g] already
// kEZero for an all-zero group or a zero scale product), nan says a scale was NaN. Shared by
// mma_element below and by kernels that obtain the group sums another way (the Hopper slow path
// has them as exact fp32 sums of scale-folded products).
NVFP4_HD float mma_combine(const int64_t sig_g[4], const int e_g[4], bool nan, float c) {
  const uint32_t cb = as_bits(c);
  const uint32_t c_abs = cb & 0x7FFFFFFFu;
  if (nan || c_abs > 0x7F800000u) return from_bits(kCanonicalNaN);
  if (c_abs == 0x7F800000u) return c;  // Inf c propagates
  int e[5];
  int64_t sig[5];  // group terms in units of 2^(e_g - 8), c in 2^(e_c - 23)
  for (int g = 0; g < 4; ++g) {
    e[g] = e_g[g];
    sig[g] = sig_g[g];
  }
  // c: significand in [1,2) (subnormal: exponent -126, significand < 1), §3 step 4
  const int c_biased = static_cast<int>(c_abs >> 23);
  if (c_abs == 0) {
    e[4] = kEZero;
    sig[4] = 0;
  } else {
    e[4] = c_biased == 0 ? -126 : c_biased - 127;
    const int64_t m = c_biased == 0 ? (c_abs & 0x7FFFFF) : ((c_abs & 0x7FFFFF) | 0x800000);
    sig[4] = (cb >> 31) ? -m : m;
  }
  int e_max = e[0];
  for (int i = 1; i < 5; ++i) e_max = e[i] > e_max ? e[i] : e_max;
  // Fixed point with 35 fractional bits below 2^e_max. A group term is sig * 2^(e_g - 8), i.e.
  // sig * 2^(27 - (e_max - e_g)) units; c is sig * 2^(12 - (e_max - e_c)) units.
  int64_t sum = 0;
  for (int g = 0; g < 4; ++g) {
    const int d = e_max - e[g];
    sum += d <= 27 ? sig[g] * (int64_t{1} << (27 - d)) : trunc_shift(sig[g], d - 27);
  }
  {
    const int d = e_max - e[4];
    sum += d <= 12 ? sig[4] * (int64_t{1} << (12 - d)) : trunc_shift(sig[4], d - 12);
  }
  const bool neg = sum < 0;
  return rz_to_f32(neg, static_cast<uint64_t>(neg ? -sum : sum), e_max - kFracBits);
}

// One MMA output: D = c + sum_g p_g * sa_g * sb_g, following §3 steps 2-8.
//   p4[g]        = 4 * (sum of the 16 e2m1 products of group g): an exact integer, |p4| <= 2304
//   any_prod[g]  = whether group g has a non-zero product (zero rule: all-zero groups get kEZero,
//                  cancelling groups keep their scale exponent)
NVFP4_HD float mma_element(const int32_t p4[4], const bool any_prod[4], const uint8_t sfa[4],
                           const uint8_t sfb[4], float c) {
  bool nan = false;
  int e[4];
  int64_t sig[4];
  for (int g = 0; g < 4; ++g) {
    const ScaleParts a = decode_scale(sfa[g]), b = decode_scale(sfb[g]);
    nan = nan || a.nan || b.nan;
    const int32_t sp = a.sig * b.sig;                    // (ms_a * ms_b) * 64, NOT renormalised
    sig[g] = static_cast<int64_t>(p4[g]) * sp;           // = p_g * ms_a * ms_b * 256
    e[g] = (!any_prod[g] || sp == 0) ? kEZero : a.exp + b.exp;
  }
  return mma_combine(sig, e, nan, c);
}

}  // namespace nvfp4::model
