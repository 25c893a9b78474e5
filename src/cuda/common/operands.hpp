// Host-side preparation of GEMM operands for the kernels (kernels.hpp GemmOperands) and uploads.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "check.cuh"
#include "nvfp4/format.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"

namespace nvfp4::cuda {

// An operand as the GEMM kernels read it: lo_first packed rows at pitch lda bytes (K padded to 64
// with zeros) and its 128x4 swizzled scales (roundup(rows16,128) x roundup(K16/16,4) = K64/16 columns).
inline void prepare_operand(const Tensor& t, int64_t lda, std::vector<uint8_t>& data, std::vector<uint8_t>& sf) {
  const Tensor lo = t.with(NibbleOrder::kLoFirst, ScaleLayout::kSwizzled128x4);
  data.assign(t.geom.rows * lda, 0);
  for (int64_t r = 0; r < t.geom.rows; ++r) std::memcpy(&data[r * lda], &lo.data[r * lo.geom.row_bytes()], lo.geom.row_bytes());
  sf = lo.scales;
}

// The arguments of a GPU quantization (host or device pointers alike): the recipe the kernel runs,
// bounded dimensions, a multiple of 16 unless padding is asked for; and a usable global scale where
// the host holds it (check_quantize_gpu_args).
inline Status check_quantize_gpu_shape(int64_t rows, int64_t cols, const QuantizeOptions& opt) {
  if (opt.recipe != Recipe::kComfyCuda)
    return unsupported("quantize_gpu: only recipe comfy-cuda runs on the GPU (the eager recipes are CPU references)");
  NVFP4_TRY(check_dim(rows, "quantize_gpu: rows"));
  NVFP4_TRY(check_dim(cols, "quantize_gpu: cols"));
  NVFP4_TRY(check_gemm_problem(rows, 1, cols, 1, "quantize_gpu"));
  if (!opt.pad && (rows % 16 != 0 || cols % 16 != 0))
    return invalid_argument("quantize_gpu: shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                            "] is not a multiple of 16; ask for padding (--pad) to zero-fill to 16");
  return Status::ok();
}
inline Status check_quantize_gpu_args(int64_t rows, int64_t cols, float global_scale, const QuantizeOptions& opt) {
  NVFP4_TRY(check_quantize_gpu_shape(rows, cols, opt));
  if (!std::isfinite(global_scale) || global_scale < 0.0f)
    return invalid_argument("quantize_gpu: global scale must be finite and >= 0");
  return Status::ok();
}

// Allocates d for n elements and copies them from the host.
template <typename T>
Status upload(DeviceBuffer<T>& d, const T* h, size_t n) {
  NVFP4_TRY(d.alloc(n));
  NVFP4_CUDA_TRY(cudaMemcpy(d.get(), h, n * sizeof(T), cudaMemcpyHostToDevice));
  return Status::ok();
}

}  // namespace nvfp4::cuda
