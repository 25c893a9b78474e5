// The MMA model and the GEMM oracle against the golden vectors (docs/numerics.md §3, §4): every case
// of every group, through both the fast integer model and the independent long-double reference.
#include <gtest/gtest.h>

#include <cmath>

#include "golden_path.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"

using namespace nvfp4;

namespace {
uint32_t canon(float f) { return std::isnan(f) ? 0x7FFFFFFFu : f32_bits(f); }

std::vector<std::string> mma_groups() {
  std::vector<std::string> out;
  auto g = GoldenFile::open(golden_path("mma/mma_m16n8k64.json"));
  if (!g.is_ok()) return out;
  for (const auto& k : g->keys())
    if (k.size() > 2 && k.substr(k.size() - 2) == ".d") out.push_back(k.substr(0, k.size() - 2));
  return out;
}

// Packs [rows][K] codes one per byte into a Tensor (hi_first, swizzled) with linear scales given.
Tensor make_tensor(const std::vector<uint8_t>& codes, const std::vector<uint8_t>& sf_linear, int64_t rows, int64_t k,
                   float s) {
  const Geometry g = Geometry::of(rows, k);
  std::vector<uint8_t> data(g.data_bytes(), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; j += 2)
      data[r * g.row_bytes() + j / 2] = pack_pair(codes[r * k + j], codes[r * k + j + 1], NibbleOrder::kHiFirst);
  std::vector<uint8_t> sf = sf_linear;
  sf.resize(g.rows16 * g.sf_cols, 0);  // scales of the padding rows are zero
  auto t = Tensor::make(rows, k, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, s, std::move(data),
                        scales_to_swizzled(g, sf.data()));
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.value();
}

class MmaGolden : public ::testing::TestWithParam<std::string> {};
}  // namespace

TEST_P(MmaGolden, FastModelAndReferenceBitExact) {
  auto g = GoldenFile::open(golden_path("mma/mma_m16n8k64.json"));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const std::string p = GetParam() + ".";
  const auto a = g->get(p + "a_codes")->to_vector<uint8_t>();
  const auto b = g->get(p + "b_codes")->to_vector<uint8_t>();
  const auto sfa = g->get(p + "sfa")->to_vector<uint8_t>();
  const auto sfb = g->get(p + "sfb")->to_vector<uint8_t>();
  const auto c = g->get(p + "c")->to_vector<float>();
  const auto d = g->get(p + "d")->to_vector<float>();
  const size_t cases = d.size() / 128;
  ASSERT_GT(cases, 0u);
  size_t bad_fast = 0, bad_ref = 0;
  for (size_t i = 0; i < cases; ++i) {
    float out[128];
    mma_m16n8k64(&a[i * 1024], &b[i * 512], &sfa[i * 64], &sfb[i * 32], &c[i * 128], out);
    for (int e = 0; e < 128; ++e) {
      const uint32_t want = canon(d[i * 128 + e]);
      if (f32_bits(out[e]) != want && bad_fast++ < 5)
        ADD_FAILURE() << p << "case " << i << " elem " << e << ": fast 0x" << std::hex << f32_bits(out[e])
                      << " want 0x" << want;
      const int m = e / 8, n = e % 8;
      const float r = reference_mma_element(&a[i * 1024 + m * 64], &b[i * 512 + n * 64], &sfa[i * 64 + m * 4],
                                            &sfb[i * 32 + n * 4], c[i * 128 + e]);
      if (canon(r) != want && bad_ref++ < 5)
        ADD_FAILURE() << p << "case " << i << " elem " << e << ": reference 0x" << std::hex << canon(r)
                      << " want 0x" << want;
    }
  }
  EXPECT_EQ(bad_fast, 0u);
  EXPECT_EQ(bad_ref, 0u);
}

INSTANTIATE_TEST_SUITE_P(Golden, MmaGolden, ::testing::ValuesIn(mma_groups()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(GemmChainGolden, SequentialAlphaAndSplit2BitExact) {
  auto g = GoldenFile::open(golden_path("mma/gemm_chain.json"));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  int shapes = 0;
  for (const auto& key : g->keys()) {
    if (key.size() < 8 || key.substr(key.size() - 8) != ".a_codes") continue;
    const std::string p = key.substr(0, key.size() - 7);
    const auto ac = g->get(p + "a_codes").value();
    const auto bc = g->get(p + "b_codes").value();
    const int64_t M = ac.shape[0], K = ac.shape[1], N = bc.shape[0];
    const float alpha = g->get(p + "alpha")->to_vector<float>()[0];
    const Tensor A = make_tensor(ac.to_vector<uint8_t>(), g->get(p + "sfa")->to_vector<uint8_t>(), M, K, 1.0f);
    const Tensor W = make_tensor(bc.to_vector<uint8_t>(), g->get(p + "sfb")->to_vector<uint8_t>(), N, K, 1.0f);
    GemmSpec spec;
    spec.alpha = alpha;
    spec.contracts = {ReductionContract::sequential(),
                      ReductionContract::split_k(2, static_cast<int>(K / 2), PartitionRule::kCublas, MergeMode::kFp32)};
    auto res = gemm_oracle(A, W, spec);
    ASSERT_TRUE(res.is_ok()) << res.status().message();
    const auto d_seq = g->get(p + "d_seq")->to_vector<float>();
    const auto d_bf16 = g->get(p + "d_bf16")->to_vector<uint16_t>();
    const auto d_split2 = g->get(p + "d_split2")->to_vector<float>();
    int64_t bad_seq = 0, bad_bf16 = 0, bad_split = 0;
    for (int64_t i = 0; i < M * N; ++i) {
      bad_seq += canon((*res)[0].raw[i]) != canon(d_seq[i]);
      bad_bf16 += (*res)[0].out[i] != d_bf16[i];
      bad_split += canon((*res)[1].raw[i]) != canon(d_split2[i]);
    }
    EXPECT_EQ(bad_seq, 0) << p << " d_seq";
    EXPECT_EQ(bad_bf16, 0) << p << " d_bf16";
    EXPECT_EQ(bad_split, 0) << p << " d_split2";
    // The independent reference agrees on a sample (corners included).
    const auto at = sample_coords(M, N, 64, 7);
    auto ref = gemm_reference_at(A, W, at);
    ASSERT_TRUE(ref.is_ok());
    for (size_t i = 0; i < at.size(); ++i)
      EXPECT_EQ(canon((*ref)[i]), canon(d_seq[at[i].m * N + at[i].n])) << p << " reference at " << at[i].m << "," << at[i].n;
    ++shapes;
  }
  EXPECT_EQ(shapes, 6);
}
