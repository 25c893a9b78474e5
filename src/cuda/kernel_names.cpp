// Names of the GPU GEMM kernels, shared by CUDA and CPU-only builds.
#include "nvfp4/cuda.hpp"

namespace nvfp4 {

const char* to_string(GpuGemmKernel k) {
  switch (k) {
    case GpuGemmKernel::kModel: return "gpu-model";
    case GpuGemmKernel::kSm120Native: return "sm120-native";
    case GpuGemmKernel::kSm120Emulated: return "sm120-emulated";
    case GpuGemmKernel::kSm120pNative: return "sm120p-native";
    case GpuGemmKernel::kSm120pEmulated: return "sm120p-emulated";
    case GpuGemmKernel::kSm90: return "sm90";
  }
  return "?";
}

Result<GpuGemmKernel> parse_gpu_kernel(std::string_view s) {
  if (s == "gpu-model") return GpuGemmKernel::kModel;
  if (s == "sm120-native") return GpuGemmKernel::kSm120Native;
  if (s == "sm120-emulated") return GpuGemmKernel::kSm120Emulated;
  if (s == "sm120p-native") return GpuGemmKernel::kSm120pNative;
  if (s == "sm120p-emulated") return GpuGemmKernel::kSm120pEmulated;
  if (s == "sm90") return GpuGemmKernel::kSm90;
  return invalid_argument("unknown GPU kernel '" + std::string(s) +
                          "' (expected sm90, gpu-model, sm120-native, sm120-emulated, sm120p-native or sm120p-emulated)");
}

}  // namespace nvfp4
