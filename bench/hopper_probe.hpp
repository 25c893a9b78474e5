// What the Hopper probes (wgmma_probe, sm90_loop_probe, sm90_hgmma_probe, sm90_copy_probe,
// sm120_stream_probe) share: the command line (`--out FILE` for the JSON copy of the printed table),
// PROBE_ONLY, the device check, CUDA errors, and the median of timed launches.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

// PROBE_ONLY=s1,s2: the configurations to run are those whose name contains one of the pieces
// (all when unset).
class ProbeOnly {
 public:
  ProbeOnly() {
    const char* e = std::getenv("PROBE_ONLY");
    if (!e) return;
    const std::string v = e;
    for (size_t at = 0; at <= v.size();) {
      const size_t comma = std::min(v.find(',', at), v.size());
      if (comma > at) pieces_.push_back(v.substr(at, comma - at));
      at = comma + 1;
    }
  }
  bool wanted(const std::string& name) const {
    return pieces_.empty() ||
           std::any_of(pieces_.begin(), pieces_.end(), [&](const std::string& p) { return name.find(p) != std::string::npos; });
  }

 private:
  std::vector<std::string> pieces_;
};

// A failed CUDA call ends the probe with a one-line reason.
inline void probe_check(cudaError_t e, const char* probe, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s: %s\n", probe, what, cudaGetErrorString(e));
  std::exit(1);
}

// cuTensorMapEncodeTiled through the runtime's driver entry point (no link against libcuda); a probe
// that cannot get it ends with a one-line reason.
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline EncodeTiled probe_encoder(const char* probe) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  probe_check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q), probe,
              "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
  if (q != cudaDriverEntryPointSuccess || !fn) {
    std::fprintf(stderr, "%s: no cuTensorMapEncodeTiled\n", probe);
    std::exit(1);
  }
  return reinterpret_cast<EncodeTiled>(fn);
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

#ifdef __CUDACC__
// The first `words` 32-bit words at p, by the CTA's threads: finite normal f16 pairs 1 + j / 1024 (an
// MMA operand whose values do not matter, only that none is Inf or NaN).
__device__ __forceinline__ void probe_fill_f16_near_one(uint8_t* p, int words, uint32_t seed) {
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    const uint32_t h = 0x3C00u + ((i * 2654435761u + seed) >> 22);
    reinterpret_cast<uint32_t*>(p)[i] = h | (h << 16);
  }
}
#endif

}  // namespace nvfp4::bench
