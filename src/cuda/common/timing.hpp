// Host-side timing of GPU work with CUDA events: median of `iters` runs after `warmup` runs.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.cuh"

namespace nvfp4::cuda {

// launch(i) enqueues run i (and may rotate inputs by i); returns its Status.
template <typename F>
Result<double> median_us(int iters, int warmup, F&& launch) {
  struct Events {
    cudaEvent_t a = nullptr, b = nullptr;
    ~Events() {
      if (a) cudaEventDestroy(a);
      if (b) cudaEventDestroy(b);
    }
  } ev;
  NVFP4_CUDA_TRY(cudaEventCreate(&ev.a));
  NVFP4_CUDA_TRY(cudaEventCreate(&ev.b));
  std::vector<float> t;
  for (int i = 0; i < warmup + iters; ++i) {
    NVFP4_CUDA_TRY(cudaEventRecord(ev.a));
    Status st = launch(i);
    NVFP4_CUDA_TRY(cudaEventRecord(ev.b));
    if (!st.is_ok()) return st;
    NVFP4_CUDA_TRY(cudaEventSynchronize(ev.b));
    float ms = 0;
    NVFP4_CUDA_TRY(cudaEventElapsedTime(&ms, ev.a, ev.b));
    if (i >= warmup) t.push_back(ms * 1000.0f);
  }
  std::sort(t.begin(), t.end());
  return static_cast<double>(t[t.size() / 2]);
}

}  // namespace nvfp4::cuda
