// Formats (docs/numerics.md §1): E2M1 / E4M3 rounding, bf16, nibble orders, scale layouts, Tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nvfp4/format.hpp"

using namespace nvfp4;

TEST(E2M1, DecodeTable) {
  const float expect[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(e2m1_decode(c), expect[c]);
    EXPECT_EQ(e2m1_decode(c | 8), -expect[c]);
    EXPECT_EQ(kE2M1Twice[c], static_cast<int>(2 * expect[c]));
  }
  EXPECT_TRUE(std::signbit(e2m1_decode(8)));
}

TEST(E2M1, RoundNearestEvenThresholds) {
  // Each threshold from the spec, on both sides, and the ties that go to the even code.
  struct Case { float v; uint8_t code; } cases[] = {
      {0.25f, 0}, {std::nextafter(0.25f, 1.f), 1}, {0.75f, 2}, {std::nextafter(0.75f, 0.f), 1},
      {1.25f, 2}, {std::nextafter(1.25f, 2.f), 3}, {1.75f, 4}, {std::nextafter(1.75f, 0.f), 3},
      {2.5f, 4}, {std::nextafter(2.5f, 3.f), 5}, {3.5f, 6}, {std::nextafter(3.5f, 0.f), 5},
      {5.0f, 6}, {std::nextafter(5.0f, 6.f), 7}, {6.0f, 7}, {1e30f, 7}, {INFINITY, 7}, {0.0f, 0}};
  for (auto c : cases) {
    EXPECT_EQ(e2m1_rn_sat(c.v), c.code) << c.v;
    EXPECT_EQ(e2m1_rn_sat(-c.v), c.code | 8) << -c.v;
  }
  EXPECT_EQ(e2m1_rn_sat(-0.0f), 0x8);
  EXPECT_EQ(e2m1_rn_sat(-1e-30f), 0x8);
  EXPECT_EQ(e2m1_rn_sat(NAN), 0x7);
}

TEST(E4M3, EveryCodeRoundTripsAndMidpointsTieToEven) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(e4m3_decode(b)));
      continue;
    }
    const float v = e4m3_decode(b);
    EXPECT_EQ(e4m3_rn_sat(v), (b == 0x80) ? 0x80 : b) << b;
    if ((b & 0x7F) < 0x7E) {
      const float next = e4m3_decode(b + 1);
      const float mid = (v + next) / 2;  // exact in fp32
      const uint8_t even = (b & 1) ? b + 1 : b;
      EXPECT_EQ(e4m3_rn_sat(mid), even) << "midpoint after code " << b;
    }
  }
  EXPECT_EQ(e4m3_rn_sat(448.0f), 0x7E);
  EXPECT_EQ(e4m3_rn_sat(464.0f), 0x7E);   // tie between 448 and (NaN-coded) 480: even = 448
  EXPECT_EQ(e4m3_rn_sat(1e9f), 0x7E);     // satfinite
  EXPECT_EQ(e4m3_rn_sat(-1e9f), 0xFE);
  EXPECT_EQ(e4m3_rn_nosat(465.0f), 0x7F); // PyTorch's cast: past 464 is NaN
  EXPECT_EQ(e4m3_rn_nosat(464.0f), 0x7E);
  EXPECT_EQ(e4m3_rn_sat(std::ldexp(1.0f, -10)), 0x00);   // half the smallest subnormal: tie to 0
  EXPECT_EQ(e4m3_rn_sat(std::ldexp(1.5f, -10)), 0x01);
  EXPECT_EQ(ue4m3_decode(0x80 | 0x38), 1.0f);  // sign ignored
}

TEST(Bf16, RoundNearestEven) {
  EXPECT_EQ(bf16_rn(1.0f), 0x3F80);
  EXPECT_EQ(bf16_rn(f32_from_bits(0x3F808000)), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16_rn(f32_from_bits(0x3F818000)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(bf16_rn(f32_from_bits(0x3F808001)), 0x3F81);
  EXPECT_EQ(bf16_rn(f32_from_bits(0x7F7FFFFF)), 0x7F80);  // overflow to Inf
  EXPECT_EQ(bf16_rn(-0.0f), 0x8000);
  EXPECT_EQ(bf16_rn(NAN) & 0x7FC0, 0x7FC0);
}

TEST(Nibbles, OrdersAndSwap) {
  const uint8_t hi = pack_pair(0x3, 0xA, NibbleOrder::kHiFirst);
  const uint8_t lo = pack_pair(0x3, 0xA, NibbleOrder::kLoFirst);
  EXPECT_EQ(hi, 0x3A);
  EXPECT_EQ(lo, 0xA3);
  EXPECT_EQ(swap_nibbles(hi), lo);
  EXPECT_EQ(nibble_get(&hi, 0, NibbleOrder::kHiFirst), 0x3);
  EXPECT_EQ(nibble_get(&hi, 1, NibbleOrder::kHiFirst), 0xA);
  EXPECT_EQ(nibble_get(&lo, 0, NibbleOrder::kLoFirst), 0x3);
  EXPECT_FALSE(parse_nibble_order("middle_first").is_ok());
}

TEST(ScaleLayout, SwizzleFormulaAndRoundTrip) {
  // One 128x4 tile is 512 contiguous bytes; four scales of a row in a 64-wide K chunk are adjacent.
  EXPECT_EQ(swizzled_offset(0, 0, 4), 0);
  EXPECT_EQ(swizzled_offset(0, 3, 4), 3);
  EXPECT_EQ(swizzled_offset(1, 0, 4), 16);
  EXPECT_EQ(swizzled_offset(32, 0, 4), 4);
  EXPECT_EQ(swizzled_offset(127, 3, 4), 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(swizzled_offset(0, 4, 8), 512);
  EXPECT_EQ(swizzled_offset(128, 0, 8), 1024);
  for (auto [r, c] : {std::pair<int64_t, int64_t>{120, 200}, {16, 64}, {300, 5376}, {1, 16}}) {
    const Geometry g = Geometry::of(r, c);
    std::vector<uint8_t> lin(g.rows16 * g.sf_cols);
    std::mt19937 rng(static_cast<unsigned>(r * 7 + c));
    for (auto& b : lin) b = static_cast<uint8_t>(rng() % 0x7F);
    const auto sw = scales_to_swizzled(g, lin.data());
    ASSERT_EQ(static_cast<int64_t>(sw.size()), g.sf_rows_pad * g.sf_cols_pad);
    // Every byte outside the logical scales is zero.
    std::vector<bool> used(sw.size());
    for (int64_t i = 0; i < g.rows16; ++i)
      for (int64_t j = 0; j < g.sf_cols; ++j) used[swizzled_offset(i, j, g.sf_cols_pad)] = true;
    for (size_t i = 0; i < sw.size(); ++i)
      if (!used[i]) ASSERT_EQ(sw[i], 0);
    EXPECT_EQ(scales_to_linear(g, sw.data()), lin);
  }
}

TEST(TensorType, RefusesInconsistentBuffers) {
  const Geometry g = Geometry::of(120, 200);
  EXPECT_EQ(g.rows16, 128);
  EXPECT_EQ(g.cols16, 208);
  auto ok = Tensor::make(120, 200, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, 0.5f,
                         std::vector<uint8_t>(g.data_bytes()), std::vector<uint8_t>(g.scale_bytes(ScaleLayout::kSwizzled128x4)));
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  auto short_data = Tensor::make(120, 200, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, 0.5f,
                                 std::vector<uint8_t>(g.data_bytes() - 1), std::vector<uint8_t>(g.scale_bytes(ScaleLayout::kSwizzled128x4)));
  EXPECT_FALSE(short_data.is_ok());
  EXPECT_NE(short_data.status().message().find("packed data"), std::string::npos);
  auto wrong_layout = Tensor::make(120, 200, NibbleOrder::kHiFirst, ScaleLayout::kLinear, 0.5f,
                                   std::vector<uint8_t>(g.data_bytes()), std::vector<uint8_t>(g.scale_bytes(ScaleLayout::kSwizzled128x4)));
  EXPECT_FALSE(wrong_layout.is_ok());
  auto nan_scale = Tensor::make(120, 200, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, NAN,
                                std::vector<uint8_t>(g.data_bytes()), std::vector<uint8_t>(g.scale_bytes(ScaleLayout::kSwizzled128x4)));
  EXPECT_FALSE(nan_scale.is_ok());
  // Conversion both ways keeps every logical value.
  Tensor t = ok.value();
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i * 37);
  const Tensor u = t.with(NibbleOrder::kLoFirst, ScaleLayout::kLinear);
  for (int64_t r = 0; r < g.rows16; r += 7)
    for (int64_t k = 0; k < g.cols16; ++k) ASSERT_EQ(t.code(r, k), u.code(r, k));
  EXPECT_EQ(u.with(NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4).data, t.data);
}
