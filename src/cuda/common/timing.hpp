// Host-side timing of GPU work with CUDA events: median of `iters` runs after `warmup` runs.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.cuh"

namespace nvfp4::cuda {

// How median_us times a run, for every measurement of the process (nvfp4 bench --timing):
//  - sync (the process default; nvfp4 bench sets its own, queued unless told): each run alone,
//    its first event recorded on an idle GPU, so the run's time includes the host's work to launch
//    it (argument set-up, tensor maps, the launch calls);
//  - queued: the runs enqueued back to back and one synchronize at the end, as a model's forward
//    pass enqueues its layers; the host is then ahead of the GPU and each run's events bracket its
//    GPU work only (a host slower than the GPU shows up as gaps inside the bracket).
enum class Timing { kSync, kQueued };
inline Timing& timing_mode() {
  static Timing mode = Timing::kSync;
  return mode;
}

// launch(i) enqueues run i (and may rotate inputs by i); returns its Status.
template <typename F>
Result<double> median_us(int iters, int warmup, F&& launch) {
  struct Events {
    std::vector<cudaEvent_t> e;
    ~Events() {
      for (cudaEvent_t x : e) cudaEventDestroy(x);
    }
  } ev;
  const bool queued = timing_mode() == Timing::kQueued;
  const int pairs = queued ? iters : 1;  // queued: every run's events live until the final synchronize
  for (int i = 0; i < 2 * pairs; ++i) {
    cudaEvent_t x = nullptr;
    NVFP4_CUDA_TRY(cudaEventCreate(&x));
    ev.e.push_back(x);
  }
  std::vector<float> t;
  if (queued) {
    for (int i = 0; i < warmup; ++i) NVFP4_TRY(launch(i));
    NVFP4_CUDA_TRY(cudaDeviceSynchronize());
    for (int i = 0; i < iters; ++i) {
      NVFP4_CUDA_TRY(cudaEventRecord(ev.e[2 * i]));
      NVFP4_TRY(launch(warmup + i));
      NVFP4_CUDA_TRY(cudaEventRecord(ev.e[2 * i + 1]));
    }
    NVFP4_CUDA_TRY(cudaDeviceSynchronize());
    for (int i = 0; i < iters; ++i) {
      float ms = 0;
      NVFP4_CUDA_TRY(cudaEventElapsedTime(&ms, ev.e[2 * i], ev.e[2 * i + 1]));
      t.push_back(ms * 1000.0f);
    }
  } else {
    for (int i = 0; i < warmup + iters; ++i) {
      NVFP4_CUDA_TRY(cudaEventRecord(ev.e[0]));
      Status st = launch(i);
      NVFP4_CUDA_TRY(cudaEventRecord(ev.e[1]));
      if (!st.is_ok()) return st;
      NVFP4_CUDA_TRY(cudaEventSynchronize(ev.e[1]));
      float ms = 0;
      NVFP4_CUDA_TRY(cudaEventElapsedTime(&ms, ev.e[0], ev.e[1]));
      if (i >= warmup) t.push_back(ms * 1000.0f);
    }
  }
  std::sort(t.begin(), t.end());
  return static_cast<double>(t[t.size() / 2]);
}

}  // namespace nvfp4::cuda
