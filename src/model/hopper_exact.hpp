// When a Hopper tensor-core chunk sum may stand in for the §3 model (docs/hopper-exact-path.md).
//
// The sm90 kernel multiplies scale-folded fp16 operands, a' = e2m1(a) * s_a and w' = e2m1(w) * s_w
// (at most 6 significant bits each, so exact in fp16, and every product exact in fp32), with a
// zero-initialised wgmma chain over one k64 chunk, and adds the chunk result CH into the running
// accumulator with one add.rz.f32. That equals the §3 step bit for bit when
//   (E) the chain is exact, CH = T = the exact chunk sum, and
//   (M) §3 truncates nothing, so the step is RZ(acc + T).
// Both are decided here from per-row facts, with bounds that hold for every element they cover:
//   (E) every product of block g is a multiple of 2^(ea_g + eb_g - 8); with L = La + Lb - 8 (La, Lb
//       the smallest scale exponents of the row and the column over blocks with a non-zero scale),
//       every product, every partial sum in any order and any grouping, and T itself are multiples of
//       2^L bounded by S = sum_k |a'_k| |w'_k| <= sum_g Asum_g * 6 * s_w,g. If S < 2^(L + 24) every
//       partial sum is an fp32 number and no input of any step lies more than 24 bits below the
//       step's largest one, so a tensor core that keeps >= 23 bits below its largest input
//       (measured on the H200: 25, docs/hopper-exact-path.md) neither truncates nor rounds.
//       Normalised: F1 = sum_g (Asum_g 2^-La) (6 s_w,g 2^-Lb) < 2^16.
//   (M) §3 keeps a block term whole when e_max - e_g <= 27 and the accumulator whole when
//       e_max - e_acc <= 12. With Ha, Hb the largest scale exponents: (Ha - La) + (Hb - Lb) <= 27,
//       |acc| < 2^(La + Lb + 27) (so e_acc - e_g <= 27 for every block) and |acc| >= 2^(Ha + Hb - 12)
//       (so e_max - e_acc <= 12), or acc == 0 (the zero rule gives c exponent -139). Zero-rule groups
//       only lower e_max, so using every block with a non-zero scale is safe.
// A NaN scale sends the element to the model (canonical NaN). A row or column whose four scales
// are all zero makes T = 0 and the step the identity: always fast.
//
// The same functions run in the CPU counterpart (src/model/hopper_exact.cpp) and on the GPU.
#pragma once
#include <cstdint>

#include "mma_step.hpp"

namespace nvfp4::hopper {

constexpr int kNoScale = 1000;          // lo of a row with no non-zero scale in the chunk
constexpr float kChainLimit = 65536.0f; // 2^16: F1 bound, 2^(24 - 8)
constexpr int kBlockWindow = 27;        // §3: e_max - e_g <= 27 keeps a block term whole
constexpr int kAccWindow = 12;          // §3: e_max - e_acc <= 12 keeps the accumulator whole

// 2^e as an fp32 pattern, e in [-126, 127]
NVFP4_HD float pow2f(int e) { return model::from_bits(static_cast<uint32_t>(e + 127) << 23); }

// Value of a UE4M3 scale byte (sign ignored; not for NaN bytes): sig/8 * 2^exp, exact in fp32.
NVFP4_HD float scale_value(uint8_t b) {
  const model::ScaleParts p = model::decode_scale(b);
  return static_cast<float>(p.sig) * pow2f(p.exp - 3);
}

// What the checks need of one operand row (an activation token or a weight row) in one k64 chunk.
struct RowChunk {
  float mag[4];   // activation: Asum_g * 2^-lo (Asum_g = sum of |a'| of block g); weight: 6 * s_g * 2^-lo
  int lo, hi;     // smallest / largest §3 scale exponent over blocks with a non-zero scale
  bool nan;       // a NaN scale byte
};

// Exponent range of four scale bytes; lo = kNoScale when all four are zero.
NVFP4_HD void scale_range(uint32_t sf4, int& lo, int& hi, bool& nan) {
  lo = kNoScale;
  hi = -kNoScale;
  nan = false;
  for (int g = 0; g < 4; ++g) {
    const uint8_t b = static_cast<uint8_t>(sf4 >> (8 * g));
    if ((b & 0x7F) == 0x7F) nan = true;
    if ((b & 0x7F) == 0) continue;
    const int e = model::decode_scale(b).exp;
    lo = e < lo ? e : lo;
    hi = e > hi ? e : hi;
  }
}

// Activation row: asum[g] = exact sum of |a'_k| over block g (an fp32 number: <= 12 significant bits).
NVFP4_HD RowChunk activation_chunk(uint32_t sf4, const float asum[4]) {
  RowChunk r;
  scale_range(sf4, r.lo, r.hi, r.nan);
  const float inv = r.lo == kNoScale || r.nan ? 0.0f : pow2f(-r.lo);
  for (int g = 0; g < 4; ++g) r.mag[g] = asum[g] * inv;  // exact: a power-of-two scaling
  return r;
}

// Weight row: |w'_k| <= 6 * s_g, so 6 * s_g bounds every element of block g.
NVFP4_HD RowChunk weight_chunk(uint32_t sf4) {
  RowChunk r;
  scale_range(sf4, r.lo, r.hi, r.nan);
  const float inv = r.lo == kNoScale || r.nan ? 0.0f : pow2f(-r.lo);
  for (int g = 0; g < 4; ++g) {
    const uint8_t b = static_cast<uint8_t>(sf4 >> (8 * g));
    r.mag[g] = (b & 0x7F) == 0 || (b & 0x7F) == 0x7F ? 0.0f : 6.0f * scale_value(b) * inv;  // exact
  }
  return r;
}

// F1 = sum_g a.mag[g] * w.mag[g], rounded up (so "F1 < 2^16" never passes a sum that is not).
NVFP4_HD float chain_bound(const float amag[4], const float wmag[4]) {
#if defined(__CUDA_ARCH__)
  float s = __fmul_ru(amag[0], wmag[0]);
  s = __fmaf_ru(amag[1], wmag[1], s);
  s = __fmaf_ru(amag[2], wmag[2], s);
  s = __fmaf_ru(amag[3], wmag[3], s);
  return s;
#else
  // Each product has <= 19 significant bits and the four lie within 2^60 of each other in the
  // cases that can pass, so double sums them exactly; rounding to float upward keeps the bound.
  double s = 0;
  for (int g = 0; g < 4; ++g) s += static_cast<double>(amag[g]) * static_cast<double>(wmag[g]);
  const float f = static_cast<float>(s);
  return static_cast<double>(f) < s ? __builtin_nextafterf(f, 3.0e38f) : f;
#endif
}

// (E) and (M) for one element whose accumulator is acc (before the step).
NVFP4_HD bool step_is_fast(const RowChunk& a, const RowChunk& w, float acc) {
  if (a.nan || w.nan) return false;
  if (a.lo == kNoScale || w.lo == kNoScale) return true;  // every product is zero: T = 0
  if (!(chain_bound(a.mag, w.mag) < kChainLimit)) return false;
  if ((a.hi - a.lo) + (w.hi - w.lo) > kBlockWindow) return false;
  const float m = model::from_bits(model::as_bits(acc) & 0x7FFFFFFFu);
  if (m == 0.0f) return true;
  return m >= pow2f(a.hi + w.hi - kAccWindow) && m < pow2f(a.lo + w.lo + kBlockWindow);
}

// The same test for a group of activation rows at once (the tokens one GPU thread holds): mag and
// hi are maxima, lo the minimum, spread the largest hi - lo, over rows with a non-zero scale.
struct RowGroup {
  float mag[4];
  int lo, hi, spread;
  int lo_max;  // the largest lo: |T| of every row in the group is below F1 * 2^(lo_max + w.lo)
  bool nan;
};
NVFP4_HD void group_init(RowGroup& g) {
  for (float& m : g.mag) m = 0.0f;
  g.lo = kNoScale;
  g.hi = -kNoScale;
  g.spread = 0;
  g.lo_max = -kNoScale;
  g.nan = false;
}
NVFP4_HD void group_add(RowGroup& g, const RowChunk& r) {
  g.nan = g.nan || r.nan;
  if (r.lo == kNoScale) return;
  for (int i = 0; i < 4; ++i) g.mag[i] = r.mag[i] > g.mag[i] ? r.mag[i] : g.mag[i];
  g.lo = r.lo < g.lo ? r.lo : g.lo;
  g.hi = r.hi > g.hi ? r.hi : g.hi;
  g.spread = r.hi - r.lo > g.spread ? r.hi - r.lo : g.spread;
  g.lo_max = r.lo > g.lo_max ? r.lo : g.lo_max;
}
// acc_min: the smallest |acc| over the group's elements in weight row w (a zero fails here: it may
// be a legitimately zero accumulator, which step_is_fast accepts per element). acc_bound: an upper
// bound of every |acc| in the group (group_acc_bound below, accumulated over the chunks so far).
// The test in two halves, so a kernel can do the part that needs no accumulator while the tensor
// cores still work on the previous chunk: group_prepare, then group_final with the accumulators.
struct GroupVerdict {
  bool pre_ok;     // chain bound, block window, no NaN
  bool trivial;    // every product is zero
  float acc_lo, acc_hi;  // the accumulator must lie in [acc_lo, acc_hi) (or every element be covered otherwise)
};
NVFP4_HD GroupVerdict group_prepare(const RowGroup& a, const RowChunk& w) {
  GroupVerdict v{false, false, 0.0f, 0.0f};
  if (a.nan || w.nan) return v;
  if (a.lo == kNoScale || w.lo == kNoScale) {
    v.pre_ok = v.trivial = true;
    return v;
  }
  v.pre_ok = chain_bound(a.mag, w.mag) < kChainLimit && a.spread + (w.hi - w.lo) <= kBlockWindow;
  v.acc_lo = pow2f(a.hi + w.hi - kAccWindow);
  v.acc_hi = pow2f(a.lo + w.lo + kBlockWindow);
  return v;
}
NVFP4_HD bool group_final(const GroupVerdict& v, float acc_min, float acc_bound) {
  return v.pre_ok && (v.trivial || (acc_min >= v.acc_lo && acc_bound < v.acc_hi));
}
NVFP4_HD bool group_is_fast(const RowGroup& a, const RowChunk& w, float acc_min, float acc_bound) {
  return group_final(group_prepare(a, w), acc_min, acc_bound);
}
// How much one chunk can move any accumulator of the group: |T| <= sum_k |a'_k||w'_k|
// <= F1(row) 2^(La(row) + Lb) <= F1(group) 2^(lo_max + Lb), rounded up. RZ steps and §3's
// truncations toward zero only shrink magnitudes, so the running sum bounds every |acc|.
NVFP4_HD float group_acc_bound(const RowGroup& a, const RowChunk& w) {
  if (a.lo == kNoScale || w.lo == kNoScale) return 0.0f;
  const float f1 = chain_bound(a.mag, w.mag);
  const int e = a.lo_max + w.lo;  // in [-12, 16]
#if defined(__CUDA_ARCH__)
  return __fmul_ru(f1, pow2f(e));
#else
  return f1 * pow2f(e);  // a power-of-two scaling: exact (or +Inf, which fails every later test)
#endif
}

}  // namespace nvfp4::hopper
