// The fast MMA model and the GEMM oracle against the independent reference on random inputs,
// adversarial scales and odd shapes (docs/numerics.md §3, §4).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"
#include "random_tensor.hpp"

using namespace nvfp4;
using nvfp4::testing::random_tensor;

namespace {
uint32_t canon(float f) { return std::isnan(f) ? 0x7FFFFFFFu : f32_bits(f); }

}  // namespace

TEST(MmaModel, FastEqualsReferenceOnRandomBitPatterns) {
  std::mt19937 rng(2024);
  uint8_t a[64], b[64], sa[4], sb[4];
  int64_t checked = 0;
  for (int iter = 0; iter < 60000; ++iter) {
    for (auto& v : a) v = rng() & 0xF;
    for (auto& v : b) v = rng() & 0xF;
    // Mix of full-range, narrow-band and zeroed groups/scales.
    const int mode = iter % 4;
    for (int g = 0; g < 4; ++g) {
      sa[g] = static_cast<uint8_t>(mode == 1 ? 0x30 + rng() % 16 : rng());
      sb[g] = static_cast<uint8_t>(mode == 1 ? 0x30 + rng() % 16 : rng());
      if (mode == 2 && rng() % 3 == 0) std::fill(a + 16 * g, a + 16 * g + 16, 0);
      if (mode == 3 && rng() % 4 == 0) sa[g] = 0;
    }
    float c;
    const uint32_t cb = rng();
    switch (iter % 5) {
      case 0: c = f32_from_bits(cb); break;                              // anything, NaN/Inf included
      case 1: c = 0.0f; break;
      case 2: c = -0.0f; break;
      case 3: c = f32_from_bits(cb & 0x807FFFFFu); break;                // subnormal
      default: c = std::ldexp(static_cast<float>(static_cast<int32_t>(cb) >> 8), static_cast<int>(rng() % 40) - 20);
    }
    const float f = mma_element(a, b, sa, sb, c), r = reference_mma_element(a, b, sa, sb, c);
    ASSERT_EQ(canon(f), canon(r)) << "iter " << iter;
    ++checked;
  }
  EXPECT_EQ(checked, 60000);
}

TEST(GemmOracle, EqualsPerElementChainOnOddShapes) {
  std::mt19937 rng(99);
  struct S { int64_t m, n, k; int lo, hi; } shapes[] = {
      {1, 1, 16, 0x30, 0x40}, {17, 9, 200, 0x28, 0x48}, {33, 70, 1000, 0x00, 0x7E}, {5, 130, 64, 0x01, 0x10}, {16, 24, 4096, 0x30, 0x3F}};
  for (const S& s : shapes) {
    const Tensor A = random_tensor(s.m, s.k, rng, s.lo, s.hi, NibbleOrder::kHiFirst);
    const Tensor W = random_tensor(s.n, s.k, rng, s.lo, s.hi, NibbleOrder::kLoFirst);  // mixed orders on purpose
    GemmSpec spec;
    spec.alpha = 0.37f;
    auto res = gemm_oracle(A, W, spec);
    ASSERT_TRUE(res.is_ok()) << res.status().message();
    std::vector<Coord> all;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) all.push_back({i, j});
    auto ref = gemm_reference_at(A, W, all);
    ASSERT_TRUE(ref.is_ok());
    for (size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(canon((*res)[0].raw[i]), canon((*ref)[i])) << s.m << "x" << s.n << "x" << s.k << " at " << i;
      ASSERT_EQ((*res)[0].out[i], bf16_rn(0.37f * (*ref)[i]));
    }
    // The sampled path gives the same values as the full one.
    const auto at = sample_coords(s.m, s.n, 50, 3);
    auto part = gemm_oracle_at(A, W, spec, at);
    ASSERT_TRUE(part.is_ok());
    for (size_t i = 0; i < at.size(); ++i)
      EXPECT_EQ(canon((*part)[0].raw[i]), canon((*res)[0].raw[at[i].m * s.n + at[i].n]));
  }
}

TEST(GemmOracle, RefusesMismatchedOperands) {
  std::mt19937 rng(1);
  const Tensor A = random_tensor(16, 64, rng, 0x30, 0x38, NibbleOrder::kHiFirst);
  const Tensor W = random_tensor(16, 128, rng, 0x30, 0x38, NibbleOrder::kHiFirst);
  auto r = gemm_oracle(A, W, GemmSpec{});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("K mismatch"), std::string::npos);
  Tensor bad = A;
  bad.scales.pop_back();
  EXPECT_FALSE(gemm_oracle(bad, A, GemmSpec{}).is_ok());
  EXPECT_FALSE(gemm_oracle_at(A, A, GemmSpec{}, {{16, 0}}).is_ok());
}

TEST(SampleCoords, CornersFirstNoRepeatsDeterministic) {
  const auto a = sample_coords(128, 5376, 1000, 5), b = sample_coords(128, 5376, 1000, 5);
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(a[0].m, 0);
  EXPECT_EQ(a[3].m, 127);
  EXPECT_EQ(a[3].n, 5375);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].m == b[i].m && a[i].n == b[i].n);
  EXPECT_EQ(sample_coords(3, 4, 100, 1).size(), 12u);
}

TEST(HopperFastPath, AddRzMatchesTheRoundingModeOnRandomPairs) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> sh(0, 40);
  for (int i = 0; i < 200000; ++i) {
    const float x = f32_from_bits(bits(rng) & 0xBFFFFFFFu);  // finite
    uint32_t yb = bits(rng) & 0xBFFFFFFFu;
    if (i % 2) yb = (f32_bits(x) & 0xFF800000u) - (static_cast<uint32_t>(sh(rng)) << 23) + (yb & 0x807FFFFFu);  // close exponents
    const float y = f32_from_bits(yb);
    // long double (64-bit significand) holds the exact sum only when the exponents are close
    if (!std::isfinite(y) || x == 0.0f || y == 0.0f || std::abs(std::ilogb(x) - std::ilogb(y)) > 38) continue;
    const long double exact = static_cast<long double>(x) + static_cast<long double>(y);
    const float r = add_rz_f32(x, y);
    // RZ: |r| <= |exact| and no fp32 number lies strictly between r and exact.
    ASSERT_LE(std::fabs(static_cast<long double>(r)), std::fabs(exact) + 0.0L) << x << " + " << y;
    if (std::isfinite(r) && std::fabs(r) < 3.4e38f && exact != r) {
      const float next = std::nextafter(r, exact > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
      ASSERT_GT(std::fabs(static_cast<long double>(next)), std::fabs(exact)) << x << " + " << y;
    }
  }
  EXPECT_EQ(f32_bits(add_rz_f32(1.0f, -1.0f)), 0u);  // exact cancellation is +0
  EXPECT_EQ(f32_bits(add_rz_f32(-0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(add_rz_f32(3.4e38f, 3.4e38f), 3.40282347e38f);  // RZ saturates
  // Far apart: the tiny operand only decides whether the magnitude steps down one ulp.
  EXPECT_EQ(add_rz_f32(1.0e35f, -1.0e-36f), std::nextafter(1.0e35f, 0.0f));
  EXPECT_EQ(add_rz_f32(1.0e35f, 1.0e-36f), 1.0e35f);
  EXPECT_EQ(add_rz_f32(-1.0f, 0x1p-80f), std::nextafter(-1.0f, 0.0f));
}

TEST(HopperFastPath, CpuCounterpartOfTheSm90KernelEqualsTheOracle) {
  std::mt19937 rng(77);
  int64_t fast = 0, tile_fast = 0;
  // Narrow scale bands (the path applies often), wide ones and full-range scales (it rarely does),
  // with NaN scales, zero blocks and subnormal scales in the full range.
  for (auto [lo, hi] : {std::pair<int, int>{0x30, 0x3F}, {0x20, 0x50}, {0x00, 0x7F}}) {
    const Tensor A = random_tensor(21, 960, rng, lo, hi, NibbleOrder::kHiFirst);
    const Tensor W = random_tensor(35, 960, rng, lo, hi, NibbleOrder::kLoFirst);
    GemmSpec spec;
    auto o = gemm_oracle(A, W, spec);
    ASSERT_TRUE(o.is_ok());
    // The kernel's tiles (warpgroup: 64 rows x 128 tokens, thread group: 2 rows x 32 tokens) and an
    // odd one: tile tests on partial tiles.
    for (auto [tokens, rows] : {std::pair<int, int>{128, 64}, {32, 2}, {8, 5}}) {
      FastPathStats st;
      auto h = gemm_hopper_cpu(A, W, &st, tokens, rows);
      ASSERT_TRUE(h.is_ok());
      for (size_t i = 0; i < h->size(); ++i)
        ASSERT_EQ(f32_bits((*h)[i]), f32_bits((*o)[0].raw[i])) << i << " band " << lo << " tile " << tokens << "x" << rows;
      EXPECT_EQ(st.fast_mismatches, 0);
      fast += st.fast;
      tile_fast += st.tile_fast;
    }
  }
  EXPECT_GT(fast, 1000);
  EXPECT_GT(tile_fast, 10);
}

TEST(HopperFastPath, TestsAreSoundAndCommonOnRealisticActivations) {
  // Outlier-channel activations (the LLM/DiT case): the per-element test passes almost always,
  // and wherever it passes the emulated Hopper chain (23 or 25 bits) equals the exact sum.
  for (auto kind : {ActivationKind::kOutlierChannels, ActivationKind::kNormal, ActivationKind::kMiniMax}) {
    const auto x = synthetic_activation(40, 1408, 3, kind);
    const auto w = synthetic_weight(24, 1408, 4);
    QuantizeOptions o;
    o.pad = true;
    auto A = quantize(x.data(), 40, 1408, global_scale_dynamic(x.data(), x.size()), o);
    auto W = quantize(w.data(), 24, 1408, global_scale_dynamic(w.data(), w.size()), o);
    ASSERT_TRUE(A.is_ok() && W.is_ok());
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < 24; ++i) rows.push_back(i);
    auto s = hopper_fastpath_stats(A.value(), W.value(), rows, 32, 8);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    EXPECT_EQ(s->steps, 40 * 24 * 22);
    EXPECT_EQ(s->fast_mismatches, 0);
    EXPECT_EQ(s->chain_mismatches, 0);
    EXPECT_EQ(s->tile_unsound, 0);
    EXPECT_GT(s->tile_steps, 0);
    EXPECT_GT(s->chain_checked, 0);
    if (kind != ActivationKind::kMiniMax) EXPECT_GT(s->fast, s->steps * 99 / 100) << static_cast<int>(kind);
  }
}
