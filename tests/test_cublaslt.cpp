// The cuBLASLt call as comfy-kitchen makes it (docs/numerics.md §6), read back through cuBLASLt's own
// getters; needs only the library, no GPU.
#include <gtest/gtest.h>

#include "nvfp4/cublaslt.hpp"

using namespace nvfp4;

TEST(CublasLtCall, DescriptorsAreComfyKitchens) {
  CublasLtPlanRequest req;
  req.bias = true;
  auto j = cublaslt_describe_call(128, 5376, 14336, req);
  if (!j.is_ok()) GTEST_SKIP() << "skipped: cuBLASLt not loadable here (" << j.status().message() << ")";
  EXPECT_EQ((*j)["compute_type"].as_int(), 68);   // CUBLAS_COMPUTE_32F
  EXPECT_EQ((*j)["scale_type"].as_int(), 0);      // CUDA_R_32F
  EXPECT_EQ((*j)["pointer_mode"].as_int(), 1);    // CUBLASLT_POINTER_MODE_DEVICE
  EXPECT_EQ((*j)["transa"].as_int(), 1);          // CUBLAS_OP_T: A = weight
  EXPECT_EQ((*j)["transb"].as_int(), 0);          // CUBLAS_OP_N
  EXPECT_EQ((*j)["epilogue"].as_int(), 4);        // CUBLASLT_EPILOGUE_BIAS
  EXPECT_EQ((*j)["bias_data_type"].as_int(), 14); // CUDA_R_16BF
  EXPECT_EQ((*j)["a_scale_mode"].as_int(), 1);    // VEC16_UE4M3
  EXPECT_EQ((*j)["b_scale_mode"].as_int(), 1);
  EXPECT_EQ((*j)["a_scale_pointer_offset"].as_int(), 1);  // A scale pointer = the weight's scales
  EXPECT_EQ((*j)["b_scale_pointer_offset"].as_int(), 2);
  const Json& a = (*j)["a"];
  EXPECT_EQ(a["type"].as_int(), 33);  // CUDA_R_4F_E2M1
  EXPECT_EQ(a["rows"].as_int(), 14336);
  EXPECT_EQ(a["cols"].as_int(), 5376);
  EXPECT_EQ(a["ld"].as_int(), 14336);
  EXPECT_EQ((*j)["b"]["cols"].as_int(), 128);
  EXPECT_EQ((*j)["d"]["type"].as_int(), 14);  // bf16 D, column-major N x M
  EXPECT_EQ((*j)["d"]["rows"].as_int(), 5376);
  EXPECT_EQ((*j)["d"]["ld"].as_int(), 5376);
  CublasLtPlanRequest plain;
  auto k = cublaslt_describe_call(128, 5376, 14336, plain);
  ASSERT_TRUE(k.is_ok());
  EXPECT_EQ((*k)["epilogue"].as_int(), 1);  // CUBLASLT_EPILOGUE_DEFAULT
}
