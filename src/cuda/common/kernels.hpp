// Host launchers of the CUDA kernels: plain structs and raw device pointers in, Status out.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../split_plan.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/error.hpp"

namespace nvfp4::cuda {

// Whether `kernel` runs on a GPU of compute capability major.minor with this build's code, or why not
// (a line naming `where`, the GPU): sm90 needs Hopper and the native SM120 kernels SM120/SM121, each
// with the image built for exactly that GPU's architecture-specific features.
Status check_kernel_runs_on(GpuGemmKernel kernel, int major, int minor, const std::string& where);

// [rows][cols] bf16 -> data [rows16][cols16/2] u8 + scales (swizzled 128x4 or linear), comfy-cuda,
// global scale s, or *s_dev (device memory, read by the kernel) when s_dev is set.
Status launch_quantize_comfy(const uint16_t* x, int64_t rows, int64_t cols, float s, uint8_t* data,
                             uint8_t* scales, bool hi_first, bool swizzled, cudaStream_t stream,
                             const float* s_dev = nullptr);

// GEMM operands as every GEMM kernel here reads them.
struct GemmOperands {
  const uint8_t* a;     // [M][lda] u8, lo_first, K zero-padded to a multiple of 64; lda = K64/2
  const uint8_t* w;     // [N][lda] u8, lo_first
  const uint8_t* sfa;   // 128x4 swizzled, roundup(M,128) x K64/16, zero padded
  const uint8_t* sfw;   // 128x4 swizzled, roundup(N,128) x K64/16
  int64_t m, n, k64;
  float alpha;          // or, when alpha_a is set (below), formed on the device
  const uint16_t* bias; // [N] bf16 or null
  float* raw;           // [M][N] f32 accumulators, or null: not written (production calls want out alone)
  uint16_t* out;        // [M][N] bf16
  // Streaming A producer (SM120 kernel only): when x is set, A is quantized inside the GEMM from
  // bf16 x [M][k] with the comfy-cuda recipe and the dynamic scale made from *x_amax (the bf16
  // pattern of max |x|); a and sfa are not read, alpha = f32_rn(s_x * s_w), s_x is written to *s_x_out.
  const uint16_t* x = nullptr;
  int64_t k = 0;
  const uint32_t* x_amax = nullptr;
  float s_w = 0.0f;
  float* s_x_out = nullptr;
  // Split-K (a contract with S > 1, planned by split_plan.hpp): work item (tile, slice j) runs
  // chunks [slice_q[j], slice_q[j + 1]) from +0 and stores its fp32 partial at
  // partials[(j * M + row) * N + col]; raw and out are then written by launch_merge_splitk alone.
  // splits = 1: sequential K with the fused epilogue (slice_q and partials unused).
  int splits = 1;
  uint8_t merge = 0;  // model::Merge of the contract
  float* partials = nullptr;
  int32_t slice_q[kMaxSlices + 1] = {};
  // Not streaming: alpha = f32_rn(*alpha_a * *alpha_w) from A's and W's fp32 global scales in device
  // memory when alpha_a is set (both or neither; gemm_alpha), read by the kernels and the merge, so
  // the host never waits for them; else alpha. Last, so that positional initialisers stay valid.
  const float* alpha_a = nullptr;
  const float* alpha_w = nullptr;
};

// comfy-cuda dequantization (§2.5) of a [rows][cols] NVFP4 tensor (cols a multiple of 16, data at
// pitch cols/2, swizzled scales) into bf16 [rows][cols]; global scale s, or *s_dev when set.
Status launch_dequantize_comfy(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float s, bool hi_first,
                               uint16_t* out, cudaStream_t stream, const float* s_dev = nullptr);

// Fills op's split-K fields from a plan; partials must hold plan.splits * M * N floats.
inline void set_slices(GemmOperands& op, const SlicePlan& plan, float* partials) {
  op.splits = plan.splits;
  op.merge = static_cast<uint8_t>(plan.merge);
  op.partials = plan.splits > 1 ? partials : nullptr;
  for (size_t j = 0; j < plan.bounds.size(); ++j) op.slice_q[j] = plan.bounds[j];
}

// The chunk range [q0, q1) of split-K slice s (the whole K when op.splits == 1).
__host__ __device__ inline void slice_chunks(const GemmOperands& op, int s, int64_t& q0, int64_t& q1) {
  q0 = op.splits > 1 ? op.slice_q[s] : 0;
  q1 = op.splits > 1 ? op.slice_q[s + 1] : op.k64 / 64;
}

// *amax_bits = the bf16 pattern of max |x| over x [n] (NaN skipped); *amax_bits must start at 0.
Status launch_amax_bf16(const uint16_t* x, int64_t n, uint32_t* amax_bits, cudaStream_t stream);
// The same maximum in amax_partial_count(n) pieces, partials[b] = block b's (no zeroed word, no
// atomics: their maximum is *amax_bits's value, the max being exact in any order). Each block
// lets a programmatic dependent launch start as it ends (griddepcontrol.launch_dependents).
constexpr int64_t kAmaxMaxBlocks = 1024;  // the amax pass's grid at most (one atomic or one piece per block)
int64_t amax_partial_count(int64_t n);
Status launch_amax_bf16_partials(const uint16_t* x, int64_t n, uint32_t* partials, cudaStream_t stream);

Status launch_gemm_model(const GemmOperands& op, cudaStream_t stream);
// emulate: the MMA instruction replaced by its exact software emulation (runs on any GPU).
Status launch_sm120_gemm(const GemmOperands& op, bool emulate, int sm_count, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Hopper exact path (src/cuda/sm90/, docs/hopper-exact-path.md).
namespace sm90 {
struct TokenRec;
struct TileRec;
}
// Activation pre-pass: the scale-folded fp16 operand A' [mp][chunks*64] (mp = roundup(m, bm * tw),
// padding tokens repeat token m-1) and the records of the fast-path tests, per block of bm tokens:
// the block's tile record atile [chunks][mp/bm], its four thread-group records agroup
// [mp/bm][chunks][4] (consumer thread t holds tokens 8j + 2t and 8j + 2t + 1) and the per-token
// records trec [mp/bm][chunks][bm]. From packed A (a, sfa as GemmOperands) or, when x is set, from
// bf16 x [m][k] quantized here with the comfy-cuda recipe: scale *x_amax's dynamic one, or s_static
// when > 0; then alpha_out = f32_rn(s_x * s_w) and s_x_out (both optional) are written. From packed
// A with alpha_a and alpha_w (A's and W's fp32 global scales in device memory) set, alpha_out =
// f32_rn(*alpha_a * *alpha_w) is written instead. From bf16 x with alpha_a set (s_static 0, no
// amax): *alpha_a is the static input scale, read by the pre-pass (the host never waits for it),
// and x is quantized and alpha_out = f32_rn(*alpha_a * s_w) formed as with that value in s_static.
struct Sm90Prep {
  const uint8_t* a = nullptr;
  const uint8_t* sfa = nullptr;
  const uint16_t* x = nullptr;
  int64_t k = 0;                    // x's columns
  const uint32_t* x_amax = nullptr;
  // Or workspace for launch_sm90_prep's own amax pass (amax_partial_count(m * k) words; used when
  // x_amax is null): per-block maxima that the pre-pass reduces after a programmatic dependent
  // launch where the activation is small, the single word in its first entry otherwise.
  uint32_t* x_amax_partials = nullptr;
  float s_static = 0.0f, s_w = 0.0f;
  float* alpha_out = nullptr;
  float* s_x_out = nullptr;
  const float* alpha_a = nullptr;   // A's global scale in device memory: packed A's, or x's static one
  const float* alpha_w = nullptr;
  int64_t m = 0, chunks = 0, mp = 0;
  int bm = 0;
  // Chunks per CTA of the pre-pass: 0 the launcher's choice (several for large activations), 1,
  // 2 or 4 (more than one needs bm >= 64, and for bf16 x at most 2 and a scale other than the amax
  // pieces).
  int chunks_per_cta = 0;
  uint16_t* a16 = nullptr;          // fp16 bits
  sm90::TokenRec* trec = nullptr;
  sm90::TileRec* atile = nullptr;
  sm90::TileRec* agroup = nullptr;
};
Status launch_sm90_prep(const Sm90Prep& p, cudaStream_t stream);

// Device-side operand preparation for the sm90 path (common/sm_any_prepack_sm90.cu), any GPU.
// A packed weight in device memory: rows [n] of row_bytes valid bytes at pitch bytes (hi_first or
// lo_first codes), and its 128x4 swizzled scales with chunks * 4 columns (rows padded to 128).
struct Sm90WeightSource {
  const uint8_t* data = nullptr;
  int64_t pitch = 0, row_bytes = 0, n = 0, chunks = 0;
  bool hi_first = true;
  const uint8_t* sf = nullptr;
};
// Writes exactly what sm90::prepack_weight_blocks produces on the host for the same weight:
// chunks * ceil(n / 64) blocks of sm90::kWBlockBytes.
Status launch_sm90_prepack_weight(const Sm90WeightSource& s, uint8_t* blocks, cudaStream_t stream);
// dst [m][lda] = src's rows [m] (row_bytes valid bytes at pitch) in lo_first order, zero past
// row_bytes: packed A as the sm90 pre-pass and the GEMM kernels read it (lda = K64/2).
Status launch_pack_lo_first(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t m, bool hi_first, int64_t lda,
                            uint8_t* dst, cudaStream_t stream);

struct Sm90Gemm {
  const uint16_t* a16 = nullptr;    // the pre-pass outputs
  const sm90::TokenRec* trec = nullptr;
  const sm90::TileRec* atile = nullptr;
  const sm90::TileRec* agroup = nullptr;
  const uint8_t* wblk = nullptr;    // sm90::prepack_weight_blocks
  int64_t m = 0, n = 0, chunks = 0, mp = 0;
  int bm = 128, rw = 2, tw = 1, nh = 1, ks = 1;  // the tile configuration (sm90::Config)
  const float* alpha_dev = nullptr; // device alpha (streaming), else alpha
  float alpha = 1.0f;
  const uint16_t* bias = nullptr;
  float* raw = nullptr;             // optional [m][n] fp32
  uint16_t* out = nullptr;          // [m][n] bf16
  // Optional path counters (atomics, off the hot loop), kCounts of them: [0] element steps, [1]
  // thread-chunks whose tile test failed, [2] ... whose thread-group test failed too (per-element
  // tests ran), [3] element steps evaluated by the §3 model.
  static constexpr int kCounts = 4;
  unsigned long long* counts = nullptr;
  // The pre-pass that wrote a16/trec/atile/agroup (and alpha_dev) is the kernel launched right
  // before in the same stream: the GEMM may then start under it (programmatic dependent launch).
  bool after_prepass = false;
};
Status launch_sm90_gemm(const Sm90Gemm& p, int sm_count, cudaStream_t stream);
// The tile configuration the launcher picks for m x n on sm_count SMs ("BMxRWxTWxNH[xKS]" in
// NVFP4_SM90_CONFIG overrides it, for tuning runs).
void sm90_pick_config(int64_t m, int64_t n, int sm_count, int& bm, int& rw, int& tw, int& nh, int& ks);
// The configurations built, as "BMxRWxTWxNH[xKS]", and the one picked for m x n on sm_count SMs.
std::vector<std::string> sm90_config_names();
std::string sm90_config_name_for(int64_t m, int64_t n, int sm_count);

// The pipelined SM120 kernel (sm120/sm120_gemm_pipelined.cu): native MMA, its exact emulation, or
// the memory-path proxy (a register-only stand-in for the MMA: times the data path; output meaningless).
enum class Sm120pMode { kNative, kEmulated, kProxy };
Status launch_sm120p_gemm(const GemmOperands& op, Sm120pMode mode, int sm_count, cudaStream_t stream);
// The tile width (64 or 128 columns) the pipelined kernel launches an m x n GEMM in `splits` K
// slices with on sm_count SMs.
Result<int> sm120p_tile_n(int64_t m, int64_t n, int splits, int sm_count);

// Launches `kernel` (gpu-model, sm120-*, sm120p-*) on op and, under split-K (op.splits > 1), the
// merge of its partials in slice order: the whole GEMM under op's contract.
Status launch_gemm_kernel(const GemmOperands& op, GpuGemmKernel kernel, int sm_count, cudaStream_t stream);

// Split-K: every output of op (raw and out) from its op.splits partials, merged in slice order
// with op.merge and the alpha-before-bf16 epilogue (alpha from op.x_amax when A is streamed).
Status launch_merge_splitk(const GemmOperands& op, cudaStream_t stream);

}  // namespace nvfp4::cuda
