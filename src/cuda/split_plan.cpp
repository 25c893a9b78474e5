// Contract -> launch planning (split_plan.hpp).
#include "split_plan.hpp"

#include <string>

#include "nvfp4/cuda.hpp"

namespace nvfp4::cuda {

Result<SlicePlan> plan_slices(const ReductionContract& c, int64_t k) {
  if (k <= 0) return invalid_argument("GEMM K must be positive");
  const int64_t chunks = roundup(k, 64) / 64;
  if (chunks > INT32_MAX) return invalid_argument("GEMM K = " + std::to_string(k) + " is too large");
  if (c.splits < 1 || c.splits > kMaxSlices)
    return invalid_argument("contract " + c.to_string() + ": S must be in 1.." + std::to_string(kMaxSlices));
  if (c.splits > chunks)
    return invalid_argument("contract " + c.to_string() + " cuts K = " + std::to_string(k) + " (" + std::to_string(chunks) +
                            (chunks == 1 ? " chunk" : " chunks") + " of 64) into " + std::to_string(c.splits) + " slices: S must not exceed the chunk count");
  SlicePlan p;
  p.splits = c.splits;
  p.merge = c.merge;
  const auto slices = c.slices(k);
  p.bounds.push_back(0);
  for (const auto& [b, e] : slices) {
    // Both partition rules give contiguous slices on the 64 grid; anything else is a planning bug.
    if (b % 64 != 0 || e % 64 != 0 || b / 64 != p.bounds.back() || e < b)
      return invalid_argument("contract " + c.to_string() + ": slices of K = " + std::to_string(k) +
                              " are not contiguous k64 ranges");
    p.bounds.push_back(static_cast<int32_t>(e / 64));
  }
  if (p.bounds.back() != chunks) return invalid_argument("contract " + c.to_string() + ": slices do not cover K");
  return p;
}

}  // namespace nvfp4::cuda

namespace nvfp4 {

bool gpu_kernel_runs(GpuGemmKernel kernel, const ReductionContract& contract) {
  switch (kernel) {
    case GpuGemmKernel::kModel:
    case GpuGemmKernel::kSm120Native:
    case GpuGemmKernel::kSm120Emulated:
    case GpuGemmKernel::kSm120pNative:
    case GpuGemmKernel::kSm120pEmulated:
      return true;  // these write split-K partials for launch_merge_splitk
    default:
      return contract.is_sequential();
  }
}

Status check_gpu_contract(GpuGemmKernel kernel, const ReductionContract& contract, int64_t k) {
  if (!gpu_kernel_runs(kernel, contract))
    return invalid_argument(std::string("kernel ") + to_string(kernel) + " runs the sequential contract only, not " +
                            contract.to_string());
  return cuda::plan_slices(contract, k).status();
}

}  // namespace nvfp4
