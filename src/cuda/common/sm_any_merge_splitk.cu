// The split-K merge on the GPU: one thread per output reads its slices' fp32 partials in slice
// order and finishes the output with the merge and epilogue the CPU oracle runs (model/merge_step.hpp).
// A separate pass over a workspace rather than atomics: the sum order is the contract's, always.
#include <cuda_runtime.h>

#include "../../model/merge_step.hpp"
#include "check.cuh"
#include "kernels.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) merge_splitk(GemmOperands op) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x, mn = op.m * op.n;
  if (i >= mn) return;
  // Streaming A: alpha = f32_rn(s_x * s_w) from the device amax, exactly as the GEMM kernel forms it.
  const float alpha = op.x ? __fmul_rn(dynamic_global_scale(*op.x_amax), op.s_w) : gemm_alpha(op.alpha_a, op.alpha_w, op.alpha);
  const int64_t col = i % op.n;
  const float bias = op.bias ? bf16_to_f32(op.bias[col]) : -0.0f;
  const float* p = op.partials + i;
  const model::Merged r = model::merge_step([&](int j) { return p[j * mn]; }, op.splits, static_cast<model::Merge>(op.merge),
                                            model::Epi::kAlphaBeforeBf16, alpha, bias);
  if (op.raw) op.raw[i] = r.raw;  // optional, as for the fused epilogue: production runs without the fp32 copy
  op.out[i] = r.bf16;
}
}  // namespace

Status launch_merge_splitk(const GemmOperands& op, cudaStream_t stream) {
  if (op.splits < 2 || op.partials == nullptr) return invalid_argument("split-K merge without split-K partials");
  const int64_t blocks = (op.m * op.n + kThreads - 1) / kThreads;
  if (blocks > 0x7FFFFFFF) return invalid_argument("split-K merge: output too large");
  merge_splitk<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(op);
  NVFP4_CUDA_LAUNCH_TRY("merge_splitk");
  return Status::ok();
}

}  // namespace nvfp4::cuda
