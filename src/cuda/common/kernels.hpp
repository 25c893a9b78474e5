// Host launchers of the CUDA kernels: plain structs and raw device pointers in, Status out.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "nvfp4/error.hpp"

namespace nvfp4::cuda {

// [rows][cols] bf16 -> data [rows16][cols16/2] u8 + scales (swizzled 128x4 or linear), comfy-cuda.
Status launch_quantize_comfy(const uint16_t* x, int64_t rows, int64_t cols, float s, uint8_t* data,
                             uint8_t* scales, bool hi_first, bool swizzled, cudaStream_t stream);

// GEMM operands as every GEMM kernel here reads them.
struct GemmOperands {
  const uint8_t* a;     // [M][lda] u8, lo_first, K zero-padded to a multiple of 64; lda = K64/2
  const uint8_t* w;     // [N][lda] u8, lo_first
  const uint8_t* sfa;   // 128x4 swizzled, roundup(M,128) x K64/16, zero padded
  const uint8_t* sfw;   // 128x4 swizzled, roundup(N,128) x K64/16
  int64_t m, n, k64;
  float alpha;
  const uint16_t* bias; // [N] bf16 or null
  float* raw;           // [M][N] f32 accumulators
  uint16_t* out;        // [M][N] bf16
  // Streaming A producer (SM120 kernel only): when x is set, A is quantized inside the GEMM from
  // bf16 x [M][k] with the comfy-cuda recipe and the dynamic scale made from *x_amax (the bf16
  // pattern of max |x|); a and sfa are not read, alpha = f32_rn(s_x * s_w), s_x is written to *s_x_out.
  const uint16_t* x = nullptr;
  int64_t k = 0;
  const uint32_t* x_amax = nullptr;
  float s_w = 0.0f;
  float* s_x_out = nullptr;
};

// *amax_bits = the bf16 pattern of max |x| over x [n] (NaN skipped); *amax_bits must start at 0.
Status launch_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits, cudaStream_t stream);

Status launch_gemm_model(const GemmOperands& op, cudaStream_t stream);
// emulate: the MMA instruction replaced by its exact software emulation (runs on any GPU).
Status launch_sm120_gemm(const GemmOperands& op, bool emulate, int sm_count, cudaStream_t stream);

}  // namespace nvfp4::cuda
