// sm90 activation pre-pass: turns the activation (NVFP4 A, or bf16 x quantized here exactly as
// ComfyUI does) into what the sm90 GEMM reads: A' = e2m1(a) * s_a in fp16 (exact: at most 6
// significant bits, 2^-10 <= |a'| <= 2688), and the records of the fast-path tests
// (src/model/hopper_exact.hpp): per token, per thread group and per block of bm tokens. No NVFP4
// copy of A is written. One CTA per (token block, chunk), or per token block and two chunks for a
// large activation (sm90_prep_a_chunks); four threads per token (one per K block).
#include <cuda_fp16.h>

#include <cstddef>

#include "../common/check.cuh"
#include "../common/comfy_block.cuh"
#include "../common/kernels.hpp"
#include "../common/numerics.cuh"
#include "../common/swizzle.cuh"
#include "../../model/hopper_exact.hpp"
#include "sm90_layout.hpp"
#include "sm90_ptx.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kMaxBm = 256;  // tokens per block: the tallest warpgroup tile
#ifndef NVFP4_SM90_PREP_CPB
#define NVFP4_SM90_PREP_CPB 2  // measurement switch: the launcher's chunks per CTA for large packed A (1, 2 or 4; results v48)
#endif
constexpr int kPrepChunksPerCta = NVFP4_SM90_PREP_CPB;
static_assert(kPrepChunksPerCta == 1 || kPrepChunksPerCta == 2 || kPrepChunksPerCta == 4, "chunks per CTA: 1, 2 or 4");
#ifndef NVFP4_SM90_PREP_CPB_X
#define NVFP4_SM90_PREP_CPB_X 2  // measurement switch: the same for bf16 x (1 or 2)
#endif
constexpr int kPrepChunksPerCtaX = NVFP4_SM90_PREP_CPB_X;
static_assert(kPrepChunksPerCtaX == 1 || kPrepChunksPerCtaX == 2, "bf16 x: 1 or 2 chunks per CTA (four spill at 40 registers)");
#ifndef NVFP4_SM90_PREP_MANY
#define NVFP4_SM90_PREP_MANY 1024  // measurement switch: (token block, chunk) pairs from which the launcher takes several chunks per CTA
#endif
constexpr int64_t kPrepManyCtas = NVFP4_SM90_PREP_MANY;
static_assert(kPrepManyCtas >= 1, "the several-chunks threshold counts (token block, chunk) pairs");

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

// Eight E2M1 codes (lo_first: code j in bits 4j .. 4j + 3 of w) as four f16x2 registers, codes 2i
// and 2i + 1 in register i, each worth e2m1 * 2^-14 (exact): the code's sign goes to the fp16 sign
// bit, its two exponent bits to the two lowest fp16 exponent bits and its mantissa bit to the top
// mantissa bit (so 0.5, code 1, is the fp16 subnormal 2^-15; §1.1). Integer and byte-permute
// instructions only: Hopper's conversions are slow, and the branchy fp32 decode (e2m1_value) was
// the pre-pass's largest block of instructions.
__device__ __forceinline__ void e2m1x8_f16x2_pow2m14(uint32_t w, uint32_t out[4]) {
  // fp16 high bytes [s 0 0 0 e1 e0 m 0]: byte j of ev from code 2j (its byte's low nibble), of od
  // from code 2j + 1 (the high nibble).
  const uint32_t ev = ((w << 1) & 0x0E0E0E0Eu) | ((w << 4) & 0x80808080u);
  const uint32_t od = ((w >> 3) & 0x0E0E0E0Eu) | (w & 0x80808080u);
#pragma unroll
  for (int j = 0; j < 4; ++j)  // ev byte j -> byte 1, od byte j -> byte 3; the low bytes cleared
    out[j] = __byte_perm(ev, od, static_cast<uint32_t>(j | (j << 4) | (j << 8) | ((4 + j) << 12))) & 0xFF00FF00u;
}

// A' = e2m1 * s_a of a thread's 16 values (codes w[0..1], lo_first) and the block's sum of |a'|,
// in half precision, every step exact (rn of exact values): x = e2m1 (the decode's 2^-14 undone),
// a' = x * s_a (s_a, 0 or 2^-9 .. 448 with 4 significant bits, is an fp16 number; a' has at most 6
// significant bits and 2^-10 <= |a'| <= 2688, §1), the sum of |x| (multiples of 0.5 up to 96) in
// fp16, times s_a in fp32. Until results v20 each value went through fp32 (e2m1_value, __fmul_rn, a
// conversion): twice the instructions. h: A', value 2e in the low half of h[e]; returns the block's
// sum of |a'| (exact: <= 12 significant bits).
__device__ __forceinline__ float block_a_prime(const uint32_t (&w)[2], float sv, uint32_t (&h)[8]) {
  const __half2 up = __float2half2_rn(16384.0f), s2 = __float2half2_rn(sv);
  __half2 sum2 = __float2half2_rn(0.0f);
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    uint32_t r[4];
    e2m1x8_f16x2_pow2m14(w[q], r);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const __half2 x = __hmul2(*reinterpret_cast<const __half2*>(&r[j]), up);
      const __half2 a = __hmul2(x, s2);
      h[4 * q + j] = *reinterpret_cast<const uint32_t*>(&a);
      sum2 = __hadd2(sum2, __habs2(x));
    }
  }
  return __fmul_rn(__fadd_rn(__low2float(sum2), __high2float(sum2)), sv);
}

// Block g of token src's chunk c of bf16 x: its 16 bf16 patterns, element 2j in the low half of
// u[j], zeros past K. Returns false (u untouched) where the block starts at or past K16: it does
// not exist in the quantized tensor (codes 0, scale 0: the quantizer's padding).
__device__ __forceinline__ bool load_x_block(const Sm90Prep& p, int64_t src, int64_t c, int g, uint32_t (&u)[8]) {
  const int64_t k16 = (p.k + 15) / 16 * 16, k0 = c * 64 + 16 * g;
  if (k0 >= k16) return false;
  const uint16_t* row = p.x + src * p.k;
  if (k0 + 16 <= p.k && p.k % 8 == 0) {
    const uint4* q = reinterpret_cast<const uint4*>(row + k0);
    const uint4 u0 = __ldg(q), u1 = __ldg(q + 1);
    u[0] = u0.x; u[1] = u0.y; u[2] = u0.z; u[3] = u0.w; u[4] = u1.x; u[5] = u1.y; u[6] = u1.z; u[7] = u1.w;
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t lo = k0 + 2 * j < p.k ? row[k0 + 2 * j] : 0u, hi = k0 + 2 * j + 1 < p.k ? row[k0 + 2 * j + 1] : 0u;
      u[j] = lo | (hi << 16);
    }
  }
  return true;
}

// comfy-cuda recipe (§2.1) on one block's 16 values with global scale s: its codes w (lo_first, the
// order block_a_prime reads) and scale value sv; returns the scale byte. Steps 1-8 as the GPU
// quantizer takes them (common/comfy_block.cuh: magnitudes and the short E2M1 rounding where the
// block has no Inf/NaN); until results v20 the per-element path of every block, twice the
// instructions.
__device__ __forceinline__ uint32_t quantize_x_block(const uint32_t (&u)[8], float s, uint32_t (&w)[2], float& sv) {
  const uint32_t sf = comfy_quantize_block<false>(u, s, w);
  sv = hopper::scale_value(static_cast<uint8_t>(sf));  // the quantizer never writes a NaN scale
  return sf;
}

// bf16 x's global scale, the comfy-cuda recipe's (§2.1): the static one in device memory
// (kDeviceScale: *alpha_a, as the caller's stream left it; this grid is an ordinary launch on that
// stream, so unlike the host value it is not checked, which would wait for the stream), the host's
// static one, or the dynamic one from the amax: with kPartials from the amax_partials words of
// x_amax_partials, written by the grid this one follows as a programmatic dependent launch (it
// waits for that grid; every thread of the CTA must call, as cta_amax needs), else from *x_amax.
template <bool kPartials, bool kDeviceScale>
__device__ __forceinline__ float x_global_scale(const Sm90Prep& p, int amax_partials) {
  if constexpr (kDeviceScale) return *p.alpha_a;
  if (!(p.s_static <= 0.0f)) return p.s_static;  // the launcher's test for a static scale (dynamic: s_static <= 0)
  if constexpr (kPartials) {
    sm90::wait_prerequisites();
    return dynamic_global_scale(cta_amax(p.x_amax_partials, amax_partials));
  } else {
    return dynamic_global_scale(*p.x_amax);
  }
}

// The scalars a pre-pass writes once (by one thread of the grid): from bf16 x, alpha =
// f32_rn(s_x * s_w) (§2.4) and s_x itself; from packed A, the GEMM's alpha from the operands'
// global scales in device memory (gemm_alpha), when given: formed here, where the GEMM already
// waits for this grid's outputs.
__device__ __forceinline__ void write_x_scalars(const Sm90Prep& p, float s) {
  if (p.alpha_out) *p.alpha_out = __fmul_rn(s, p.s_w);
  if (p.s_x_out) *p.s_x_out = s;
}
__device__ __forceinline__ void write_packed_alpha(const Sm90Prep& p) {
  if (p.alpha_a && p.alpha_out) *p.alpha_out = gemm_alpha(p.alpha_a, p.alpha_w, 0.0f);
}

// Block g of token src's chunk c of packed A: its 16 codes (lo_first) in raw; returns its scale
// byte.
__device__ __forceinline__ uint32_t load_packed_block(const Sm90Prep& p, int64_t src, int64_t c, int g, uint2& raw) {
  const int64_t k64 = p.chunks * 64, lda = k64 / 2, cp = k64 / 16;
  raw = __ldg(reinterpret_cast<const uint2*>(p.a + src * lda + c * 32 + 8 * g));
  return p.sfa[swizzled_offset(src, 4 * c + g, cp)];  // the token's scale byte of block g
}
// A packed scale byte's value, 0 for a NaN byte (the slow path says NaN).
__device__ __forceinline__ float packed_scale_value(uint32_t sf) {
  return (sf & 0x7F) == 0x7F ? 0.0f : hopper::scale_value(static_cast<uint8_t>(sf));
}

// Thread (i, g) of chunk c: its 16 A' values (32 bytes of token m's 128-byte row chunk) and, from
// the token's four threads (lanes 4i' .. 4i' + 3), the token's record; returns the token's tile
// (tile_add of its record) folded with the other token of its thread group in this warp (xor 4):
// the group's partial that fold_record takes from shared memory. Every lane calls it, converged.
__device__ __forceinline__ hopper::TileChunk emit_token(const Sm90Prep& p, int64_t tile, int64_t c, int i, int g, int64_t m,
                                                        const uint32_t (&h)[8], uint32_t sf, float asum) {
  const int64_t k64 = p.chunks * 64;
  uint4* dst = reinterpret_cast<uint4*>(p.a16 + m * k64 + c * 64 + 16 * g);
  dst[0] = make_uint4(h[0], h[1], h[2], h[3]);
  dst[1] = make_uint4(h[4], h[5], h[6], h[7]);
  // The token's four scale bytes and block sums, from its four threads.
  uint32_t sf4 = sf << (8 * g);
  sf4 |= __shfl_xor_sync(0xFFFFFFFFu, sf4, 1, 4);
  sf4 |= __shfl_xor_sync(0xFFFFFFFFu, sf4, 2, 4);
  float asums[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) asums[j] = __shfl_sync(0xFFFFFFFFu, asum, j, 4);
  const hopper::RowChunk rc = hopper::activation_chunk(sf4, asums);  // every thread of the token: no broadcast
  if (g == 0) {  // the token's record, once: two 16-byte stores (as a struct, eleven narrow ones)
    static_assert(offsetof(sm90::TokenRec, sf) == 16 && offsetof(sm90::TokenRec, lo) == 20 && offsetof(sm90::TokenRec, hi) == 22 &&
                      offsetof(sm90::TokenRec, nan) == 24,
                  "the token record's two vectors: mag[4], then sf, lo | hi << 16, nan and zero padding");
    uint4* rec = reinterpret_cast<uint4*>(p.trec + (tile * p.chunks + c) * p.bm + i);  // [token block][chunk][token]
    rec[0] = make_uint4(__float_as_uint(rc.mag[0]), __float_as_uint(rc.mag[1]), __float_as_uint(rc.mag[2]), __float_as_uint(rc.mag[3]));
    rec[1] = make_uint4(sf4, (static_cast<uint32_t>(rc.lo) & 0xFFFFu) | (static_cast<uint32_t>(rc.hi) << 16), rc.nan ? 1u : 0u, 0u);
  }
  hopper::TileChunk grp;
  hopper::tile_init(grp);
  hopper::tile_add(grp, rc, asums);
  tile_merge_xor(grp, 4);
  return grp;
}

// Record q of chunk c and token block `tile` (blockIdx.x of a grid of one CTA column per token
// block): the tile's (q = 4: [chunk][token block], one bulk copy per GEMM CTA and stage) or thread
// group q's ([token block][chunk][t]).
__device__ __forceinline__ void write_rec(const Sm90Prep& p, int64_t tile, int64_t c, int q, const hopper::TileChunk& t) {
  const sm90::TileRec rec = sm90::tile_rec(t);
  if (q == 4) p.atile[c * gridDim.x + tile] = rec;  // gridDim.x: the token blocks
  else p.agroup[(tile * p.chunks + c) * 4 + q] = rec;
}

// Record q (thread group q < 4, or the tile) of one chunk folded by one warp from the warps'
// partials part[warp][group] (warps = bm / 8 of them), written by lane 0. tile_merge is max / min
// / or (no magnitude here is NaN), so the fold's order is free; the tile is the union of the groups.
__device__ __forceinline__ void fold_record(const Sm90Prep& p, int64_t tile, int64_t c, int q, const hopper::TileChunk (*part)[4],
                                            int warps, int lane) {
  hopper::TileChunk t;
  hopper::tile_init(t);
  int lanes;  // lanes holding a partial
  if (q < 4) {
    if (lane < warps) t = part[lane][q];
    lanes = warps;
  } else {
    for (int j = lane; j < 4 * warps; j += 32) hopper::tile_merge(t, (&part[0][0])[j]);
    lanes = 4 * warps < 32 ? 4 * warps : 32;
  }
  for (int mask = 1; mask < lanes; mask <<= 1) tile_merge_xor(t, mask);
  if (lane == 0) write_rec(p, tile, c, q, t);
}

// kPartials: the dynamic scale's amax from the amax_partials words of x_amax_partials (written by
// the grid this one follows as a programmatic dependent launch), else from *x_amax. Two
// instantiations: with both in one kernel the packed-A pre-pass, which never reads the pieces, was
// about 5 % slower at 4096 tokens (H200, results v10).
// kDeviceScale: bf16 x with its static input scale in device memory (*alpha_a, a framework's CUDA
// scalar), read here so that the host never waits for it: no amax, the same quantization and alpha
// as with that value in s_static. A third instantiation, so that the other two (the host scale's
// path among them) keep their machine code.
// At most 40 registers (no spills): three CTAs of 128 tokens (512 threads) per SM instead of two,
// the pre-pass at 4096 tokens 9-11 % faster (results v20 r3); a CTA has at most 4 * kMaxBm = 1024
// threads (__maxnreg__ excludes __launch_bounds__).
template <bool kPartials, bool kDeviceScale = false>
__global__ void __maxnreg__(40) sm90_prep_a(Sm90Prep p, int amax_partials) {
  static_assert(!(kPartials && kDeviceScale), "a device input scale needs no amax");
  sm90::launch_dependents();  // the GEMM may start now: it waits for this grid before reading its outputs
  // Four threads per token: thread (i, g) handles K block g (16 values) of token i's chunk, so the
  // four threads of a token read and write its 128-byte row chunk together.
  const int i = threadIdx.x / 4, g = threadIdx.x % 4;
  const int64_t tile = blockIdx.x, c = blockIdx.y;
  const int64_t m = tile * p.bm + i, src = m < p.m ? m : p.m - 1;  // padding tokens repeat the last
  const bool first = tile == 0 && c == 0 && threadIdx.x == 0;
  uint32_t w[2] = {0u, 0u};  // block g's 16 codes (lo_first)
  uint32_t sf = 0;           // its scale byte
  float sv = 0.0f;           // and the scale's value (0 for a NaN byte: the slow path says NaN)
  if (kDeviceScale || p.x) {
    const float s = x_global_scale<kPartials, kDeviceScale>(p, amax_partials);
    if (first) write_x_scalars(p, s);
    uint32_t u[8];  // the block's bf16 patterns
    if (load_x_block(p, src, c, g, u)) sf = quantize_x_block(u, s, w, sv);  // else codes 0 (scale 0), the quantizer's padding
  } else {
    if (first) write_packed_alpha(p);
    uint2 raw;
    sf = load_packed_block(p, src, c, g, raw);
    w[0] = raw.x;
    w[1] = raw.y;
    sv = packed_scale_value(sf);
  }
  uint32_t h[8];  // A': value 2e in the low half of h[e]
  const float asum = block_a_prime(w, sv, h);
  const hopper::TileChunk grp = emit_token(p, tile, c, i, g, m, h, sf, asum);

  // The block's tile record and the four thread-group records (thread t of a consumer warpgroup
  // holds tokens 8j + 2t and 8j + 2t + 1, so group t is the tokens i with i % 8 / 2 == t: lanes
  // 8t .. 8t + 7 of every warp). Each lane starts from its token's record, emit_token folds the
  // group's two tokens (xor 4), and after the barrier one warp per record folds the warps'
  // partials, the tile record's warp all four groups' partials. Before 2026-12-04 ten (bm / 8 x 5)
  // threads folded eight rows each from shared memory and five merged the partials one by one: a
  // chain of ~300-500 dependent instructions per CTA; until results v20 every lane also folded the
  // whole warp (xor 8, 16) for the tile record: 20 shuffles per thread, the pre-pass's largest
  // share of shuffles at 4096 tokens.
  static_assert(kMaxBm % 8 == 0 && kMaxBm / 8 <= 32, "one warp folds the warps' partials: at most 32 warps");
  __shared__ hopper::TileChunk part[kMaxBm / 8][4];  // [warp][group]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = p.bm / 8;
  if (lane % 8 == 0) part[warp][lane / 8] = grp;
  __syncthreads();
  if (warps <= 4) {
    // Up to 32 tokens: warp 0 folds all five records at once, group q on lanes q * seg .. q * seg +
    // warps - 1 and the tile on lanes 4 * seg .. 4 * seg + 4 * warps - 1 (its four groups'
    // partials; seg, a power of two, so that xor shuffles stay in a segment), so that the five
    // folds run side by side, not one after another in the CTA's first warp (at 16 tokens three of
    // them in a row were the pre-pass's longest chain).
    if (warp == 0) {
      const int seg = warps == 1 ? 1 : (warps == 2 ? 2 : 4);
      hopper::TileChunk t;
      hopper::tile_init(t);
      if (lane < 4 * seg) {
        if (lane % seg < warps) t = part[lane % seg][lane / seg];
      } else if (lane - 4 * seg < 4 * warps) {
        t = (&part[0][0])[lane - 4 * seg];
      }
      for (int mask = 1; mask < 4 * seg; mask <<= 1) {  // every lane shuffles; a group's lanes merge within the group
        hopper::TileChunk u = t;
        tile_merge_xor(u, mask);
        if (lane >= 4 * seg || mask < seg) t = u;
      }
      if (lane < 4 * seg && lane % seg == 0) write_rec(p, tile, c, lane / seg, t);
      if (lane == 4 * seg) write_rec(p, tile, c, 4, t);
    }
  } else {
    for (int q = warp; q < 5; q += warps) fold_record(p, tile, c, q, part, warps, lane);  // warp-uniform
  }
}

// kCpb chunks of one token block per CTA (the launcher's choice for large activations): the same
// outputs as sm90_prep_a, field for field (Gpu.Sm90PrePassEqualsTheHostRecords and
// Gpu.Sm90PrePassChunksPerCtaSameBytes run every kCpb). A thread's loads of all its chunks go out
// first, so that each thread has kCpb loads in flight where sm90_prep_a has one, and the CTA's
// start, barrier and record folds are paid once per kCpb chunks; the kCpb x 5 record folds are
// spread over all the CTA's warps. kX: bf16 x quantized here (0: packed A), with its scale as
// sm90_prep_a<false, kDeviceScale> takes it (a dynamic one from the single amax word).
template <int kCpb, bool kX, bool kDeviceScale>
__global__ void __maxnreg__(40) sm90_prep_a_chunks(Sm90Prep p) {
  static_assert(kCpb >= 2 && kCpb <= (kX ? 2 : 4), "chunks per CTA: 2 to 4, bf16 x 2 (the loads of all of them are held in registers)");
  static_assert(kX || !kDeviceScale, "a device input scale belongs to bf16 x");
  sm90::launch_dependents();  // the GEMM may start now: it waits for this grid before reading its outputs
  const int i = threadIdx.x / 4, g = threadIdx.x % 4;
  const int64_t tile = blockIdx.x, c0 = static_cast<int64_t>(blockIdx.y) * kCpb;
  const int64_t m = tile * p.bm + i, src = m < p.m ? m : p.m - 1;  // padding tokens repeat the last
  const int n = p.chunks - c0 < kCpb ? static_cast<int>(p.chunks - c0) : kCpb;  // this CTA's chunks
  const bool first = tile == 0 && c0 == 0 && threadIdx.x == 0;
  float s = 0.0f;  // x's global scale
  uint32_t u[kX ? kCpb : 1][8];  // x: each chunk's block g, bf16 patterns
  bool has[kCpb];                // x: the block exists (else codes 0, scale 0)
  uint2 raw[kCpb];               // packed A: each chunk's block g, codes
  uint32_t sfb[kCpb];            // and its scale byte
  if constexpr (kX) {
    s = x_global_scale<false, kDeviceScale>(p, 0);
    if (first) write_x_scalars(p, s);
#pragma unroll
    for (int j = 0; j < kCpb; ++j) has[j] = j < n && load_x_block(p, src, c0 + j, g, u[j]);
  } else {
    if (first) write_packed_alpha(p);
#pragma unroll
    for (int j = 0; j < kCpb; ++j)
      if (j < n) sfb[j] = load_packed_block(p, src, c0 + j, g, raw[j]);
  }
  __shared__ hopper::TileChunk part[kCpb][kMaxBm / 8][4];  // [chunk][warp][group]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = p.bm / 8;
#pragma unroll
  for (int j = 0; j < kCpb; ++j)
    if (j < n) {
      uint32_t w[2] = {0u, 0u}, sf = 0;
      float sv = 0.0f;
      if constexpr (kX) {
        if (has[j]) sf = quantize_x_block(u[j], s, w, sv);
      } else {
        sf = sfb[j];
        sv = packed_scale_value(sf);
        w[0] = raw[j].x;
        w[1] = raw[j].y;
      }
      uint32_t h[8];
      const float asum = block_a_prime(w, sv, h);
      const hopper::TileChunk grp = emit_token(p, tile, c0 + j, i, g, m, h, sf, asum);
      if (lane % 8 == 0) part[j][warp][lane / 8] = grp;
    }
  __syncthreads();
  for (int q = warp; q < 5 * n; q += warps) fold_record(p, tile, c0 + q / 5, q % 5, part[q / 5], warps, lane);  // warp-uniform
}

}  // namespace

Status launch_sm90_prep(const Sm90Prep& p, cudaStream_t stream) {
  if (p.bm <= 0 || p.bm > kMaxBm || p.bm % 8 != 0) return invalid_argument("sm90 pre-pass: tile height must be 8..256, a multiple of 8");
  if (p.m <= 0 || p.chunks <= 0) return invalid_argument("sm90 pre-pass: empty activation");
  if (p.mp < p.m || p.mp % p.bm != 0) return invalid_argument("sm90 pre-pass: padded rows must be a multiple of the block, >= m");
  const int64_t tiles = p.mp / p.bm;
  if (tiles > 0x7FFFFFFF || p.chunks > 65535) return invalid_argument("sm90 pre-pass: activation too large for one launch");
  // bf16 x with alpha_a: the static input scale in device memory, read by the pre-pass (no amax).
  const bool device_scale = p.x && p.alpha_a;
  if (device_scale && p.s_static > 0.0f)
    return invalid_argument("sm90 pre-pass: a static input scale both on the host (s_static) and in device memory (alpha_a)");
  const bool dynamic = p.x && !device_scale && p.s_static <= 0.0f;
  if (dynamic && !p.x_amax && !p.x_amax_partials)
    return invalid_argument("sm90 pre-pass: a dynamic scale needs x_amax or x_amax_partials");
  if (p.chunks_per_cta != 0 && p.chunks_per_cta != 1 && p.chunks_per_cta != 2 && p.chunks_per_cta != 4)
    return invalid_argument("sm90 pre-pass: chunks per CTA must be 0 (the launcher's choice), 1, 2 or 4");
  if (p.chunks_per_cta > 1 && p.bm < 64)
    return invalid_argument("sm90 pre-pass: several chunks per CTA need a tile height of at least 64");
  if (p.chunks_per_cta > 2 && p.x)  // four chunks' bf16 blocks spill at 40 registers
    return invalid_argument("sm90 pre-pass: bf16 x takes at most 2 chunks per CTA");
  const int64_t parts = amax_partial_count(p.m * p.k);
  // bf16 x whose dynamic scale comes in amax pieces under a programmatic dependent launch (a small
  // activation): one chunk per CTA (sm90_prep_a<true>).
  const bool pieces = dynamic && !p.x_amax && p.x_amax_partials && parts < kAmaxMaxBlocks;
  if (p.chunks_per_cta > 1 && pieces)
    return invalid_argument("sm90 pre-pass: several chunks per CTA need packed A or an activation past the amax pieces' size");
  // Several chunks per CTA for a large activation (results v48), one for a small one, whose
  // pre-pass is its launch and one load from memory and wants every CTA it can get.
  const int cpb = p.chunks_per_cta != 0 ? p.chunks_per_cta
                  : !pieces && p.bm >= 64 && tiles * p.chunks >= kPrepManyCtas ? (p.x ? kPrepChunksPerCtaX : kPrepChunksPerCta) : 1;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.chunks));
  // x_amax_partials (and no x_amax), a small activation: the amax in pieces, then the pre-pass as its
  // programmatic dependent (its CTAs start as the amax's last blocks end, no launch gap, and wait
  // for it before reading the pieces): 1-2 us faster per call up to 128 tokens. A large one (the
  // amax at its kAmaxMaxBlocks) takes the single word in piece 0 (zeroed, atomic maxima, plain
  // launch): the pieces (measured with both paths in one kernel) made the streaming pre-pass 7-8 %
  // slower at 4096 tokens (H200, results v10).
  const unsigned threads = static_cast<unsigned>(4 * p.bm);
  if (!pieces) {
    Sm90Prep q = p;
    if (dynamic && !p.x_amax) {
      NVFP4_CUDA_TRY(cudaMemsetAsync(p.x_amax_partials, 0, 4, stream));
      NVFP4_TRY(launch_amax_bf16(p.x, p.m * p.k, p.x_amax_partials, stream));
      q.x_amax = p.x_amax_partials;
    }
    if (cpb > 1) {
      const dim3 g(static_cast<unsigned>(tiles), static_cast<unsigned>((p.chunks + cpb - 1) / cpb));
      if (!p.x) {
        if (cpb == 2) sm90_prep_a_chunks<2, false, false><<<g, threads, 0, stream>>>(q);
        else sm90_prep_a_chunks<4, false, false><<<g, threads, 0, stream>>>(q);
      } else if (device_scale) {
        sm90_prep_a_chunks<2, true, true><<<g, threads, 0, stream>>>(q);
      } else {
        sm90_prep_a_chunks<2, true, false><<<g, threads, 0, stream>>>(q);
      }
      NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a_chunks");
    } else if (device_scale) {
      sm90_prep_a<false, true><<<grid, threads, 0, stream>>>(q, 0);
      NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a<device scale>");
    } else {
      sm90_prep_a<false><<<grid, threads, 0, stream>>>(q, 0);
      NVFP4_CUDA_LAUNCH_TRY("sm90_prep_a");
    }
    return Status::ok();
  }
  NVFP4_TRY(launch_amax_bf16_partials(p.x, p.m * p.k, p.x_amax_partials, stream));
  cudaLaunchConfig_t lc{};
  lc.gridDim = grid;
  lc.blockDim = dim3(threads);
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
