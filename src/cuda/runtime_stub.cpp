// GPU entry points of a build without CUDA: each one says so, and nothing crashes.
#include "nvfp4/cuda.hpp"

namespace nvfp4 {

namespace detail_stub {
#if defined(NVFP4_CUDA_DISABLED)
constexpr const char* kWhy = "this build of nvfp4 has no CUDA support (configured with NVFP4_CUDA=OFF)";
#else
constexpr const char* kWhy = "this build of nvfp4 has no CUDA support (nvcc was not found at configure time)";
#endif
}  // namespace detail_stub
using detail_stub::kWhy;

CudaInfo cuda_info() {
  CudaInfo info;
  info.error = kWhy;
  return info;
}
Result<DeviceInfo> cuda_device() { return unsupported(kWhy); }
Result<Tensor> quantize_gpu(const uint16_t*, int64_t, int64_t, float, const QuantizeOptions&) { return unsupported(kWhy); }
std::vector<GpuGemmKernel> available_gpu_kernels() { return {}; }
std::vector<std::string> sm90_configs() { return {}; }
std::string sm90_config_for(int64_t, int64_t, int) { return {}; }
Result<GpuGemmOutput> gemm_gpu(const Tensor&, const Tensor&, float, const uint16_t*, GpuGemmKernel,
                               const ReductionContract&) {
  return unsupported(kWhy);
}
Result<GpuGemmOutput> gemm_gpu_stream_a(const uint16_t*, int64_t, int64_t, const Tensor&, const uint16_t*, GpuGemmKernel,
                                        const ReductionContract&, float) {
  return unsupported(kWhy);
}
Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu(const Tensor&, GpuGemmKernel, int) { return unsupported(kWhy); }
Status linear_gpu_device(const PreparedWeight&, const DeviceLinear&) { return unsupported(kWhy); }
Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu_device(const DeviceWeightSource&, GpuGemmKernel) {
  return unsupported(kWhy);
}
Status matmul_gpu_device(const PreparedWeight&, const DeviceMatmul&) { return unsupported(kWhy); }
Result<PreparedWeightBytes> prepared_weight_bytes(const PreparedWeight&) { return unsupported(kWhy); }
Status quantize_gpu_device(const uint16_t*, int64_t, int64_t, float, const QuantizeOptions&, uint8_t*, uint8_t*, void*, int) {
  return unsupported(kWhy);
}
Status quantize_gpu_device_with_device_scale(const uint16_t*, int64_t, int64_t, const float*, const QuantizeOptions&, uint8_t*,
                                             uint8_t*, void*, int) {
  return unsupported(kWhy);
}
Result<uint16_t> amax_bf16_device(const uint16_t*, int64_t, void*, int) { return unsupported(kWhy); }
Status dequantize_gpu_device(const uint8_t*, const uint8_t*, int64_t, int64_t, float, NibbleOrder, uint16_t*, void*, int) {
  return unsupported(kWhy);
}
Status dequantize_gpu_device_with_device_scale(const uint8_t*, const uint8_t*, int64_t, int64_t, const float*, NibbleOrder,
                                               uint16_t*, void*, int) {
  return unsupported(kWhy);
}

}  // namespace nvfp4

#include "nvfp4/bench.hpp"

namespace nvfp4 {
Result<Json> run_bench(const BenchOptions&, const std::function<void(const std::string&)>&) { return unsupported(kWhy); }
Result<int64_t> gpu_rcp_mismatches() { return unsupported(kWhy); }
Result<int64_t> gpu_bf16_pair_mismatches() { return unsupported(kWhy); }
}  // namespace nvfp4
