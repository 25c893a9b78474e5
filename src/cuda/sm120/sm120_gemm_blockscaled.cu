// NVFP4 GEMM for SM120/SM121 (RTX 50, GB10) on the native block-scaled MMA
//   mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
// persistent over output tiles, sequential K (one accumulator per output, +0 start, k64 chunks in
// increasing K: the §4 "sequential" contract) with a fused alpha-before-bf16 epilogue, or split-K:
// one work item per (tile, K slice) writing fp32 partials that launch_merge_splitk combines.
//
// The same source builds an emulated variant in which only the MMA instruction is replaced by an
// exact software emulation that reads the very same fragment registers (§5's maps) and runs the
// §3 model: on a Hopper GPU it validates this kernel's tiling, fragment loads, scale selection and
// epilogue bit for bit against the CPU oracle. On sm_120a/sm_121a the native variant issues the
// real instruction.
#include <cuda_runtime.h>

#include <algorithm>

#include "../common/check.cuh"
#include "../common/chunk_model.cuh"
#include "../common/kernels.hpp"
#include "../common/numerics.cuh"
#include "../common/swizzle.cuh"
#include "mma_sm120.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpM = 16;                 // one m16 MMA row block per warp
constexpr int kWarpN8 = 4;                 // four n8 MMAs per warp
constexpr int kTileM = kWarps * kWarpM;    // 64
constexpr int kTileN = kWarpN8 * 8;        // 32
constexpr int kChunkBytes = 32;            // 64 E2M1 codes per row per MMA
static_assert(kTileM == 64 && kTileN == 32, "tile shape is part of the kernel's identity");
static_assert(kChunkBytes * 2 == 64, "k64 per MMA");

__device__ __forceinline__ uint32_t ld_u32_or_zero(const uint8_t* base, int64_t row, int64_t rows, int64_t pitch,
                                                   int64_t byte) {
  return row < rows ? __ldg(reinterpret_cast<const uint32_t*>(base + row * pitch + byte)) : 0u;
}

template <bool kEmulate, bool kStreamA>
__global__ void __launch_bounds__(kThreads) sm120_gemm_blockscaled(GemmOperands op) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t lda = op.k64 / 2, cp = op.k64 / 16;
  // Streaming: the activation's dynamic scale and alpha, from the amax the launcher reduced.
  float s_x = 0.0f, rcp_s = 0.0f, alpha = op.alpha;
  if constexpr (kStreamA) {
    s_x = dynamic_global_scale(*op.x_amax);
    rcp_s = rcp_approx_ftz(s_x);
    alpha = __fmul_rn(s_x, op.s_w);  // f32_rn(s_x * s_w), §2.4
    if (blockIdx.x == 0 && threadIdx.x == 0 && op.s_x_out) *op.s_x_out = s_x;
  }
  // Packed A: alpha, or the device alpha (gemm_alpha), read once per CTA into shared memory, where
  // the epilogue finds it: held in a register through the K loop, or read there, it took the native
  // kernel from 64 to 80 registers (six CTAs per SM of the launcher's eight).
  __shared__ float alpha_shared;
  if constexpr (!kStreamA) {
    if (threadIdx.x == 0) alpha_shared = gemm_alpha(op.alpha_a, op.alpha_w, op.alpha);
    __syncthreads();
  }
  const int64_t tiles_m = (op.m + kTileM - 1) / kTileM, tiles_n = (op.n + kTileN - 1) / kTileN;
  const int64_t tiles = tiles_m * tiles_n;
  // Persistent: each CTA walks work items (tile, K slice); consecutive CTAs take consecutive n
  // tiles of one m row so the weight panel (the big operand at small M) streams once while A stays
  // in L2. Sequential K has one slice.
  for (int64_t item = blockIdx.x; item < tiles * op.splits; item += gridDim.x) {
    const int64_t tile = item % tiles;
    const int slice = static_cast<int>(item / tiles);
    const int64_t m0 = (tile % tiles_m) * kTileM + warp * kWarpM;
    const int64_t n0 = (tile / tiles_m) * kTileN;
    float acc[kWarpN8][4];
#pragma unroll
    for (int j = 0; j < kWarpN8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

    int64_t q0, q1;
    slice_chunks(op, slice, q0, q1);
    // One chunk per iteration: tools/check-sass counts the MMAs of one iteration against the design.
#pragma unroll 1
    for (int64_t q = q0; q < q1; ++q) {
      uint32_t a[4], sfa;
      if constexpr (kStreamA) {
        produce_a_stream(op, m0, q, s_x, rcp_s, a, sfa);
      } else {
        // A fragment (§5): a0 row g, a1 row g+8, a2/a3 the same rows 16 bytes further.
        a[0] = ld_u32_or_zero(op.a, m0 + g, op.m, lda, q * kChunkBytes + 4 * t);
        a[1] = ld_u32_or_zero(op.a, m0 + g + 8, op.m, lda, q * kChunkBytes + 4 * t);
        a[2] = ld_u32_or_zero(op.a, m0 + g, op.m, lda, q * kChunkBytes + 16 + 4 * t);
        a[3] = ld_u32_or_zero(op.a, m0 + g + 8, op.m, lda, q * kChunkBytes + 16 + 4 * t);
        // SF_A: lanes with t = 0 / 1 supply rows g / g+8; the other lanes' registers are not read.
        const int64_t sa_row = m0 + g + 8 * t;
        sfa = (t < 2 && sa_row < op.m) ? load_chunk_scales(op.sfa, sa_row, q, cp) : 0u;
      }
#pragma unroll
      for (int j = 0; j < kWarpN8; ++j) {
        const int64_t nb = n0 + 8 * j;
        uint32_t b[2];
        b[0] = ld_u32_or_zero(op.w, nb + g, op.n, lda, q * kChunkBytes + 4 * t);
        b[1] = ld_u32_or_zero(op.w, nb + g, op.n, lda, q * kChunkBytes + 16 + 4 * t);
        const uint32_t sfb = (t == 0 && nb + g < op.n) ? load_chunk_scales(op.sfw, nb + g, q, cp) : 0u;
        float d[4];
        if constexpr (kEmulate) mma_emulated(d, a, b, acc[j], sfa, sfb);
        else mma_native(d, a, b, acc[j], sfa, sfb);
        acc[j][0] = d[0]; acc[j][1] = d[1]; acc[j][2] = d[2]; acc[j][3] = d[3];
      }
    }
    // Fused epilogue (split-K: the slice's partial): C/D map c0,c1 = row g cols 2t,2t+1; c2,c3 = row g+8.
    const float alpha_t = kStreamA ? alpha : alpha_shared;
#pragma unroll
    for (int j = 0; j < kWarpN8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = m0 + g + 8 * (e >> 1), col = n0 + 8 * j + 2 * t + (e & 1);
        if (row < op.m && col < op.n && op.splits > 1) {
          op.partials[(slice * op.m + row) * op.n + col] = acc[j][e];
        } else if (row < op.m && col < op.n) {
          if (op.raw) op.raw[row * op.n + col] = acc[j][e];
          op.out[row * op.n + col] =
              epilogue_alpha_before_bf16(acc[j][e], alpha_t, op.bias ? bf16_to_f32(op.bias[col]) : -0.0f);
        }
      }
  }
}

}  // namespace

Status launch_sm120_gemm(const GemmOperands& op, bool emulate, int sm_count, cudaStream_t stream) {
  const int64_t items = ((op.m + kTileM - 1) / kTileM) * ((op.n + kTileN - 1) / kTileN) * op.splits;
  const int64_t grid = std::min<int64_t>(items, static_cast<int64_t>(sm_count) * 8);  // persistent
  const unsigned gr = static_cast<unsigned>(grid);
  if (op.x) {
    if (emulate) sm120_gemm_blockscaled<true, true><<<gr, kThreads, 0, stream>>>(op);
    else sm120_gemm_blockscaled<false, true><<<gr, kThreads, 0, stream>>>(op);
  } else {
    if (emulate) sm120_gemm_blockscaled<true, false><<<gr, kThreads, 0, stream>>>(op);
    else sm120_gemm_blockscaled<false, false><<<gr, kThreads, 0, stream>>>(op);
  }
  NVFP4_CUDA_LAUNCH_TRY(emulate ? "sm120_gemm_blockscaled<emulated>" : "sm120_gemm_blockscaled<native>");
  return Status::ok();
}

}  // namespace nvfp4::cuda
