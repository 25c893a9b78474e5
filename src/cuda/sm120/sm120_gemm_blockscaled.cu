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

#if defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL)
#define NVFP4_HAVE_NATIVE_MXF4NVF4 1
#endif

__device__ __forceinline__ void mma_native(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                           const float (&c)[4], uint32_t sfa, uint32_t sfb) {
#if defined(NVFP4_HAVE_NATIVE_MXF4NVF4)
  // Scale selectors 0 (byte-id 0, thread-id 0), as CUTLASS passes them (§5).
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
      "{%0,%1,%2,%3},{%4,%5,%6,%7},{%8,%9},{%10,%11,%12,%13},{%14},{%15,%16},{%17},{%18,%19};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]), "r"(sfa), "h"(uint16_t{0}), "h"(uint16_t{0}), "r"(sfb), "h"(uint16_t{0}), "h"(uint16_t{0}));
#else
  __trap();  // the host never launches the native variant on a GPU without the instruction
#endif
}

// The instruction's semantics from the fragments alone (§5): every lane gathers the full rows and
// columns its four outputs need from the lanes that hold them.
__device__ __forceinline__ void mma_emulated(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                             const float (&c)[4], uint32_t sfa, uint32_t sfb) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  uint32_t row0[8], row1[8], col0[8], col1[8];
#pragma unroll
  for (int tt = 0; tt < 4; ++tt) {
    const int src_a = 4 * g + tt;            // a0/a2: row g, a1/a3: row g+8; K 8tt.. and 32+8tt..
    row0[tt] = __shfl_sync(0xFFFFFFFFu, a[0], src_a);
    row0[4 + tt] = __shfl_sync(0xFFFFFFFFu, a[2], src_a);
    row1[tt] = __shfl_sync(0xFFFFFFFFu, a[1], src_a);
    row1[4 + tt] = __shfl_sync(0xFFFFFFFFu, a[3], src_a);
    const int src_b0 = 4 * (2 * t) + tt, src_b1 = 4 * (2 * t + 1) + tt;  // b0: K 8tt.., b1: K 32+8tt..
    col0[tt] = __shfl_sync(0xFFFFFFFFu, b[0], src_b0);
    col0[4 + tt] = __shfl_sync(0xFFFFFFFFu, b[1], src_b0);
    col1[tt] = __shfl_sync(0xFFFFFFFFu, b[0], src_b1);
    col1[4 + tt] = __shfl_sync(0xFFFFFFFFu, b[1], src_b1);
  }
  // SF_A of row r comes from lane 4*(r%8) + r/8; SF_B of column n from lane 4n (selectors 0).
  const uint32_t sa0 = __shfl_sync(0xFFFFFFFFu, sfa, 4 * g), sa1 = __shfl_sync(0xFFFFFFFFu, sfa, 4 * g + 1);
  const uint32_t sb0 = __shfl_sync(0xFFFFFFFFu, sfb, 4 * (2 * t)), sb1 = __shfl_sync(0xFFFFFFFFu, sfb, 4 * (2 * t + 1));
  d[0] = chunk_element(row0, col0, sa0, sb0, c[0]);  // row g,   col 2t
  d[1] = chunk_element(row0, col1, sa0, sb1, c[1]);  // row g,   col 2t+1
  d[2] = chunk_element(row1, col0, sa1, sb0, c[2]);  // row g+8, col 2t
  d[3] = chunk_element(row1, col1, sa1, sb1, c[3]);  // row g+8, col 2t+1
}

// Streaming A producer: the warp's A fragment and SF_A register for chunk q, quantized here from
// bf16 x with the comfy-cuda recipe (the same steps as the quantizer kernel, NVFP4-SPEC.md §2.1).
// Register X of lane (g, t) holds row g + 8 (X & 1), K 32 (X >> 1) + 8t .. +7: half of block
// 2 (X >> 1) + t / 2, whose other half sits in lane t ^ 1; one shuffle completes the block's amax.
__device__ __forceinline__ void produce_a_stream(const GemmOperands& op, int64_t m0, int64_t q, float s_x, float rcp_s,
                                                 uint32_t (&a)[4], uint32_t& sfa) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  uint32_t sf_mine = 0;
#pragma unroll
  for (int X = 0; X < 4; ++X) {
    const int64_t row = m0 + g + 8 * (X & 1), k0 = q * 64 + 32 * (X >> 1) + 8 * t;
    float xf[8];
    if (row < op.m && k0 + 8 <= op.k && op.k % 8 == 0) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(op.x + row * op.k + k0));
      const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        xf[2 * i] = __uint_as_float(w[i] << 16);
        xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
      }
    } else {  // past M or K: zeros, exactly the quantized tensor's zero padding
#pragma unroll
      for (int i = 0; i < 8; ++i) xf[i] = (row < op.m && k0 + i < op.k) ? bf16_to_f32(op.x[row * op.k + k0 + i]) : 0.0f;
    }
    float amax = 0.0f;  // step 1, NaN ignored
#pragma unroll
    for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(xf[i]));
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    const BlockEncoding enc = comfy_block_encoding(amax, s_x, rcp_s);  // steps 2-6
    uint32_t word = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) word |= e2m1_rn_sat(fmul_rn_ftz(enc.e, xf[i])) << (4 * i);  // step 7, lo_first
    a[X] = word;
    sf_mine |= static_cast<uint32_t>(enc.sf) << (8 * X);
  }
  // SF_A (selectors 0): lane t = 0 supplies row g, t = 1 row g + 8; byte j = block j, found in lane
  // 4g (blocks 0, 2) and 4g + 2 (blocks 1, 3) as the scale of register X = j's row parity.
  const uint32_t v0 = __shfl_sync(0xFFFFFFFFu, sf_mine, 4 * g), v2 = __shfl_sync(0xFFFFFFFFu, sf_mine, 4 * g + 2);
  const uint32_t row_g = (v0 & 0xFFu) | ((v2 & 0xFFu) << 8) | (((v0 >> 16) & 0xFFu) << 16) | (((v2 >> 16) & 0xFFu) << 24);
  const uint32_t row_g8 =
      ((v0 >> 8) & 0xFFu) | (((v2 >> 8) & 0xFFu) << 8) | (((v0 >> 24) & 0xFFu) << 16) | (((v2 >> 24) & 0xFFu) << 24);
  sfa = t == 0 ? row_g : (t == 1 ? row_g8 : 0u);
}

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
#pragma unroll
    for (int j = 0; j < kWarpN8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = m0 + g + 8 * (e >> 1), col = n0 + 8 * j + 2 * t + (e & 1);
        if (row < op.m && col < op.n && op.splits > 1) {
          op.partials[(slice * op.m + row) * op.n + col] = acc[j][e];
        } else if (row < op.m && col < op.n) {
          op.raw[row * op.n + col] = acc[j][e];
          op.out[row * op.n + col] =
              epilogue_alpha_before_bf16(acc[j][e], alpha, op.bias ? bf16_to_f32(op.bias[col]) : -0.0f);
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
