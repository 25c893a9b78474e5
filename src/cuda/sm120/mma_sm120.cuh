// The SM120/SM121 block-scaled MMA as the GEMM kernels issue it, and what stands in for it:
//   mma_native    mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X
//                 (sm_120a/sm_121a; traps elsewhere, where the host never launches it)
//   mma_emulated  the instruction's exact semantics from the same fragment registers (§5's maps)
//                 through the §3 model: validates a kernel's data path bit for bit on any GPU
//   mma_proxy_chunk  a register-only stand-in that consumes every fragment register of a chunk: a
//                 kernel built with it times its data path alone (the memory-path proxy on Hopper)
// and the streaming A producer that quantizes bf16 activations straight into A fragments.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "../common/chunk_model.cuh"
#include "../common/numerics.cuh"
#include "../common/kernels.hpp"

namespace nvfp4::cuda {

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

// The streaming A producer's steps (comfy-cuda, docs/numerics.md §2.1, the quantizer kernel's
// sequence), on eight elements at a time: both streaming producers (the fragment producer below and
// the shared-memory producer of sm120_gemm_pipelined.cu) are built from these, so they quantize alike.
//
// Eight bf16 elements of x's row `row`, K k0 .. k0 + 7, as floats; zeros past M or K, exactly the
// quantized tensor's zero padding.
__device__ __forceinline__ void stream_load_x8(const GemmOperands& op, int64_t row, int64_t k0, float (&xf)[8]) {
  if (row < op.m && k0 + 8 <= op.k && op.k % 8 == 0) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(op.x + row * op.k + k0));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      xf[2 * i] = __uint_as_float(w[i] << 16);
      xf[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) xf[i] = (row < op.m && k0 + i < op.k) ? bf16_to_f32(op.x[row * op.k + k0 + i]) : 0.0f;
  }
}
// Step 1 over eight elements: max |x| from +0, NaN ignored (a block's amax is the max of its halves').
__device__ __forceinline__ float stream_amax8(const float (&xf)[8]) {
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(xf[i]));
  return amax;
}
// Steps 7-8 for eight elements of a block whose encode factor is e: the codes, lo_first (element i
// in nibble i of the little-endian word, as packed A's bytes hold them).
__device__ __forceinline__ uint32_t stream_codes8(const float (&xf)[8], float e) {
  uint32_t word = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) word |= e2m1_rn_sat(fmul_rn_ftz(e, xf[i])) << (4 * i);
  return word;
}

// Streaming A producer: the warp's A fragment and SF_A register for chunk q, quantized here from
// bf16 x with the comfy-cuda recipe (the same steps as the quantizer kernel, docs/numerics.md §2.1).
// Register X of lane (g, t) holds row g + 8 (X & 1), K 32 (X >> 1) + 8t .. +7: half of block
// 2 (X >> 1) + t / 2, whose other half sits in lane t ^ 1; one shuffle completes the block's amax.
__device__ __forceinline__ void produce_a_stream(const GemmOperands& op, int64_t m0, int64_t q, float s_x, float rcp_s,
                                                 uint32_t (&a)[4], uint32_t& sfa) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  uint32_t sf_mine = 0;
#pragma unroll
  for (int X = 0; X < 4; ++X) {
    float xf[8];
    stream_load_x8(op, m0 + g + 8 * (X & 1), q * 64 + 32 * (X >> 1) + 8 * t, xf);
    float amax = stream_amax8(xf);
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    const BlockEncoding enc = comfy_block_encoding(amax, s_x, rcp_s);  // steps 2-6
    a[X] = stream_codes8(xf, enc.e);
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

// The shared-memory form: one whole 16-element block of x (row `row`, K k0 .. k0 + 15) -> its two
// code words (lo_first) and its UE4M3 scale byte.
__device__ __forceinline__ uint2 stream_quantize_block16(const GemmOperands& op, int64_t row, int64_t k0, float s_x,
                                                         float rcp_s, uint8_t& sf) {
  float lo[8], hi[8];
  stream_load_x8(op, row, k0, lo);
  stream_load_x8(op, row, k0 + 8, hi);
  const float amax = fmaxf(stream_amax8(lo), stream_amax8(hi));  // step 1
  const BlockEncoding enc = comfy_block_encoding(amax, s_x, rcp_s);  // steps 2-6
  sf = enc.sf;
  return make_uint2(stream_codes8(lo, enc.e), stream_codes8(hi, enc.e));
}

// Not MMAs: one integer mix of every fragment register of a warp's k64 chunk (all its MMAs' A, B and
// scale registers), folded into one accumulator with a float add so the compiler keeps every load.
// About one instruction per MMA, as an OMMA issue costs, so the proxy's time is the data path's and
// not the stand-in's (a mix per MMA cost ~12 instructions each and made the proxy issue-bound).
// The result is meaningless by design.
template <int kM, int kN>
__device__ __forceinline__ void mma_proxy_chunk(float& acc, const uint32_t (&a)[kM][4], const uint32_t (&b)[kN][2],
                                                const uint32_t (&sfa)[kM], const uint32_t (&sfb)[kN]) {
  uint32_t mix = 0;
#pragma unroll
  for (int i = 0; i < kM; ++i) mix ^= a[i][0] ^ a[i][1] ^ a[i][2] ^ a[i][3] ^ sfa[i];
#pragma unroll
  for (int j = 0; j < kN; ++j) mix ^= b[j][0] ^ b[j][1] ^ sfb[j];
  acc = __fadd_rn(acc, __uint_as_float(mix & 0x007FFFFFu));
}

}  // namespace nvfp4::cuda
