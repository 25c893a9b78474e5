// Quantizer properties beyond the golden files: bad input, options, threading, the GPU-arithmetic
// emulations (docs/numerics.md §2).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nvfp4/quant.hpp"
#include "common/cpu_features.hpp"
#include "common/e2m1_bits.hpp"
#include "common/fast_div.hpp"
#include "quant/recipes.hpp"

using namespace nvfp4;

namespace {
std::vector<uint16_t> random_bf16(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<uint16_t> x(n);
  for (auto& v : x) v = bf16_rn(d(rng));
  return x;
}
}  // namespace

TEST(QuantizeErrors, ClearMessagesAndNoOutput) {
  std::vector<uint16_t> x(100 * 40);
  QuantizeOptions o;
  auto r = quantize(nullptr, 16, 16, 1.0f, o);
  EXPECT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("null"), std::string::npos);
  r = quantize(x.data(), 100, 40, 1.0f, o);  // not multiples of 16 and no padding asked
  EXPECT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("--pad"), std::string::npos);
  o.pad = true;
  EXPECT_TRUE(quantize(x.data(), 100, 40, 1.0f, o).is_ok());
  for (float bad : {NAN, INFINITY, -1.0f}) {
    r = quantize(x.data(), 100, 40, bad, o);
    EXPECT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(quantize(x.data(), 0, 16, 1.0f, o).is_ok());
  EXPECT_FALSE(parse_recipe("comfy-triton").is_ok());
  EXPECT_FALSE(parse_scale_layout("tiled").is_ok());
}

TEST(QuantizeOptions, NibbleOrderLayoutAndThreadsOnlyChangeBytesNotValues) {
  const auto x = random_bf16(48 * 272, 5, 3.0f);
  const float s = global_scale_dynamic(x.data(), x.size());
  QuantizeOptions base;
  base.threads = 1;
  auto a = quantize(x.data(), 48, 272, s, base);
  ASSERT_TRUE(a.is_ok());
  QuantizeOptions other = base;
  other.nibbles = NibbleOrder::kLoFirst;
  other.scale_layout = ScaleLayout::kLinear;
  other.threads = 0;
  auto b = quantize(x.data(), 48, 272, s, other);
  ASSERT_TRUE(b.is_ok());
  const Tensor conv = b->with(NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4);
  EXPECT_EQ(conv.data, a->data);
  EXPECT_EQ(conv.scales, a->scales);
  for (Recipe r : {Recipe::kComfyEagerCuda, Recipe::kComfyEagerCpu}) {
    QuantizeOptions e1 = base, e4 = base;
    e1.recipe = e4.recipe = r;
    e4.threads = 4;
    EXPECT_EQ(quantize(x.data(), 48, 272, s, e1)->data, quantize(x.data(), 48, 272, s, e4)->data);
  }
}

TEST(GpuArithmetic, RcpApproxEmulationEdgeCases) {
  EXPECT_EQ(rcp_approx_ftz(1.0f), 1.0f);
  EXPECT_EQ(rcp_approx_ftz(2.0f), 0.5f);
  EXPECT_EQ(rcp_approx_ftz(0.0f), INFINITY);
  EXPECT_EQ(rcp_approx_ftz(-0.0f), -INFINITY);
  EXPECT_EQ(rcp_approx_ftz(1e-40f), INFINITY);     // subnormal input flushed
  EXPECT_EQ(rcp_approx_ftz(INFINITY), 0.0f);
  EXPECT_EQ(rcp_approx_ftz(0x1.8p127f), 0.0f);     // result below 2^-126 flushed
  EXPECT_TRUE(std::isnan(rcp_approx_ftz(NAN)));
  // It depends only on the mantissa: exact scaling by powers of two while the result is normal,
  // and it is within one ulp of the correctly rounded reciprocal.
  std::mt19937 rng(1);
  int differs = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint32_t m = rng() & 0x7FFFFF;
    const float x = f32_from_bits(0x3F800000u | m);
    const float r = rcp_approx_ftz(x);
    EXPECT_EQ(rcp_approx_ftz(std::ldexp(x, 20)), std::ldexp(r, -20));
    EXPECT_EQ(rcp_approx_ftz(-std::ldexp(x, -30)), -std::ldexp(r, 30));
    const float rn = 1.0f / x;
    ASSERT_LE(std::abs(static_cast<int64_t>(f32_bits(r)) - static_cast<int64_t>(f32_bits(rn))), 1);
    differs += r != rn;
  }
  // The measured table says about 13.2% of mantissas differ from RN.
  EXPECT_GT(differs, 11000);
  EXPECT_LT(differs, 15500);
  EXPECT_EQ(fmul_ftz(1e-20f, 1e-20f), 0.0f);       // subnormal result flushed
  EXPECT_EQ(fmul_ftz(1e-40f, 1e30f), 0.0f);        // subnormal input flushed
  EXPECT_TRUE(std::signbit(fmul_ftz(-1e-20f, 1e-20f)));
  EXPECT_EQ(f32_bits(fmul_ftz(f32_from_bits(0xFFC01234u), 1.0f)), 0x7FFFFFFFu);  // the GPU's canonical NaN
  EXPECT_EQ(f32_bits(fmul_ftz(0.0f, INFINITY)), 0x7FFFFFFFu);
}

TEST(EagerRecipe, TorchaoBitTrickEqualsRoundNearestEvenOnTheClampedRange) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-6.0f, 6.0f);
  for (int i = 0; i < 200000; ++i) {
    const float v = d(rng);
    ASSERT_EQ(detail::e2m1_torchao(f32_bits(v)), e2m1_rn_sat(v)) << v;
  }
  for (float v : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, -0.25f, -5.0f, 0.0f, -0.0f})
    EXPECT_EQ(detail::e2m1_torchao(f32_bits(v)), e2m1_rn_sat(v)) << v;
}

TEST(Dequantize, CudaAndEagerRecipesFollowTheirRoundings) {
  const auto x = random_bf16(16 * 64, 11, 2.0f);
  QuantizeOptions o;
  const float s = 0.0123456789f;
  auto t = quantize(x.data(), 16, 64, s, o);
  ASSERT_TRUE(t.is_ok());
  const auto dc = dequantize(t.value(), DequantRecipe::kComfyCuda);
  const auto de = dequantize(t.value(), DequantRecipe::kComfyEager);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t k = 0; k < 64; ++k) {
      const float v = e2m1_decode(t->code(r, k)), sf = ue4m3_decode(t->scale(r, k / 16));
      EXPECT_EQ(dc[r * 64 + k], bf16_rn((s * sf) * v));
      EXPECT_EQ(de[r * 64 + k], bf16_rn(v * bf16_to_f32(bf16_rn(bf16_to_f32(bf16_rn(s)) * sf))));
    }
}

TEST(GlobalScale, DynamicIsBf16OfAmaxOver2688) {
  std::vector<uint16_t> x = {bf16_rn(-3.0f), bf16_rn(1.0f), 0x7FC0 /* NaN is skipped */, bf16_rn(2.5f)};
  EXPECT_EQ(amax_bf16(x.data(), x.size()), bf16_rn(3.0f));
  EXPECT_EQ(global_scale_dynamic(x.data(), x.size()), bf16_to_f32(bf16_rn(3.0f / 2688.0f)));
  EXPECT_EQ(global_scale_f32(x.data(), x.size()), 3.0f / 2688.0f);
}

TEST(GpuArithmetic, E2m1BitArithmeticEqualsThresholdRounding) {
  // The integer form the GPU quantizer uses, over every 61st fp32 pattern plus every threshold
  // neighbourhood (an exhaustive run over all 2^32 patterns found no difference either).
  int64_t checked = 0;
  auto check = [&](uint32_t b) {
    const float v = f32_from_bits(b);
    if (std::isnan(v)) return;
    ASSERT_EQ(detail::e2m1_rn_sat_bits(b), e2m1_rn_sat(v)) << std::hex << b;
    ++checked;
  };
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 61) check(static_cast<uint32_t>(b));
  for (float t : {0.25f, 0.75f, 1.0f, 1.25f, 1.75f, 2.0f, 2.5f, 3.5f, 4.0f, 5.0f, 6.0f})
    for (int d = -64; d <= 64; ++d)
      for (uint32_t sign : {0u, 0x80000000u}) check((f32_bits(t) + d) | sign);
  EXPECT_GT(checked, 60000000);
  // The magnitude-only form the GPU quantizer's NaN-free fast path uses.
  for (uint64_t a = 0; a < 0x7F800000u; a += 13)
    ASSERT_EQ(detail::e2m1_rn_sat_abs_bits(static_cast<uint32_t>(a)), e2m1_rn_sat(f32_from_bits(static_cast<uint32_t>(a))))
        << std::hex << a;
  for (float t : {0.25f, 0.75f, 1.0f, 1.25f, 1.75f, 2.0f, 2.5f, 3.5f, 4.0f, 5.0f, 6.0f, 8.0f})
    for (int d = -64; d <= 64; ++d) ASSERT_EQ(detail::e2m1_rn_sat_abs_bits(f32_bits(t) + d), e2m1_rn_sat(f32_from_bits(f32_bits(t) + d)));
  for (uint64_t a = 0; a < 0x40E00000u; a += 7)  // below 7.0: the unsaturated variant agrees
    ASSERT_EQ(detail::e2m1_rn_sat_abs_bits<false>(static_cast<uint32_t>(a)), detail::e2m1_rn_sat_abs_bits(static_cast<uint32_t>(a)));
  EXPECT_EQ(detail::e2m1_rn_sat_abs_bits(0x7F800000u), 0x7u);
  EXPECT_EQ(detail::e2m1_rn_sat_abs_bits(0x7FFFFFFFu), 0x7u);
  EXPECT_EQ(detail::e2m1_rn_sat_bits(0x7FFFFFFFu), 0x7u);  // canonical NaN -> +6
  EXPECT_EQ(detail::e2m1_rn_sat_bits(0x7F800000u), 0x7u);
  EXPECT_EQ(detail::e2m1_rn_sat_bits(0xFF800000u), 0xFu);
}

TEST(ComfyCudaRecipe, Avx2BlockEqualsScalarBlock) {
  if (!detail::cpu_has_avx2()) GTEST_SKIP() << "skipped: CPU without AVX2";
  std::mt19937 rng(31);
  const uint16_t specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x8003, 0x007F, 0x3F80, 0x4700, 0xC0C0};
  int64_t blocks = 0;
  for (int it = 0; it < 200000; ++it) {
    uint16_t x[16];
    const int mode = it % 4;
    for (auto& v : x) {
      v = static_cast<uint16_t>(rng());
      if (mode == 1) v = specials[rng() % 12];
      if (mode == 2) v = static_cast<uint16_t>((rng() & 0x807F) | 0x3C00);  // a narrow band
    }
    const float s = mode == 3 ? f32_from_bits(rng()) : 0.0123456789f;
    if (!std::isfinite(s) || s < 0) continue;
    const float rcp_s = rcp_approx_ftz(s);
    uint8_t c1[16], c2[16], s1, s2;
    detail::comfy_cuda_block(x, s, rcp_s, c1, &s1);
    detail::comfy_cuda_block_avx2(x, s, rcp_s, c2, &s2);
    ASSERT_EQ(s1, s2) << "iteration " << it;
    for (int i = 0; i < 16; ++i) ASSERT_EQ(c1[i], c2[i]) << "iteration " << it << " element " << i;
    ++blocks;
  }
  EXPECT_GT(blocks, 150000);
}

TEST(GpuArithmetic, FastDivisionIsExact) {
  std::mt19937 rng(8);
  std::vector<uint32_t> divisors = {1, 2, 3, 4, 5, 7, 13, 16, 336, 448, 896, 1000, 65535, 65536, 2147483647u};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 100000);
  for (uint32_t d : divisors) {
    const auto f = detail::make_fast_div(d);
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{d} - 1, uint64_t{d}, uint64_t{d} + 1, 2 * uint64_t{d} - 1,
                       uint64_t{0x7FFFFFFF}, uint64_t{0x7FFFFFFE}})
      if (n < 0x80000000u) ASSERT_EQ(detail::fast_div(static_cast<uint32_t>(n), f), n / d) << n << "/" << d;
    for (int j = 0; j < 20000; ++j) {
      const uint32_t n = rng() & 0x7FFFFFFFu;
      ASSERT_EQ(detail::fast_div(n, f), n / d) << n << "/" << d;
    }
  }
}
