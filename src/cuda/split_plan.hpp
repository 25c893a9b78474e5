// From a reduction contract (docs/numerics.md §4) to what the GPU GEMM kernels launch: the K slices
// in units of k64 chunks. Plain C++ (built with and without CUDA) so the planning is tested in CI.
#pragma once
#include <cstdint>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4::cuda {

constexpr int kMaxSlices = 64;  // the contract parser's bound on S

struct SlicePlan {
  int splits = 1;
  MergeMode merge = MergeMode::kFp32;
  // splits + 1 chunk indices: slice j runs chunks [bounds[j], bounds[j + 1]) from +0. The slices
  // are the oracle's (ReductionContract::slices), so they tile [0, K64 / 64) in order; a slice may
  // be empty under the cuBLAS rule (its partial is +0).
  std::vector<int32_t> bounds;
  // fp32 partials per output the merge reads (0 for sequential: the kernel's fused epilogue).
  int workspace_floats_per_output() const { return splits > 1 ? splits : 0; }
};

// Refuses (invalid argument, one line) a contract whose S exceeds the number of k64 chunks of K:
// such a contract names slices no GEMM kernel with a k64 MMA can form.
Result<SlicePlan> plan_slices(const ReductionContract& c, int64_t k);

}  // namespace nvfp4::cuda
