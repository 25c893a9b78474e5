// `explain` recovers contracts planted by the oracle itself, the FC2 split-K 2 hypothesis included.
#include <gtest/gtest.h>

#include <random>

#include "nvfp4/validate.hpp"

using namespace nvfp4;

namespace {
// The planted contract is recovered when some exact candidate reproduces the planted output: any
// contract that does is equivalent on these inputs.
void plant_and_recover(const LayerProblem& p, const ReductionContract& c, Epilogue e, bool bf16, const ExplainOptions& eo) {
  GemmSpec spec;
  spec.alpha = p.alpha;
  spec.contracts = {c};
  spec.epilogues = {e};
  auto r = gemm_oracle(p.a, p.w, spec);
  ASSERT_TRUE(r.is_ok());
  std::vector<uint32_t> dump((*r)[0].raw.size());
  for (size_t i = 0; i < dump.size(); ++i) dump[i] = bf16 ? (*r)[0].out[i] : f32_bits((*r)[0].raw[i]);
  auto ex = explain_contract(p.a, p.w, p.alpha, nullptr, dump, bf16, eo);
  ASSERT_TRUE(ex.is_ok()) << ex.status().message();
  ASSERT_FALSE(ex->exact.empty()) << "planted " << c.to_string() << " / " << to_string(e) << " not recovered";
  for (const auto& x : ex->exact) EXPECT_EQ(x.full_diffs, 0);
}
}  // namespace

TEST(Explain, RecoversRandomPlantedContracts) {
  std::mt19937 rng(4242);
  const LinearShape l{"t", 48, 4096};
  auto p = prepare_layer(l, 32, 77, "");
  ASSERT_TRUE(p.is_ok());
  ExplainOptions eo;
  eo.sample = 512;
  for (int i = 0; i < 6; ++i) {
    const int s = 2 + static_cast<int>(rng() % 7);
    const int g = 64 << (rng() % 5);
    const auto rule = rng() % 2 ? PartitionRule::kCublas : PartitionRule::kCutlass;
    const auto merge = static_cast<MergeMode>(rng() % 3);
    const auto epi = rng() % 2 ? Epilogue::kAlphaBeforeBf16 : Epilogue::kAlphaAfterBf16;
    plant_and_recover(p.value(), ReductionContract::split_k(s, g, rule, merge), epi, true, eo);
  }
  plant_and_recover(p.value(), ReductionContract::sequential(), Epilogue::kAlphaBeforeBf16, true, eo);
  plant_and_recover(p.value(), ReductionContract::split_k(3, 128, PartitionRule::kCutlass, MergeMode::kFp32),
                    Epilogue::kAlphaBeforeBf16, false, eo);
}

TEST(Explain, RecoversSplitK2Fp32OnTheFc2Shape) {
  auto l = find_linear("fc2");
  ASSERT_TRUE(l.is_ok());
  auto p = prepare_layer(l.value(), 128, 1234, "");
  ASSERT_TRUE(p.is_ok());
  const ReductionContract planted = ReductionContract::split_k(2, 256, PartitionRule::kCublas, MergeMode::kFp32);
  GemmSpec spec;
  spec.alpha = p->alpha;
  spec.contracts = {planted};
  auto r = gemm_oracle(p->a, p->w, spec);
  ASSERT_TRUE(r.is_ok());
  std::vector<uint32_t> dump((*r)[0].out.begin(), (*r)[0].out.end());
  ExplainOptions eo;
  eo.splits = {2, 3, 4};
  eo.sample = 1024;
  auto ex = explain_contract(p->a, p->w, p->alpha, nullptr, dump, true, eo);
  ASSERT_TRUE(ex.is_ok());
  ASSERT_FALSE(ex->exact.empty());
  EXPECT_EQ(ex->exact.front().contract.slices(14336), planted.slices(14336));
  EXPECT_EQ(ex->exact.front().contract.merge, MergeMode::kFp32);
  EXPECT_EQ(ex->exact.front().epilogue, Epilogue::kAlphaBeforeBf16);
  // Sequential K does not reproduce it: the FC2 shape is contract-sensitive.
  for (const auto& c : ex->closest)
    if (c.contract.is_sequential() && c.full_diffs >= 0) EXPECT_GT(c.full_diffs, 0);
}

TEST(Explain, RejectsWrongDumpSize) {
  auto p = prepare_layer(LinearShape{"t", 16, 64}, 16, 1, "");
  ASSERT_TRUE(p.is_ok());
  auto ex = explain_contract(p->a, p->w, p->alpha, nullptr, std::vector<uint32_t>(7), true, ExplainOptions{});
  EXPECT_FALSE(ex.is_ok());
}
