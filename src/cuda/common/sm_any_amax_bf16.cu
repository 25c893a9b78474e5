// max |x| over a bf16 tensor, NaN skipped: the reduction behind the dynamic activation scale
// (docs/numerics.md §2.4). On sign-cleared bf16 patterns integer order is value order, so the max is an
// unsigned max and the result is exact; one atomicMax per warp.
#include <cuda_runtime.h>

#include "check.cuh"
#include "kernels.hpp"

namespace nvfp4::cuda {

namespace {
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) sm_any_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits) {
  uint32_t m = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const uint32_t a = x[i] & 0x7FFFu;
    m = (a <= 0x7F80u && a > m) ? a : m;  // NaN patterns lie above +Inf's 0x7F80
  }
  m = __reduce_max_sync(0xFFFFFFFFu, m);
  if ((threadIdx.x & 31) == 0 && m != 0) atomicMax(amax_bits, m);
}
}  // namespace

Status launch_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 4096);
  sm_any_amax_bf16<<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), kThreads, 0, stream>>>(x, n, amax_bits);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_amax_bf16");
  return Status::ok();
}

}  // namespace nvfp4::cuda
