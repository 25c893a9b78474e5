// What the Hopper probes (wgmma_probe, sm90_loop_probe, sm90_hgmma_probe) share: the command line
// (`--out FILE` for the JSON copy of the printed table), the device check, and the median of timed
// launches.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace nvfp4::bench {

// `--out FILE` from the command line ("" when absent).
inline std::string probe_out_path(int argc, char** argv) {
  std::string out;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
  return out;
}

// Device 0's properties if it is a Hopper GPU; otherwise a one-line reason on stderr and false.
inline bool probe_require_hopper(const char* probe, cudaDeviceProp& prop) {
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
    std::fprintf(stderr, "%s: needs a Hopper GPU (compute capability 9.0)\n", probe);
    return false;
  }
  return true;
}

// Median time in ms of `runs` launches after `warm` untimed ones, each bracketed by CUDA events;
// launch(i) enqueues run i. A negative value: the launches failed; the error is left for the
// caller's cudaGetLastError to report.
template <class Launch>
double probe_median_ms(int warm, int runs, Launch&& launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int it = 0; it < warm + runs; ++it) {
    cudaEventRecord(e0);
    launch(it);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (it >= warm) ts.push_back(ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (cudaPeekAtLastError() != cudaSuccess) return -1.0;
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

}  // namespace nvfp4::bench
