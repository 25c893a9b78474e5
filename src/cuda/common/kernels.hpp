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

// comfy-cuda dequantization (§2.5) of a [rows][cols] NVFP4 tensor (cols a multiple of 16, data at
// pitch cols/2, swizzled scales) into bf16 [rows][cols].
Status launch_dequantize_comfy(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float s, bool hi_first,
                               uint16_t* out, cudaStream_t stream);

// *amax_bits = the bf16 pattern of max |x| over x [n] (NaN skipped); *amax_bits must start at 0.
Status launch_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits, cudaStream_t stream);

Status launch_gemm_model(const GemmOperands& op, cudaStream_t stream);
// emulate: the MMA instruction replaced by its exact software emulation (runs on any GPU).
Status launch_sm120_gemm(const GemmOperands& op, bool emulate, int sm_count, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Hopper exact path (src/cuda/sm90/, docs/hopper-exact-path.md).
namespace sm90 {
struct TokenRec;
struct GroupRec;
struct WRec;
}
// Activation pre-pass: the scale-folded fp16 operand A' [mp][chunks*64] (mp = roundup(m, bm),
// padding tokens repeat token m-1), the per-token records [mp/bm][chunks][bm] and the per-thread
// group records [mp/bm][chunks][4]. From packed A (a, sfa as GemmOperands) or, when x is set, from bf16
// x [m][k] quantized here with the comfy-cuda recipe: scale *x_amax's dynamic one, or s_static
// when > 0; then alpha_out = f32_rn(s_x * s_w) and s_x_out (both optional) are written.
struct Sm90Prep {
  const uint8_t* a = nullptr;
  const uint8_t* sfa = nullptr;
  const uint16_t* x = nullptr;
  int64_t k = 0;                    // x's columns
  const uint32_t* x_amax = nullptr;
  float s_static = 0.0f, s_w = 0.0f;
  float* alpha_out = nullptr;
  float* s_x_out = nullptr;
  int64_t m = 0, chunks = 0;
  int bm = 0;
  uint16_t* a16 = nullptr;          // fp16 bits
  sm90::TokenRec* trec = nullptr;
  sm90::GroupRec* grec = nullptr;
};
Status launch_sm90_prep(const Sm90Prep& p, cudaStream_t stream);

struct Sm90Gemm {
  const uint16_t* a16 = nullptr;    // the pre-pass outputs
  const sm90::TokenRec* trec = nullptr;
  const sm90::GroupRec* grec = nullptr;
  const uint8_t* wq = nullptr;      // sm90::prepack_weight_codes
  const uint8_t* sfw = nullptr;     // 128x4 swizzled, rows padded to 128
  const sm90::WRec* wrec = nullptr; // sm90::prepack_weight_records
  int64_t m = 0, n = 0, chunks = 0;
  int bm = 0;                       // tokens per tile: 8, 16, 32, 48, 64, 96 or 128
  const float* alpha_dev = nullptr; // device alpha (streaming), else alpha
  float alpha = 1.0f;
  const uint16_t* bias = nullptr;
  float* raw = nullptr;             // optional [m][n] fp32
  uint16_t* out = nullptr;          // [m][n] bf16
  // Optional path counters (atomics, off the hot loop): [0] element steps, [1] thread-chunks whose
  // per-thread test failed (per-element tests ran), [2] element steps evaluated by the §3 model.
  unsigned long long* counts = nullptr;
};
Status launch_sm90_gemm(const Sm90Gemm& p, int sm_count, cudaStream_t stream);
// The tile height (tokens per CTA tile) the launcher picks for m x n on sm_count SMs.
int sm90_pick_bm(int64_t m, int64_t n, int sm_count);

}  // namespace nvfp4::cuda
