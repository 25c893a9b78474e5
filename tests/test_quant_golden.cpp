// Quantizers against every array of the golden quantization files (docs/numerics.md §2, golden §11):
// each recipe, each global scale, packed bytes, swizzled scales and the comfy-cuda dequantization.
#include <gtest/gtest.h>

#include <cstdio>

#include "golden_path.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/quant.hpp"

using namespace nvfp4;

namespace {

struct Case {
  std::string file, dataset, scale;
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const char* f : {"quant/quantize_main.json", "quant/quantize_edge.json"}) {
    auto g = GoldenFile::open(golden_path(f));
    if (!g.is_ok()) continue;
    for (const auto& k : g->keys()) {
      const auto dot = k.find(".global_scale");
      if (dot == std::string::npos) continue;
      const std::string head = k.substr(0, dot);  // dataset.scale
      const auto d = head.find('.');
      out.push_back({f, head.substr(0, d), head.substr(d + 1)});
    }
  }
  return out;
}

template <typename T>
::testing::AssertionResult same_bytes(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << what << ": size " << got.size() << " != " << want.size();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (bad == 0) return ::testing::AssertionSuccess();
  char buf[160];
  std::snprintf(buf, sizeof buf, ": %zu of %zu differ; first at %zu: got 0x%x want 0x%x", bad, got.size(), first,
                static_cast<unsigned>(got[first]), static_cast<unsigned>(want[first]));
  return ::testing::AssertionFailure() << what << buf;
}

class QuantGolden : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST(GoldenFiles, ManifestsMatchTheirSha256) {
  for (const char* f : {"quant/quantize_main.json", "quant/quantize_edge.json", "mma/mma_m16n8k64.json",
                        "mma/gemm_chain.json", "rcp/rcp_approx_ftz_f32_sm90.json"}) {
    auto g = GoldenFile::open(golden_path(f));
    EXPECT_TRUE(g.is_ok()) << f << ": " << g.status().message();
  }
  EXPECT_GE(all_cases().size(), 20u);
}

TEST(GoldenFiles, EmbeddedRcpTableIsTheGoldenOne) {
  auto g = GoldenFile::open(golden_path("rcp/rcp_approx_ftz_f32_sm90.json"));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto bitmap = g->get("bitmap");
  ASSERT_TRUE(bitmap.is_ok());
  ASSERT_EQ(rcp_table_size(), static_cast<int64_t>(bitmap->nbytes));
  EXPECT_EQ(0, std::memcmp(rcp_table_bytes(), bitmap->data, bitmap->nbytes));
  EXPECT_EQ(sha256_hex(rcp_table_bytes(), rcp_table_size()),
            "28b0c3b27627c89c43c9e33adcfd9f1e2410d36e31519724a69208102c057cac");
}

TEST_P(QuantGolden, EveryRecipeBitExact) {
  const Case c = GetParam();
  auto g = GoldenFile::open(golden_path(c.file));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto x = g->get(c.dataset + ".x");
  ASSERT_TRUE(x.is_ok());
  const int64_t rows = x->shape[0], cols = x->shape[1];
  const std::vector<uint16_t> xs = x->to_vector<uint16_t>();
  const std::string pre = c.dataset + "." + c.scale + ".";
  const float s = g->get(pre + "global_scale")->to_vector<float>()[0];

  // The global-scale helpers reproduce the file's scales where they are defined from x.
  if (c.scale == "dyn") EXPECT_EQ(f32_bits(global_scale_dynamic(xs.data(), rows * cols)), f32_bits(s));
  if (c.scale == "f32" && c.dataset != "nan_inf" && c.dataset != "all_zero")
    EXPECT_EQ(f32_bits(global_scale_f32(xs.data(), rows * cols)), f32_bits(s));

  struct R { const char* name; Recipe r; } recipes[] = {
      {"cuda", Recipe::kComfyCuda}, {"eager_cuda", Recipe::kComfyEagerCuda}, {"eager_cpu", Recipe::kComfyEagerCpu}};
  for (const R& r : recipes) {
    auto packed = g->get(pre + r.name + ".packed");
    if (!packed.is_ok()) continue;  // e.g. no dyn scale for nan_inf
    QuantizeOptions opt;
    opt.recipe = r.r;
    opt.pad = true;
    auto q = quantize(xs.data(), rows, cols, s, opt);
    ASSERT_TRUE(q.is_ok()) << q.status().message();
    EXPECT_TRUE(same_bytes(q->data, packed->to_vector<uint8_t>(), pre + r.name + ".packed"));
    EXPECT_TRUE(same_bytes(q->scales, g->get(pre + r.name + ".scales")->to_vector<uint8_t>(), pre + r.name + ".scales"));
    if (r.r == Recipe::kComfyCuda) {
      auto dq = g->get(pre + "cuda.dequant_bf16");
      if (dq.is_ok())
        EXPECT_TRUE(same_bytes(dequantize(q.value(), DequantRecipe::kComfyCuda), dq->to_vector<uint16_t>(),
                               pre + "cuda.dequant_bf16"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, QuantGolden, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.dataset + "_" + i.param.scale; });
