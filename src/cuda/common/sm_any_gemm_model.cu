// Exact NVFP4 GEMM on any GPU: one thread per 16 outputs of a column, exact integer group sums
// (dp4a) and the §3 model step (the very header the CPU oracle runs), sequential K,
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
constexpr int kThreads = 128;       // consecutive n
constexpr int kRowsPerThread = 16;  // m rows per thread: each weight chunk is loaded once for 16 outputs
static_assert(kRowsPerThread >= 1 && kRowsPerThread <= 32, "accumulators live in registers");

// blockIdx.x: 128 consecutive n; blockIdx.y: 16 consecutive m. The activation (small at the M the
// harness uses) stays in L2/L1 while every thread streams its own weight row once per 16 rows of M.
__global__ void __launch_bounds__(kThreads) sm_any_gemm_model(GemmOperands op) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRowsPerThread;
  if (n >= op.n) return;
  const int64_t lda = op.k64 / 2, cp = op.k64 / 16, chunks = op.k64 / 64;
  const uint4* wrow = reinterpret_cast<const uint4*>(op.w + n * lda);
  float acc[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) acc[r] = 0.0f;  // sequential K from +0
  for (int64_t q = 0; q < chunks; ++q) {
    const uint4 w0 = __ldg(wrow + 2 * q), w1 = __ldg(wrow + 2 * q + 1);
    const uint32_t ww[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    const uint32_t sb = load_chunk_scales(op.sfw, n, q, cp);
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int64_t m = m0 + r;
      if (m >= op.m) continue;  // no break: the loop must stay unrolled so acc[] stays in registers
      const uint4* arow = reinterpret_cast<const uint4*>(op.a + m * lda);
      const uint4 a0 = __ldg(arow + 2 * q), a1 = __ldg(arow + 2 * q + 1);
      const uint32_t aw[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      acc[r] = chunk_element(aw, ww, load_chunk_scales(op.sfa, m, q, cp), sb, acc[r]);
    }
  }
  const float bias = op.bias ? bf16_to_f32(op.bias[n]) : -0.0f;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int64_t m = m0 + r;
    if (m >= op.m) continue;
    op.raw[m * op.n + n] = acc[r];
    op.out[m * op.n + n] = epilogue_alpha_before_bf16(acc[r], op.alpha, bias);
  }
}
}  // namespace

Status launch_gemm_model(const GemmOperands& op, cudaStream_t stream) {
  const int64_t gy = (op.m + kRowsPerThread - 1) / kRowsPerThread;
  if (gy > 65535) return invalid_argument("gemm (model kernel): M above " + std::to_string(65535 * kRowsPerThread) + " is not supported");
  const dim3 grid(static_cast<unsigned>((op.n + kThreads - 1) / kThreads), static_cast<unsigned>(gy));
  sm_any_gemm_model<<<grid, kThreads, 0, stream>>>(op);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_gemm_model");
  return Status::ok();
}

}  // namespace nvfp4::cuda
