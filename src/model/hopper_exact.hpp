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

// ---------------------------------------------------------------------------------------------
// The tile test (docs/hopper-exact-path.md, "The tile test"): one decision for a whole tile of the
// kernel (a warp's or warpgroup's weight rows x a block of tokens) from per-tile maxima that the
// weight prepack and the activation pre-pass compute once, so the common chunk costs a few
// instructions per thread instead of a test per element. It proves the same (E) and (M) as
// step_is_fast for every element of the tile, with two changes:
//   - (E) by the normalised bound sum_g max(A_g) max(B_g) < 2^16, or by the absolute one
//     S <= sum_g max(Asum_g) max(6 s_g) < 2^(La + Lb + 16) (either suffices);
//   - the accumulator's lower bound |acc| >= 2^(Ha + Hb - 12) is replaced by its granularity:
//     every accumulator is a multiple of 2^(G - 8) with G the smallest La + Lb of the chunks so far
//     (each step adds multiples of 2^(La + Lb - 8), and an RZ rounding that drops bits leaves a
//     multiple of its own ulp, a larger power of two), so §3 keeps it whole when
//     e_max - 35 <= G - 8, i.e. Ha + Hb - G <= 27. That also covers the block window
//     (Ha + Hb) - (La + Lb) <= 27, since G <= La + Lb. It needs no accumulator at all.
// What remains per thread is |acc| < 2^(La + Lb + 27): an upper bound of its accumulators (a
// running sum of the chunk bounds below, recomputed from the accumulators when it gets too large).
struct TileChunk {
  float mag_n[4];  // max over the tile's rows of RowChunk::mag (each row normalised by its own lo)
  float mag[4];    // max over the rows of the block magnitude bound in value units: activation Asum_g,
                   // weight 6 * s_g (both exact fp32 numbers)
  int lo, hi;      // min lo / max hi over rows with a non-zero scale; kNoScale / -kNoScale when none
  bool nan;
};
NVFP4_HD void tile_init(TileChunk& t) {
  for (int g = 0; g < 4; ++g) t.mag_n[g] = t.mag[g] = 0.0f;
  t.lo = kNoScale;
  t.hi = -kNoScale;
  t.nan = false;
}
// u's rows added to t's: every field is a max, min or or, so rows may be added in any order and in
// groups (the pre-pass merges partial records). A NaN magnitude in u fails its comparison and is
// skipped.
NVFP4_HD void tile_merge(TileChunk& t, const TileChunk& u) {
  t.nan = t.nan || u.nan;
  for (int g = 0; g < 4; ++g) {
    t.mag_n[g] = u.mag_n[g] > t.mag_n[g] ? u.mag_n[g] : t.mag_n[g];
    t.mag[g] = u.mag[g] > t.mag[g] ? u.mag[g] : t.mag[g];
  }
  t.lo = u.lo < t.lo ? u.lo : t.lo;
  t.hi = u.hi > t.hi ? u.hi : t.hi;
}
// One row, mag its block bounds in value units (Asum_g, or 6 * s_g; 0 for NaN scales). A row with
// no non-zero scale adds only its NaN flag.
NVFP4_HD void tile_add(TileChunk& t, const RowChunk& r, const float mag[4]) {
  if (r.lo == kNoScale) {
    t.nan = t.nan || r.nan;
    return;
  }
  TileChunk u;
  for (int g = 0; g < 4; ++g) {
    u.mag_n[g] = r.mag[g];
    u.mag[g] = mag[g];
  }
  u.lo = r.lo;
  u.hi = r.hi;
  u.nan = r.nan;
  tile_merge(t, u);
}
// 6 * s_g per block of a weight row's four scale bytes (0 for zero and NaN scales): exact.
NVFP4_HD void weight_block_bounds(uint32_t sf4, float out[4]) {
  for (int g = 0; g < 4; ++g) {
    const uint8_t b = static_cast<uint8_t>(sf4 >> (8 * g));
    out[g] = (b & 0x7F) == 0 || (b & 0x7F) == 0x7F ? 0.0f : 6.0f * scale_value(b);
  }
}

constexpr int kNoRunLo = 1 << 20;  // the running minimum before any chunk with scales

// The accumulator-free half of the tile test for one chunk. run_lo: the running min of La + Lb over
// the chunks so far (start at kNoRunLo); updated here, also for chunks that fail. acc_shift: the
// kernel keeps its accumulators scaled by 2^acc_shift (exact), so the limit and the increment come
// in those units.
struct TileVerdict {
  bool pre_ok;      // (E) and the truncation windows hold for every element of the tile
  float acc_limit;  // ... provided every |acc| (scaled) is below this
  float inc;        // bound of |T| (scaled) for every element: the running |acc| bound grows by it
};
NVFP4_HD TileVerdict tile_prepare(const TileChunk& a, const TileChunk& w, int& run_lo, int acc_shift) {
  TileVerdict v{false, 0.0f, 0.0f};
  const bool scaled = a.lo != kNoScale && w.lo != kNoScale;
  const int lo = scaled ? a.lo + w.lo : 0;
  if (scaled) run_lo = lo < run_lo ? lo : run_lo;
  if (a.nan || w.nan) {
    v.inc = model::from_bits(0x7F800000u);  // +Inf: every later |acc| bound is recomputed
    return v;
  }
  if (!scaled) {  // every product of the tile is zero: T = 0, the step is the identity
    v.pre_ok = true;
    v.acc_limit = model::from_bits(0x7F800000u);
    return v;
  }
  const float s_bound = chain_bound(a.mag, w.mag);  // >= S and >= |T| of every element, rounded up
  const bool chain = chain_bound(a.mag_n, w.mag_n) < kChainLimit || s_bound < pow2f(lo + 16);
  const bool trunc = a.hi + w.hi - run_lo <= kBlockWindow;
  v.pre_ok = chain && trunc;
  v.acc_limit = pow2f(lo + kBlockWindow + acc_shift);
#if defined(__CUDA_ARCH__)
  v.inc = __fmul_ru(s_bound, pow2f(acc_shift));
#else
  v.inc = s_bound * pow2f(acc_shift);  // a power-of-two scaling of a value >= 2^-20: exact
#endif
  return v;
}

}  // namespace nvfp4::hopper
