// The fast MMA model and the GEMM oracle against the independent reference on random inputs,
// adversarial scales and odd shapes (docs/numerics.md §3, §4).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

namespace {
uint32_t canon(float f) { return std::isnan(f) ? 0x7FFFFFFFu : f32_bits(f); }

// Random NVFP4 tensor with the given scale byte range; some rows and groups all zero.
Tensor random_tensor(int64_t rows, int64_t cols, std::mt19937& rng, int sf_lo, int sf_hi, NibbleOrder o) {
  const Geometry g = Geometry::of(rows, cols);
  std::vector<uint8_t> data(g.data_bytes());
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (int64_t r = 0; r < g.rows16; ++r)
    for (int64_t k = cols; k < g.cols16; ++k) {  // zero padding past the logical columns
      uint8_t& b = data[r * g.row_bytes() + k / 2];
      b &= ((k % 2 == 0) == (o == NibbleOrder::kHiFirst)) ? 0x0F : 0xF0;
    }
  if (rows > 3) std::fill(data.begin() + 3 * g.row_bytes(), data.begin() + 4 * g.row_bytes(), 0);  // a zero row
  std::vector<uint8_t> sf(g.rows16 * g.sf_cols);
  std::uniform_int_distribution<int> d(sf_lo, sf_hi);
  for (auto& b : sf) b = static_cast<uint8_t>(d(rng));
  auto t = Tensor::make(rows, cols, o, ScaleLayout::kLinear, 1.0f, std::move(data), std::move(sf));
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.value();
}
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

TEST(HopperFastPath, WhereItsConditionsHoldAddRzOfTheExactChunkSumIsTheModel) {
  std::mt19937 rng(77);
  int64_t fast = 0;
  // Narrow scale bands (the path applies often) and full-range scales (it rarely does).
  for (auto [lo, hi] : {std::pair<int, int>{0x30, 0x3F}, {0x20, 0x50}, {0x00, 0x7E}}) {
    const Tensor A = random_tensor(24, 1024, rng, lo, hi, NibbleOrder::kHiFirst);
    const Tensor W = random_tensor(40, 1024, rng, lo, hi, NibbleOrder::kHiFirst);
    auto s = hopper_fastpath_stats(A, W, sample_coords(24, 40, 960, 1));
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    EXPECT_EQ(s->steps, 960 * 16);
    EXPECT_EQ(s->fast_mismatches, 0) << lo << ".." << hi;
    fast += s->fast;
  }
  EXPECT_GT(fast, 1000);
  // The MiniMax-like synthetic inputs: most steps qualify, none disagrees.
  auto p = prepare_layer(LinearShape{"fc2_like", 64, 14336}, 16, 1234, "");
  ASSERT_TRUE(p.is_ok());
  auto s = hopper_fastpath_stats(p->a, p->w, sample_coords(16, 64, 256, 2));
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->fast_mismatches, 0);
  EXPECT_GT(s->fast, s->steps / 2);
}
