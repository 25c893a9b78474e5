// sm90 activation pre-pass: turns the activation (NVFP4 A, or bf16 x quantized here exactly as
// ComfyUI does) into what the sm90 GEMM reads: A' = e2m1(a) * s_a in fp16 (exact: at most 6
// significant bits, 2^-10 <= |a'| <= 2688), and the records of the fast-path tests
// (src/model/hopper_exact.hpp): per token, per thread group and per block of bm tokens. No NVFP4
// copy of A is written. One CTA per (token block, chunk), four threads per token (one per K block).
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

// max over the partial amax words, every thread of the CTA calling: the dynamic scale's amax.
__device__ uint32_t cta_amax(const uint32_t* partials, int count) {
  uint32_t m = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) m = max(m, partials[i]);
  m = __reduce_max_sync(0xFFFFFFFFu, m);
  __shared__ uint32_t warp_max[4 * kMaxBm / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  m = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) m = max(m, warp_max[w]);
  return m;
}

// t merged with lane (this lane ^ mask)'s t: every field a max, min or or (hopper::tile_merge), so the
// fold's order is free. Every lane of the warp calls it.
__device__ __forceinline__ void tile_merge_xor(hopper::TileChunk& t, int mask) {
  hopper::TileChunk u;
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    u.mag_n[g] = __shfl_xor_sync(0xFFFFFFFFu, t.mag_n[g], mask);
    u.mag[g] = __shfl_xor_sync(0xFFFFFFFFu, t.mag[g], mask);
  }
  u.lo = __shfl_xor_sync(0xFFFFFFFFu, t.lo, mask);
  u.hi = __shfl_xor_sync(0xFFFFFFFFu, t.hi, mask);
  u.nan = __shfl_xor_sync(0xFFFFFFFFu, static_cast<int>(t.nan), mask) != 0;
  hopper::tile_merge(t, u);
}

// kPartials: the dynamic scale's amax from the amax_partials words of x_amax_partials (written by
// the grid this one follows as a programmatic dependent launch), else from *x_amax. Two
// instantiations: with both in one kernel the packed-A pre-pass, which never reads the pieces, was
// about 5 % slower at 4096 tokens (H200, results v10).
template <bool kPartials>
__global__ void __launch_bounds__(4 * kMaxBm) sm90_prep_a(Sm90Prep p, int amax_partials) {
  sm90::launch_dependents();  // the GEMM may start now: it waits for this grid before reading its outputs
  // Four threads per token: thread (i, g) handles K block g (16 values) of token i's chunk, so the
  // four threads of a token read and write its 128-byte row chunk together.
  const int i = threadIdx.x / 4, g = threadIdx.x % 4;
  const int64_t tile = blockIdx.x, c = blockIdx.y;
  const int64_t m = tile * p.bm + i, src = m < p.m ? m : p.m - 1;  // padding tokens repeat the last
  const int64_t k64 = p.chunks * 64;
  float v[16];
  uint32_t sf = 0;  // block g's scale byte
  if (p.x) {
    // comfy-cuda recipe (§2.1) on the token's 16 values of block g; zeros past K as the
    // quantizer's padding; blocks starting at or past K16 do not exist in the tensor: scale 0.
    float s = p.s_static;
    if (s <= 0.0f) {
      // The partials come from the grid before this one (a programmatic dependent launch): wait
      // for it to finish. Every thread of the CTA gets here, as cta_amax needs.
      if constexpr (kPartials) {
        sm90::wait_prerequisites();
        s = dynamic_global_scale(cta_amax(p.x_amax_partials, amax_partials));
      } else {
        s = dynamic_global_scale(*p.x_amax);
      }
    }
    if (tile == 0 && c == 0 && threadIdx.x == 0) {
      if (p.alpha_out) *p.alpha_out = __fmul_rn(s, p.s_w);  // f32_rn(s_x * s_w), §2.4
      if (p.s_x_out) *p.s_x_out = s;
    }
    const float rcp_s = rcp_approx_ftz(s);
    const int64_t k16 = (p.k + 15) / 16 * 16;
    const uint16_t* row = p.x + src * p.k;
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
      for (int e = 0; e < 16; ++e) v[e] = 0.0f;
    } else {
      float amax = 0.0f;  // step 1, NaN ignored
#pragma unroll
      for (int e = 0; e < 16; ++e) amax = fmaxf(amax, fabsf(xf[e]));
      const BlockEncoding enc = comfy_block_encoding(amax, s, rcp_s);  // steps 2-6
      sf = enc.sf;
      const float sv = hopper::scale_value(enc.sf);  // the quantizer never writes a NaN scale
#pragma unroll
      for (int e = 0; e < 16; ++e) {
        const uint32_t code = e2m1_rn_sat(fmul_rn_ftz(enc.e, xf[e]));  // step 7
        v[e] = __fmul_rn(e2m1_value(code), sv);  // exact
      }
    }
  } else {
    const int64_t lda = k64 / 2, cp = k64 / 16;
    sf = (load_chunk_scales(p.sfa, src, c, cp) >> (8 * g)) & 0xFFu;
    const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p.a + src * lda + c * 32 + 8 * g));
    const uint32_t w[2] = {raw.x, raw.y};
    const float sv = (sf & 0x7F) == 0x7F ? 0.0f : hopper::scale_value(static_cast<uint8_t>(sf));  // NaN scales: the slow path says NaN
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      const uint32_t code = (w[e / 8] >> (4 * (e % 8))) & 0xF;  // lo_first
      v[e] = __fmul_rn(e2m1_value(code), sv);
    }
  }

  // A' (16 values, 32 bytes of the token's 128-byte row chunk) and the token's record.
  float asum = 0.0f;
#pragma unroll
  for (int e = 0; e < 16; ++e) asum = __fadd_rn(asum, fabsf(v[e]));  // exact: <= 12 significant bits, any order
  uint32_t h[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const __half2 hv = __floats2half2_rn(v[2 * e], v[2 * e + 1]);  // exact
    h[e] = *reinterpret_cast<const uint32_t*>(&hv);
  }
  uint4* dst = reinterpret_cast<uint4*>(p.a16 + m * k64 + c * 64 + 16 * g);
  dst[0] = make_uint4(h[0], h[1], h[2], h[3]);
  dst[1] = make_uint4(h[4], h[5], h[6], h[7]);
  // The token's four scale bytes and block sums, from its four threads (lanes 4i' .. 4i' + 3).
  uint32_t sf4 = sf << (8 * g);
  sf4 |= __shfl_xor_sync(0xFFFFFFFFu, sf4, 1, 4);
  sf4 |= __shfl_xor_sync(0xFFFFFFFFu, sf4, 2, 4);
  float asums[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) asums[j] = __shfl_sync(0xFFFFFFFFu, asum, j, 4);
  const hopper::RowChunk rc = hopper::activation_chunk(sf4, asums);  // every thread of the token: no broadcast
  if (g == 0) {  // the token's record, once
    sm90::TokenRec tr{};
    for (int j = 0; j < 4; ++j) tr.mag[j] = rc.mag[j];
    tr.sf = sf4;
    tr.lo = static_cast<int16_t>(rc.lo);
    tr.hi = static_cast<int16_t>(rc.hi);
    tr.nan = rc.nan;
    p.trec[(tile * p.chunks + c) * p.bm + i] = tr;  // [token block][chunk][token]
  }

  // The block's tile record and the four thread-group records (thread t of a consumer warpgroup
  // holds tokens 8j + 2t and 8j + 2t + 1, so group t is the tokens i with i % 8 / 2 == t: lanes
  // 8t .. 8t + 7 of every warp). tile_add and tile_merge are max / min / or, so the order is free:
  // each lane starts from its token's record, shuffles fold the warp's tokens (xor 4: the group's
  // two tokens; xor 8, 16: the warp's eight), and one warp per record folds the warps' partials.
  // Before 2026-12-04 ten (bm / 8 x 5) threads folded eight rows each from shared memory and five
  // merged the partials one by one: a chain of ~300-500 dependent instructions per CTA.
  hopper::TileChunk grp;
  hopper::tile_init(grp);
  hopper::tile_add(grp, rc, asums);
  tile_merge_xor(grp, 4);
  hopper::TileChunk all = grp;
  tile_merge_xor(all, 8);
  tile_merge_xor(all, 16);
  static_assert(kMaxBm % 8 == 0 && kMaxBm / 8 <= 32, "one warp folds the warps' partials: at most 32 warps");
  __shared__ hopper::TileChunk part[5][kMaxBm / 8];  // [group 0-3, tile][warp]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = p.bm / 8;
  if (lane % 8 == 0) part[lane / 8][warp] = grp;
  if (lane == 0) part[4][warp] = all;
  __syncthreads();
  const int64_t blocks = p.mp / p.bm;
  for (int q = warp; q < 5; q += warps) {  // warp-uniform
    hopper::TileChunk t;
    if (lane < warps) t = part[q][lane];
    else hopper::tile_init(t);
    for (int mask = 1; mask < warps; mask <<= 1) tile_merge_xor(t, mask);
    if (lane == 0) {
      const sm90::TileRec rec = sm90::tile_rec(t);
      if (q == 4) p.atile[c * blocks + tile] = rec;           // [chunk][token block]: one bulk copy per CTA and stage
      else p.agroup[(tile * p.chunks + c) * 4 + q] = rec;     // [token block][chunk][t]
    }
  }
}

}  // namespace

Status launch_sm90_prep(const Sm90Prep& p, cudaStream_t stream) {
  if (p.bm <= 0 || p.bm > kMaxBm || p.bm % 8 != 0) return invalid_argument("sm90 pre-pass: tile height must be 8..256, a multiple of 8");
  if (p.m <= 0 || p.chunks <= 0) return invalid_argument("sm90 pre-pass: empty activation");
  if (p.mp < p.m || p.mp % p.bm != 0) return invalid_argument("sm90 pre-pass: padded rows must be a multiple of the block, >= m");
  const int64_t tiles = p.mp / p.bm;
  if (tiles > 0x7FFFFFFF || p.chunks > 65535) return invalid_argument("sm90 pre-pass: activation too large for one launch");
  const bool dynamic = p.x && p.s_static <= 0.0f;
  if (dynamic && !p.x_amax && !p.x_amax_partials)
    return invalid_argument("sm90 pre-pass: a dynamic scale needs x_amax or x_amax_partials");
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.chunks));
  const int64_t parts = amax_partial_count(p.m * p.k);
  // x_amax_partials (and no x_amax), a small activation: the amax in pieces, then the pre-pass as its
  // programmatic dependent (its CTAs start as the amax's last blocks end, no launch gap, and wait
  // for it before reading the pieces): 1-2 us faster per call up to 128 tokens. A large one (the
  // amax at its kAmaxMaxBlocks) takes the single word in piece 0 (zeroed, atomic maxima, plain
  // launch): the pieces (measured with both paths in one kernel) made the streaming pre-pass 7-8 %
  // slower at 4096 tokens (H200, results v10).
  if (dynamic && !p.x_amax && p.x_amax_partials && parts < kAmaxMaxBlocks) {
    NVFP4_TRY(launch_amax_bf16_partials(p.x, p.m * p.k, p.x_amax_partials, stream));
  } else {
    Sm90Prep q = p;
    if (dynamic && !p.x_amax) {
      NVFP4_CUDA_TRY(cudaMemsetAsync(p.x_amax_partials, 0, 4, stream));
      NVFP4_TRY(launch_amax_bf16(p.x, p.m * p.k, p.x_amax_partials, stream));
      q.x_amax = p.x_amax_partials;
    }
    sm90_prep_a<false><<<grid, 4 * p.bm, 0, stream>>>(q, 0);
    NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a");
    return Status::ok();
  }
  cudaLaunchConfig_t lc{};
  lc.gridDim = grid;
  lc.blockDim = dim3(static_cast<unsigned>(4 * p.bm));
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  NVFP4_CUDA_TRY(cudaLaunchKernelEx(&lc, sm90_prep_a<true>, p, static_cast<int>(parts)));
  NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a<partials>");
  return Status::ok();
}

}  // namespace nvfp4::cuda
