// From a reduction contract to the GPU launch (src/cuda/split_plan.hpp), and from a cuBLASLt plan
// to a contract: plain host logic, tested on every machine.
#include <gtest/gtest.h>

#include "cuda/split_plan.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"

using namespace nvfp4;
using cuda::plan_slices;

namespace {
std::vector<int32_t> bounds(int s, int grain, PartitionRule r, int64_t k) {
  auto p = plan_slices(ReductionContract::split_k(s, grain, r, MergeMode::kFp32), k);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? p->bounds : std::vector<int32_t>{};
}
constexpr auto kCublas = PartitionRule::kCublas;
constexpr auto kCutlass = PartitionRule::kCutlass;
using B = std::vector<int32_t>;
}  // namespace

TEST(SplitPlan, SliceBoundariesInChunks) {
  // FC2 (K = 14336, 224 chunks), S = 2, grain 256, cuBLAS rule: 56 tiles, 28 per slice.
  EXPECT_EQ(bounds(2, 256, kCublas, 14336), (B{0, 112, 224}));
  // K = 5376 (84 chunks), grain 256 (4 chunks): 21 tiles. cuBLAS: ceil(21/4) = 6 tiles per slice,
  // the remainder last; CUTLASS: 6,5,5,5 tiles, the remainder first.
  EXPECT_EQ(bounds(4, 256, kCublas, 5376), (B{0, 24, 48, 72, 84}));
  EXPECT_EQ(bounds(4, 256, kCutlass, 5376), (B{0, 24, 44, 64, 84}));
  // K = 7168, grain 1024: 7 tiles in 3 slices, CUTLASS 3,2,2.
  EXPECT_EQ(bounds(3, 1024, kCutlass, 7168), (B{0, 48, 80, 112}));
  EXPECT_EQ(bounds(3, 1024, kCublas, 7168), (B{0, 48, 96, 112}));
  // K = 1000 pads to 1024 (16 chunks); grain 512 gives 2 tiles for 3 slices: an empty last slice.
  EXPECT_EQ(bounds(3, 512, kCublas, 1000), (B{0, 8, 16, 16}));
  EXPECT_EQ(bounds(3, 512, kCutlass, 1000), (B{0, 8, 16, 16}));
  // K = 200 pads to 256: four chunks, one per slice at grain 64.
  EXPECT_EQ(bounds(4, 64, kCublas, 200), (B{0, 1, 2, 3, 4}));
  // Sequential: one slice over every chunk, no workspace.
  auto seq = plan_slices(ReductionContract::sequential(), 100);
  ASSERT_TRUE(seq.is_ok());
  EXPECT_EQ(seq->bounds, (B{0, 2}));
  EXPECT_EQ(seq->workspace_floats_per_output(), 0);
  auto merge = plan_slices(ReductionContract::split_k(3, 64, kCutlass, MergeMode::kBf16Serial), 4096);
  ASSERT_TRUE(merge.is_ok());
  EXPECT_EQ(merge->merge, MergeMode::kBf16Serial);
  EXPECT_EQ(merge->workspace_floats_per_output(), 3);
}

TEST(SplitPlan, AgreesWithTheOraclesSlicesEverywhere) {
  // Every S, grain, rule and a spread of K: the plan is the oracle's slices in chunk units.
  for (int64_t k : {64, 100, 208, 1000, 4000, 5376, 7168, 14336}) {
    const int64_t chunks = (k + 63) / 64;
    for (int s = 2; s <= 8; ++s)
      for (int grain : {64, 128, 256, 512, 1024})
        for (auto rule : {kCublas, kCutlass}) {
          const auto c = ReductionContract::split_k(s, grain, rule, MergeMode::kFp32);
          auto p = plan_slices(c, k);
          if (s > chunks) {
            EXPECT_FALSE(p.is_ok()) << c.to_string() << " K " << k;
            continue;
          }
          ASSERT_TRUE(p.is_ok()) << c.to_string() << " K " << k << ": " << p.status().message();
          const auto sl = c.slices(k);
          ASSERT_EQ(p->bounds.size(), sl.size() + 1);
          for (size_t j = 0; j < sl.size(); ++j) {
            EXPECT_EQ(p->bounds[j] * 64, sl[j].first) << c.to_string() << " K " << k;
            EXPECT_EQ(p->bounds[j + 1] * 64, sl[j].second) << c.to_string() << " K " << k;
          }
        }
  }
}

TEST(SplitPlan, RefusesMoreSlicesThanChunksInOneLine) {
  auto p = plan_slices(ReductionContract::split_k(4, 64, kCublas, MergeMode::kFp32), 128);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("S must not exceed the chunk count"), std::string::npos) << p.status().message();
  EXPECT_EQ(p.status().message().find('\n'), std::string::npos);
  EXPECT_TRUE(plan_slices(ReductionContract::split_k(2, 64, kCublas, MergeMode::kFp32), 128).is_ok());
  // The same check for every kernel, before any GPU is looked for.
  for (auto k : {GpuGemmKernel::kModel, GpuGemmKernel::kSm120Emulated, GpuGemmKernel::kSm120Native}) {
    EXPECT_TRUE(check_gpu_contract(k, ReductionContract::split_k(4, 256, kCutlass, MergeMode::kBf16Partials), 14336).is_ok());
    Status st = check_gpu_contract(k, ReductionContract::split_k(3, 64, kCutlass, MergeMode::kFp32), 100);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << to_string(k);
  }
}

TEST(SplitPlan, CublasLtPlansMapAsTheProbeMapsThem) {
  CublasLtPlan p;
  p.splitk_num = 1;
  auto seq = cublaslt_plan_contract(p, 0, kCublas);
  ASSERT_TRUE(seq.is_ok());
  EXPECT_TRUE(seq->is_sequential());
  p.splitk_num = 2;
  p.reduction_scheme = 2;  // COMPUTE_TYPE
  auto open = cublaslt_plan_contract(p, 0, kCublas);  // the grain is not in the algo config
  ASSERT_FALSE(open.is_ok());
  EXPECT_EQ(open.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(open.status().message().find("split_k:2:?:fp32"), std::string::npos) << open.status().message();
  EXPECT_EQ(open.status().message().find('\n'), std::string::npos);
  EXPECT_EQ(cublaslt_plan_contract(p, 256, kCublas)->to_string(), "split_k:2:grain=256:cublas:fp32");
  p.splitk_num = 3;
  p.reduction_scheme = 4;  // OUTPUT_TYPE
  EXPECT_EQ(cublaslt_plan_contract(p, 128, kCutlass)->to_string(), "split_k:3:grain=128:cutlass:bf16_partials");
  p.reduction_scheme = 1;  // INPLACE
  EXPECT_EQ(cublaslt_plan_contract(p, 64, kCublas)->to_string(), "split_k:3:grain=64:cublas:bf16_serial");
  p.splitk_num = 65;
  EXPECT_FALSE(cublaslt_plan_contract(p, 64, kCublas).is_ok());
}
