// Exact NVFP4 GEMM on any GPU: one thread per output, exact integer group sums (dp4a) and the
// §3 model step (the very header the CPU oracle runs), sequential K or one split-K slice per grid z,
// alpha-before-bf16 epilogue.
// It is the GPU twin of the CPU oracle; speed is secondary to being obviously the same steps.
#include <cuda_runtime.h>

#include "check.cuh"
#include "chunk_model.cuh"
#include "kernels.hpp"
#include "numerics.cuh"
#include "swizzle.cuh"

namespace nvfp4::cuda {

namespace {
constexpr int kThreads = 128;  // consecutive n; blockIdx.y = m

__global__ void __launch_bounds__(kThreads) sm_any_gemm_model(GemmOperands op) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t m = blockIdx.y;
  if (n >= op.n) return;
  const int64_t lda = op.k64 / 2, cp = op.k64 / 16;
  const uint4* arow = reinterpret_cast<const uint4*>(op.a + m * lda);
  const uint4* wrow = reinterpret_cast<const uint4*>(op.w + n * lda);
  int64_t q0, q1;  // blockIdx.z = the K slice (the whole K for sequential)
  slice_chunks(op, static_cast<int>(blockIdx.z), q0, q1);
  float acc = 0.0f;  // each slice runs forward from +0
  for (int64_t q = q0; q < q1; ++q) {
    const uint4 a0 = __ldg(arow + 2 * q), a1 = __ldg(arow + 2 * q + 1);
    const uint4 w0 = __ldg(wrow + 2 * q), w1 = __ldg(wrow + 2 * q + 1);
    const uint32_t aw[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const uint32_t ww[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    const uint32_t sa = load_chunk_scales(op.sfa, m, q, cp), sb = load_chunk_scales(op.sfw, n, q, cp);
    acc = chunk_element(aw, ww, sa, sb, acc);
  }
  if (op.splits > 1) {  // a partial: launch_merge_splitk finishes the output
    op.partials[(blockIdx.z * op.m + m) * op.n + n] = acc;
    return;
  }
  if (op.raw) op.raw[m * op.n + n] = acc;
  op.out[m * op.n + n] = epilogue_alpha_before_bf16(acc, op.alpha, op.bias ? bf16_to_f32(op.bias[n]) : -0.0f);
}
}  // namespace

Status launch_gemm_model(const GemmOperands& op, cudaStream_t stream) {
  if (op.m > 65535) return invalid_argument("gemm (model kernel): M above 65535 is not supported by this kernel");
  const dim3 grid(static_cast<unsigned>((op.n + kThreads - 1) / kThreads), static_cast<unsigned>(op.m),
                  static_cast<unsigned>(op.splits));
  sm_any_gemm_model<<<grid, kThreads, 0, stream>>>(op);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_gemm_model");
  return Status::ok();
}

}  // namespace nvfp4::cuda
