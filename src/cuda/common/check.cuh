// CUDA error handling: every runtime call and launch becomes a Status with the call's text.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "nvfp4/error.hpp"

// A failed call also leaves its error as the thread's "last error", which the next launch check
// (NVFP4_CUDA_LAUNCH_TRY) would report as its own: a retry after an out-of-memory error would fail
// at a launch that succeeded. The error is returned here, so it is cleared here.
#define NVFP4_CUDA_TRY(call)                                                                     \
  do {                                                                                           \
    const cudaError_t _e = (call);                                                               \
    if (_e != cudaSuccess) {                                                                     \
      cudaGetLastError();                                                                        \
      return ::nvfp4::cuda_error(std::string(#call) + " failed: " + cudaGetErrorString(_e));     \
    }                                                                                            \
  } while (0)

// After a <<<...>>> launch: launch-configuration errors, then (when synchronous) execution errors.
#define NVFP4_CUDA_LAUNCH_TRY(what)                                                              \
  do {                                                                                           \
    const cudaError_t _e = cudaGetLastError();                                                   \
    if (_e != cudaSuccess)                                                                       \
      return ::nvfp4::cuda_error(std::string("launch of ") + (what) + " failed: " + cudaGetErrorString(_e)); \
  } while (0)

namespace nvfp4::cuda {

// Owning device buffer; freed on scope exit so error returns leak nothing.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (p_) cudaFree(p_); }
  Status alloc(size_t n) {
    n_ = n;
    NVFP4_CUDA_TRY(cudaMalloc(&p_, (n ? n : 1) * sizeof(T)));
    return Status::ok();
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace nvfp4::cuda
