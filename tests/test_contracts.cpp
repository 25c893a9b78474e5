// Reduction contracts: text form, partition rules, merges (docs/numerics.md §4).
#include <gtest/gtest.h>

#include "nvfp4/model.hpp"

using namespace nvfp4;

TEST(Contract, TextFormRoundTrips) {
  for (const char* s : {"sequential", "split_k:2:grain=256:cublas:fp32", "split_k:7:grain=64:cutlass:bf16_serial",
                        "split_k:3:grain=1024:cublas:bf16_partials"}) {
    auto c = ReductionContract::parse(s);
    ASSERT_TRUE(c.is_ok()) << s << ": " << c.status().message();
    EXPECT_EQ(c->to_string(), s);
  }
  auto d = ReductionContract::parse("split_k:4");
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->to_string(), "split_k:4:grain=64:cublas:fp32");
  EXPECT_TRUE(ReductionContract::parse("split_k:1")->is_sequential());
  for (const char* bad : {"", "split", "split_k:", "split_k:x", "split_k:2:grain=100", "split_k:2:fp64", "split_k:0", "seqential"}) {
    auto c = ReductionContract::parse(bad);
    EXPECT_FALSE(c.is_ok()) << bad;
    if (!c.is_ok()) EXPECT_NE(c.status().message().find("bad reduction contract"), std::string::npos);
  }
}

TEST(Contract, PartitionRules) {
  using V = std::vector<std::pair<int64_t, int64_t>>;
  // cuBLAS: chunk = ceil(ceil(K/G)/S)*G, remainder last.
  EXPECT_EQ(ReductionContract::split_k(2, 256, PartitionRule::kCublas, MergeMode::kFp32).slices(14336), (V{{0, 7168}, {7168, 14336}}));
  EXPECT_EQ(ReductionContract::split_k(3, 256, PartitionRule::kCublas, MergeMode::kFp32).slices(14336),
            (V{{0, 4864}, {4864, 9728}, {9728, 14336}}));
  // CUTLASS: whole tiles, the remainder tiles to the first slices.
  EXPECT_EQ(ReductionContract::split_k(3, 256, PartitionRule::kCutlass, MergeMode::kFp32).slices(14336),
            (V{{0, 4864}, {4864, 9728}, {9728, 14336}}));
  EXPECT_EQ(ReductionContract::split_k(3, 1024, PartitionRule::kCutlass, MergeMode::kFp32).slices(5376),
            (V{{0, 2048}, {2048, 4096}, {4096, 5376}}));
  EXPECT_EQ(ReductionContract::split_k(4, 1024, PartitionRule::kCublas, MergeMode::kFp32).slices(5376),
            (V{{0, 2048}, {2048, 4096}, {4096, 5376}, {5376, 5376}}));  // empty last slice: a +0 partial
  EXPECT_EQ(ReductionContract::sequential().slices(100), (V{{0, 128}}));  // K padded to 64
}

TEST(Contract, MergeModes) {
  const float p[3] = {1.0f, 0x1p-24f, 0x1p-24f};
  // fp32 forward sum: (1 + 2^-24) rounds to 1 (tie to even), twice.
  EXPECT_EQ(merge_partials(p, 3, MergeMode::kFp32, Epilogue::kAlphaBeforeBf16, 1.0f, -0.0f).raw, 1.0f);
  const float q[2] = {1.0f, 0x1.01p-8f};
  // bf16 partials: 2^-8 * 1.0039 rounds to 2^-8 in bf16 first; bf16 serial: one bf16 add.
  const auto bp = merge_partials(q, 2, MergeMode::kBf16Partials, Epilogue::kAlphaBeforeBf16, 1.0f, -0.0f);
  const auto bs = merge_partials(q, 2, MergeMode::kBf16Serial, Epilogue::kAlphaBeforeBf16, 1.0f, -0.0f);
  EXPECT_EQ(bp.bf16, bf16_rn(1.0f + 0x1p-8f));
  EXPECT_EQ(bs.bf16, bf16_rn(1.0f + 0x1p-8f));
  // The alpha epilogue keeps a negative zero; bias is added after alpha.
  const float z = -0.0f;
  EXPECT_EQ(merge_partials(&z, 1, MergeMode::kFp32, Epilogue::kAlphaBeforeBf16, 2.0f, -0.0f).bf16, 0x8000);
  const float one = 1.5f;
  EXPECT_EQ(merge_partials(&one, 1, MergeMode::kFp32, Epilogue::kAlphaBeforeBf16, 2.0f, 0.25f).bf16, bf16_rn(3.25f));
  // Unfused alpha rounds the accumulator to bf16 first.
  const float acc = 1.0f + 0x1p-9f;
  EXPECT_EQ(merge_partials(&acc, 1, MergeMode::kFp32, Epilogue::kAlphaAfterBf16, 3.0f, -0.0f).bf16, bf16_rn(3.0f));
  EXPECT_EQ(merge_partials(&acc, 1, MergeMode::kFp32, Epilogue::kAlphaBeforeBf16, 3.0f, -0.0f).bf16, bf16_rn(3.0f * acc));
}
