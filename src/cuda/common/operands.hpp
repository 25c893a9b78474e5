// Host-side preparation of GEMM operands for the kernels (kernels.hpp GemmOperands) and uploads.
#pragma once
#include <cstring>
#include <vector>

#include "check.cuh"
#include "nvfp4/format.hpp"

namespace nvfp4::cuda {

// An operand as the GEMM kernels read it: lo_first packed rows at pitch lda bytes (K padded to 64
// with zeros) and its 128x4 swizzled scales (roundup(rows16,128) x roundup(K16/16,4) = K64/16 columns).
inline void prepare_operand(const Tensor& t, int64_t lda, std::vector<uint8_t>& data, std::vector<uint8_t>& sf) {
  const Tensor lo = t.with(NibbleOrder::kLoFirst, ScaleLayout::kSwizzled128x4);
  data.assign(t.geom.rows * lda, 0);
  for (int64_t r = 0; r < t.geom.rows; ++r) std::memcpy(&data[r * lda], &lo.data[r * lo.geom.row_bytes()], lo.geom.row_bytes());
  sf = lo.scales;
}

// Allocates d for n elements and copies them from the host.
template <typename T>
Status upload(DeviceBuffer<T>& d, const T* h, size_t n) {
  NVFP4_TRY(d.alloc(n));
  NVFP4_CUDA_TRY(cudaMemcpy(d.get(), h, n * sizeof(T), cudaMemcpyHostToDevice));
  return Status::ok();
}

}  // namespace nvfp4::cuda
