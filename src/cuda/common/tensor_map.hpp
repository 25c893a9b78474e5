// cuTensorMapEncodeTiled without linking libcuda: the driver function of the CUDA 12.0 ABI, looked
// up once through the runtime's versioned entry point (the unversioned lookup is deprecated since
// CUDA 12.5 and may hand out a newer ABI). Shared by every kernel that builds a TMA descriptor.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "nvfp4/error.hpp"

namespace nvfp4::cuda {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The encoder, or a one-line reason when the driver does not offer it (a failed lookup leaves no
// sticky runtime error behind).
inline Result<EncodeTiled> tensor_map_encoder() {
  static const EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  if (!encode) return cuda_error("cuTensorMapEncodeTiled (CUDA 12.0 ABI) is not available from the driver");
  return encode;
}

}  // namespace nvfp4::cuda
