// max |x| over a bf16 tensor, NaN skipped: the reduction behind the dynamic activation scale
// (docs/numerics.md §2.4). On sign-cleared bf16 patterns integer order is value order, so the max is an
// unsigned max and the result is exact (in any order). 16-byte loads where x is 16-byte aligned; one
// atomicMax per block, and at most kAmaxMaxBlocks blocks: atomics on one address serialise in L2 (with
// one per warp over up to 4096 blocks the streaming pre-pass was 19-32 us above the plain one at
// M = 128 on the H200, 5 us after; docs/hopper-exact-path.md). Or one piece per block, no atomics
// and no zeroed word, for a pre-pass that reduces the pieces itself (sm90_prep_a.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "check.cuh"
#include "kernels.hpp"

namespace nvfp4::cuda {

namespace {
constexpr int kThreads = 256;

__device__ __forceinline__ uint32_t max_finite(uint32_t m, uint32_t bits) {
  const uint32_t a = bits & 0x7FFFu;
  return (a <= 0x7F80u && a > m) ? a : m;  // NaN patterns lie above +Inf's 0x7F80
}

// kPartials: block b stores its maximum to amax_bits[b] instead of an atomicMax into amax_bits[0].
template <bool kPartials>
__global__ void __launch_bounds__(kThreads) sm_any_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits) {
  uint32_t m = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads, first = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t nv = (reinterpret_cast<uintptr_t>(x) & 15u) == 0 ? n / 8 : 0;  // whole 8-value vectors
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  for (int64_t i = first; i < nv; i += stride) {
    const uint4 u = __ldg(xv + i);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) m = max_finite(max_finite(m, w[e]), w[e] >> 16);
  }
  for (int64_t i = nv * 8 + first; i < n; i += stride) m = max_finite(m, x[i]);
  m = __reduce_max_sync(0xFFFFFFFFu, m);
  __shared__ uint32_t warp_max[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    uint32_t b = threadIdx.x < kThreads / 32 ? warp_max[threadIdx.x] : 0u;
    b = __reduce_max_sync(0xFFFFFFFFu, b);
    if constexpr (kPartials) {
      if (threadIdx.x == 0) amax_bits[blockIdx.x] = b;
    } else {
      if (threadIdx.x == 0 && b != 0) atomicMax(amax_bits, b);
    }
  }
  if constexpr (kPartials) {
    // A programmatic dependent launch may start once every block is here, i.e. as the last wave
    // ends: its CTAs then skip the launch gap, yet never sit on SMs this grid's later waves need.
    // It still waits for this grid's completion before it reads the pieces.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  }
}
}  // namespace

int64_t amax_partial_count(int64_t n) {
  return std::max<int64_t>(std::min<int64_t>((n / 8 + kThreads - 1) / kThreads, kAmaxMaxBlocks), 1);
}

Status launch_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits, cudaStream_t stream) {
  sm_any_amax_bf16<false><<<static_cast<unsigned>(amax_partial_count(n)), kThreads, 0, stream>>>(x, n, amax_bits);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_amax_bf16");
  return Status::ok();
}

Status launch_amax_bf16_partials(const uint16_t* x, int64_t n, uint32_t* partials, cudaStream_t stream) {
  sm_any_amax_bf16<true><<<static_cast<unsigned>(amax_partial_count(n)), kThreads, 0, stream>>>(x, n, partials);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_amax_bf16<partials>");
  return Status::ok();
}

}  // namespace nvfp4::cuda
