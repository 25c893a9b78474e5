// sm90 activation pre-pass: turns the activation (NVFP4 A, or bf16 x quantized here exactly as
// ComfyUI does) into what the sm90 GEMM reads: A' = e2m1(a) * s_a in fp16 (exact: at most 6
// significant bits, 2^-10 <= |a'| <= 2688), and the records of the fast-path tests
// (src/model/hopper_exact.hpp): per token, per thread group and per block of bm tokens. No NVFP4
// copy of A is written. One CTA per (token block, chunk), one thread per token.
#include <cuda_fp16.h>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/numerics.cuh"
#include "../common/swizzle.cuh"
#include "../../model/hopper_exact.hpp"
#include "sm90_layout.hpp"
#include "sm90_ptx.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kMaxBm = 256;  // tokens per block: the tallest warpgroup tile

__global__ void __launch_bounds__(kMaxBm) sm90_prep_a(Sm90Prep p) {
  sm90::launch_dependents();  // the GEMM may start now: it waits for this grid before reading its outputs
  const int i = threadIdx.x;
  const int64_t tile = blockIdx.x, c = blockIdx.y;
  const int64_t m = tile * p.bm + i, src = m < p.m ? m : p.m - 1;  // padding tokens repeat the last
  const int64_t k64 = p.chunks * 64;
  float v[64];
  uint32_t sf4 = 0;
  if (p.x) {
    // comfy-cuda recipe (§2.1) on the token's 64 values of this chunk; zeros past K as the
    // quantizer's padding; blocks starting at or past K16 do not exist in the tensor: scale 0.
    float s = p.s_static;
    if (s <= 0.0f) s = dynamic_global_scale(*p.x_amax);
    if (tile == 0 && c == 0 && i == 0) {
      if (p.alpha_out) *p.alpha_out = __fmul_rn(s, p.s_w);  // f32_rn(s_x * s_w), §2.4
      if (p.s_x_out) *p.s_x_out = s;
    }
    const float rcp_s = rcp_approx_ftz(s);
    const int64_t k16 = (p.k + 15) / 16 * 16;
    const uint16_t* row = p.x + src * p.k;
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const int64_t k0 = c * 64 + 16 * g;
      float xf[16];
      if (k0 + 16 <= p.k && p.k % 8 == 0) {
        const uint4* q = reinterpret_cast<const uint4*>(row + k0);
        const uint4 u0 = __ldg(q), u1 = __ldg(q + 1);
        const uint32_t w[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          xf[2 * e] = __uint_as_float(w[e] << 16);
          xf[2 * e + 1] = __uint_as_float(w[e] & 0xFFFF0000u);
        }
      } else {
#pragma unroll
        for (int e = 0; e < 16; ++e) xf[e] = k0 + e < p.k ? bf16_to_f32(row[k0 + e]) : 0.0f;
      }
      if (k0 >= k16) {
#pragma unroll
        for (int e = 0; e < 16; ++e) v[16 * g + e] = 0.0f;
        continue;
      }
      float amax = 0.0f;  // step 1, NaN ignored
#pragma unroll
      for (int e = 0; e < 16; ++e) amax = fmaxf(amax, fabsf(xf[e]));
      const BlockEncoding enc = comfy_block_encoding(amax, s, rcp_s);  // steps 2-6
      sf4 |= static_cast<uint32_t>(enc.sf) << (8 * g);
      const float sv = hopper::scale_value(enc.sf);  // the quantizer never writes a NaN scale
#pragma unroll
      for (int e = 0; e < 16; ++e) {
        const uint32_t code = e2m1_rn_sat(fmul_rn_ftz(enc.e, xf[e]));  // step 7
        v[16 * g + e] = __fmul_rn(e2m1_value(code), sv);  // exact
      }
    }
  } else {
    const int64_t lda = k64 / 2, cp = k64 / 16;
    sf4 = load_chunk_scales(p.sfa, src, c, cp);
    const uint4 raw[2] = {__ldg(reinterpret_cast<const uint4*>(p.a + src * lda + c * 32)),
                          __ldg(reinterpret_cast<const uint4*>(p.a + src * lda + c * 32 + 16))};
    const uint32_t w[8] = {raw[0].x, raw[0].y, raw[0].z, raw[0].w, raw[1].x, raw[1].y, raw[1].z, raw[1].w};
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const uint8_t b = static_cast<uint8_t>(sf4 >> (8 * g));
      const float sv = (b & 0x7F) == 0x7F ? 0.0f : hopper::scale_value(b);  // NaN scales: the slow path says NaN
#pragma unroll
      for (int e = 0; e < 16; ++e) {
        const int k = 16 * g + e;
        const uint32_t code = (w[k / 8] >> (4 * (k % 8))) & 0xF;  // lo_first
        v[k] = __fmul_rn(e2m1_value(code), sv);
      }
    }
  }

  // A' row chunk (128 bytes) and the token's record.
  float asum[4];
  uint32_t h[32];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < 16; ++e) s = __fadd_rn(s, fabsf(v[16 * g + e]));  // exact: <= 12 significant bits
    asum[g] = s;
  }
#pragma unroll
  for (int e = 0; e < 32; ++e) {
    const __half2 hv = __floats2half2_rn(v[2 * e], v[2 * e + 1]);  // exact
    h[e] = *reinterpret_cast<const uint32_t*>(&hv);
  }
  uint4* dst = reinterpret_cast<uint4*>(p.a16 + m * k64 + c * 64);
#pragma unroll
  for (int e = 0; e < 8; ++e) dst[e] = make_uint4(h[4 * e], h[4 * e + 1], h[4 * e + 2], h[4 * e + 3]);
  const hopper::RowChunk rc = hopper::activation_chunk(sf4, asum);
  sm90::TokenRec tr{};
  for (int g = 0; g < 4; ++g) tr.mag[g] = rc.mag[g];
  tr.sf = sf4;
  tr.lo = static_cast<int16_t>(rc.lo);
  tr.hi = static_cast<int16_t>(rc.hi);
  tr.nan = rc.nan;
  p.trec[(tile * p.chunks + c) * p.bm + i] = tr;  // [token block][chunk][token]

  // The block's tile record and the four thread-group records (thread t of a consumer warpgroup
  // holds tokens 8j + 2t and 8j + 2t + 1): maxima over the rows. tile_add and tile_merge are
  // max / min / or, so the order is free: thread (record q, group of 8 rows j) folds its rows,
  // then five threads merge the bm / 8 partials. (One thread walking all bm rows took ~5 us at
  // bm = 128, the pre-pass's longest chain.)
  __shared__ hopper::RowChunk rows[kMaxBm];
  __shared__ float mags[kMaxBm][4];
  __shared__ hopper::TileChunk part[5][kMaxBm / 8];
  rows[i] = rc;
  for (int g = 0; g < 4; ++g) mags[i][g] = asum[g];
  __syncthreads();
  const int groups = p.bm / 8;  // 5 * groups <= bm threads
  if (i < 5 * groups) {
    const int q = i / groups, j = i % groups;
    hopper::TileChunk t;
    hopper::tile_init(t);
    for (int r8 = 0; r8 < 8; ++r8)
      if (q == 4 || r8 / 2 == q) hopper::tile_add(t, rows[8 * j + r8], mags[8 * j + r8]);
    part[q][j] = t;
  }
  __syncthreads();
  if (i < 5) {
    hopper::TileChunk t = part[i][0];
    for (int j = 1; j < groups; ++j) hopper::tile_merge(t, part[i][j]);
    const sm90::TileRec rec = sm90::tile_rec(t);
    const int64_t blocks = p.mp / p.bm;
    if (i == 4) p.atile[c * blocks + tile] = rec;           // [chunk][token block]: one bulk copy per CTA and stage
    else p.agroup[(tile * p.chunks + c) * 4 + i] = rec;     // [token block][chunk][t]
  }
}

}  // namespace

Status launch_sm90_prep(const Sm90Prep& p, cudaStream_t stream) {
  if (p.bm <= 0 || p.bm > kMaxBm || p.bm % 8 != 0) return invalid_argument("sm90 pre-pass: tile height must be 8..256, a multiple of 8");
  if (p.m <= 0 || p.chunks <= 0) return invalid_argument("sm90 pre-pass: empty activation");
  if (p.mp < p.m || p.mp % p.bm != 0) return invalid_argument("sm90 pre-pass: padded rows must be a multiple of the block, >= m");
  const int64_t tiles = p.mp / p.bm;
  if (tiles > 0x7FFFFFFF || p.chunks > 65535) return invalid_argument("sm90 pre-pass: activation too large for one launch");
  sm90_prep_a<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(p.chunks)), p.bm, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a");
  return Status::ok();
}

}  // namespace nvfp4::cuda
