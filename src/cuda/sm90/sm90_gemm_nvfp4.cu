// The exact NVFP4 linear on Hopper (sm_90a): GB10's bits (the §3 model under the sequential
// contract) from bf16-class tensor cores. docs/hopper-exact-path.md gives the argument; in short,
// per k64 chunk:
//   - weight codes are decoded in registers straight into the wgmma A fragment as scale-folded
//     fp16 (e2m1 * s_w: exact), the activation A' (e2m1 * s_a, fp16, from the pre-pass) comes by
//     TMA into shared memory as the B operand: D^T[n][m] = W'[n][k] A'[m][k];
//   - a zero-initialised chain of four m64nBMk16 wgmmas gives the chunk sum CH;
//   - where the per-row tests of src/model/hopper_exact.hpp pass, acc = add.rz(acc, CH), which they
//     prove equals the §3 step; where they fail for a thread's group of tokens, each element is
//     tested on its own, and an element that fails is evaluated by the §3 model (mma_combine) from
//     the exact fp32 block sums of the same operands in shared memory.
// CTA: warpgroup 0 produces (one thread issues TMA / bulk copies into a ring of stages), warpgroups
// 1 and 2 each own 64 weight rows x BM tokens; persistent over (token tile, 128-row tile) pairs.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/numerics.cuh"
#include "../../model/hopper_exact.hpp"
#include "sm90_layout.hpp"
#include "sm90_ptx.cuh"
#include "sm90_wgmma.cuh"

namespace nvfp4::cuda {

namespace {
using namespace sm90;

constexpr int kProducerRegs = 40, kConsumerRegs = 232;
constexpr int kSmemAlign = 1024;  // the 128-byte swizzle pattern repeats every 1024 bytes

template <int BM>
struct StageLayout {
  static constexpr int kA = 0;                          // A' tile [BM][64] f16, 128-byte swizzle
  static constexpr int kW = BM * 128;                   // prepacked weight codes, 4096 bytes
  static constexpr int kS = kW + kWCodeBytes;           // weight scale tile, 512 bytes
  static constexpr int kG = kS + kWScaleBytes;          // 4 group records, 128 bytes
  static constexpr int kR = kG + 4 * 32;                // 128 weight-row records, 2048 bytes
  static constexpr int kT = kR + kWRecBytes;            // BM token records (read only by per-element tests)
  static constexpr int kBytes = (kT + BM * 32 + kSmemAlign - 1) / kSmemAlign * kSmemAlign;
  static constexpr uint32_t kTx = BM * 128 + kWCodeBytes + kWScaleBytes + 4 * 32 + kWRecBytes + BM * 32;
  static_assert(BM % 8 == 0 && BM >= 8 && BM <= 128, "wgmma N (tokens per tile) is a multiple of 8, at most 128 here");
  static_assert(kW % kSmemAlign == 0, "the A' tile keeps the stage 1024-byte aligned");
};

// A 4-byte weight word (one K block of the thread's two rows) to the four f16x2 fragment registers,
// scaled: nibble -> E4M3 byte s.00em.00 (value e2m1 * 2^-6, exact) -> cvt to f16x2 -> * (s_w * 2^6).
__device__ __forceinline__ void decode_block(uint32_t w, __half2 s_r0, __half2 s_r1, uint32_t (&a)[4]) {
  const uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
  const uint32_t el = ((lo & 0x07070707u) << 2) | ((lo & 0x08080808u) << 4);
  const uint32_t eh = ((hi & 0x07070707u) << 2) | ((hi & 0x08080808u) << 4);
  const uint32_t p01 = __byte_perm(el, eh, 0x5140), p23 = __byte_perm(el, eh, 0x7362);
  const uint16_t pairs[4] = {static_cast<uint16_t>(p01), static_cast<uint16_t>(p01 >> 16), static_cast<uint16_t>(p23),
                             static_cast<uint16_t>(p23 >> 16)};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(pairs[r]));
    __half2 v = *reinterpret_cast<__half2*>(&h2);
    v = __hmul2(v, (r & 1) ? s_r1 : s_r0);  // exact: <= 6 significant bits, inside fp16's range
    a[r] = *reinterpret_cast<uint32_t*>(&v);
  }
}

// Four UE4M3 scale bytes -> f16x2 (s_0, s_1), (s_2, s_3), times 2^6; NaN bytes become 0 (the
// element goes to the slow path, which reports NaN).
__device__ __forceinline__ void decode_scales(uint32_t sw, __half2& s01, __half2& s23) {
  uint32_t v = sw & 0x7F7F7F7Fu;                         // sign ignored
  const uint32_t nan = ((v + 0x01010101u) & 0x80808080u) >> 7;  // 0x7F bytes
  v &= ~(nan * 0xFFu);
  uint32_t h01, h23;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h01) : "h"(static_cast<uint16_t>(v)));
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h23) : "h"(static_cast<uint16_t>(v >> 16)));
  const __half2 k64 = __float2half2_rn(64.0f);
  s01 = __hmul2(*reinterpret_cast<__half2*>(&h01), k64);
  s23 = __hmul2(*reinterpret_cast<__half2*>(&h23), k64);
}

__device__ __forceinline__ hopper::RowChunk weight_rec(const WRec* wr) {
  const uint4 v = *reinterpret_cast<const uint4*>(wr);
  hopper::RowChunk r;
  const float2 m01 = __half22float2(*reinterpret_cast<const __half2*>(&v.x));
  const float2 m23 = __half22float2(*reinterpret_cast<const __half2*>(&v.y));
  r.mag[0] = m01.x;
  r.mag[1] = m01.y;
  r.mag[2] = m23.x;
  r.mag[3] = m23.y;
  r.lo = static_cast<int16_t>(v.z & 0xFFFF);
  r.hi = static_cast<int16_t>(v.z >> 16);
  r.nan = (v.w & 0xFF) != 0;
  return r;
}

__device__ __forceinline__ hopper::RowChunk token_chunk(const TokenRec& t) {
  hopper::RowChunk r;
  for (int g = 0; g < 4; ++g) r.mag[g] = t.mag[g];
  r.lo = t.lo;
  r.hi = t.hi;
  r.nan = t.nan != 0;
  return r;
}

// §3 for one element from the operands in shared memory: exact fp32 block sums of the folded
// products (each partial sum is a multiple of 2^(ea+eb-8) below 2^(ea+eb+12): 20 bits), turned
// into the model's integer terms, then mma_combine.
__device__ __forceinline__ float slow_element(const uint8_t* a_tile, int mi, const uint8_t* w_codes, int wg, int rw,
                                           uint32_t sfa, uint32_t sfw, float acc) {
  int64_t sig[4];
  int e[4];
  bool nan = false;
  for (int g = 0; g < 4; ++g) {
    const uint8_t ba = static_cast<uint8_t>(sfa >> (8 * g)), bw = static_cast<uint8_t>(sfw >> (8 * g));
    const model::ScaleParts pa = model::decode_scale(ba), pw = model::decode_scale(bw);
    nan = nan || pa.nan || pw.nan;
    const float sv = pw.nan ? 0.0f : hopper::scale_value(bw);
    float t = 0.0f;
    bool any = false;
    for (int kk = 0; kk < 16; ++kk) {
      const int k = 16 * g + kk;
      // A' element (mi, k) under the 128-byte swizzle: 16-byte unit k/8 of the row XOR row % 8.
      const __half ah = *reinterpret_cast<const __half*>(a_tile + mi * 128 + (((k / 8) ^ (mi % 8)) * 16) + (k % 8) * 2);
      // Weight code (rw, k) in the prepacked fragment order (sm90_layout.hpp).
      const int th = 32 * (rw / 16) + 4 * (rw % 8) + (kk % 8) / 2;
      const int byte = ((rw % 16) >= 8 ? 1 : 0) + (kk >= 8 ? 2 : 0);
      const uint8_t cb = w_codes[(wg * 128 + th) * 16 + 4 * g + byte];
      const float wv = __fmul_rn(e2m1_value((cb >> (4 * (k % 2))) & 0xF), sv);
      const float av = __half2float(ah);
      const float pr = __fmul_rn(av, wv);  // exact
      any = any || pr != 0.0f;
      t = __fadd_rn(t, pr);                // exact (see above)
    }
    const bool zero = !any || pa.sig == 0 || pw.sig == 0;
    e[g] = zero ? model::kEZero : pa.exp + pw.exp;
    // term = t = sig * 2^(e - 8): sig = t * 2^(8 - e), an integer (|sig| <= 2304 * 225)
    sig[g] = zero ? 0 : static_cast<int64_t>(__float2ll_rz(__fmul_rn(t, hopper::pow2f(8 - pa.exp - pw.exp))));
  }
  return model::mma_combine(sig, e, nan, acc);
}

// One element whose thread group failed the per-thread test: its own test, then fast or slow.
__device__ __forceinline__ float refine_element(float acc, float ch, const TokenRec* tr, const hopper::RowChunk& w,
                                             const uint8_t* a_tile, int mi, const uint8_t* w_codes, int wg, int rw,
                                             uint32_t sfw, uint32_t& slow) {
  const TokenRec t = *tr;
  if (hopper::step_is_fast(token_chunk(t), w, acc)) return __fadd_rz(acc, ch);
  ++slow;
  return slow_element(a_tile, mi, w_codes, wg, rw, t.sf, sfw, acc);
}

// A chunk whose per-thread test failed for one of the thread's two weight rows (rare: < 0.01 % of
// thread-chunks on outlier activations): every element of a failing row is tested on its own.
template <int R>
__device__ __noinline__ void refine_chunk(float* acc, const float* ch, bool ok0, bool ok1, const uint8_t* st, int kA,
                                          int kW, int kS, int kR, int kT, int h, int t, int rw0, int rt0,
                                          uint32_t& slow) {
  const int rw1 = rw0 + 8, rt1 = rt0 + 8;
  const TokenRec* trow = reinterpret_cast<const TokenRec*>(st + kT);
  const hopper::RowChunk w0 = weight_rec(reinterpret_cast<const WRec*>(st + kR) + rt0);
  const hopper::RowChunk w1 = weight_rec(reinterpret_cast<const WRec*>(st + kR) + rt1);
  const uint32_t sw0 = *reinterpret_cast<const uint32_t*>(st + kS + scale_offset_in_tile(rt0));
  const uint32_t sw1 = *reinterpret_cast<const uint32_t*>(st + kS + scale_offset_in_tile(rt1));
#pragma unroll 1
  for (int i = 0; i < R; ++i) {
    const int j = i / 4, e = i % 2, row1 = (i / 2) % 2;
    const int mi = 8 * j + 2 * t + e;
    if (row1 ? ok1 : ok0) {
      acc[i] = __fadd_rz(acc[i], ch[i]);
    } else {
      acc[i] = refine_element(acc[i], ch[i], trow + mi, row1 ? w1 : w0, st + kA, mi, st + kW, h, row1 ? rw1 : rw0,
                              row1 ? sw1 : sw0, slow);
    }
  }
}

// Ring position of a chunk: stage index and mbarrier phase parity, advanced without a division (the
// stage count is a launch parameter).
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance(int stages) {
    if (++stage == stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

template <int BM>
__global__ void __launch_bounds__(kThreads, 1) sm90_gemm_nvfp4(const __grid_constant__ CUtensorMap tmap_a, Sm90Gemm p,
                                                              int stages) {
#if defined(__CUDA_ARCH__) && !(__CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL))
  // wgmma and setmaxnreg exist on sm_90a only; the launcher never starts this on other GPUs.
  __trap();
#else
  using L = StageLayout<BM>;
  constexpr int R = BM / 2;  // accumulator registers per thread
  extern __shared__ __align__(16) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, not by a cast through an integer: the compiler then keeps
  // every access below a shared-memory one (LDS, 32-bit addresses) instead of a generic LD.E with
  // 64-bit address arithmetic (measured in the SASS of the earlier form).
  uint8_t* smem = smem_raw + ((kSmemAlign - (smem_addr(smem_raw) & (kSmemAlign - 1))) & (kSmemAlign - 1));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + stages * L::kBytes);
  uint64_t* empty = full + stages;
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 256);  // every consumer thread
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int64_t mtiles = (p.m + BM - 1) / BM, ntiles = (p.n + kTileN - 1) / kTileN, tiles = mtiles * ntiles;
  const int64_t C = p.chunks;

  if (wg == 0) {
    regs_release<kProducerRegs>();
    if (tid == 0) {
      prefetch_tensor_map(&tmap_a);
      RingPos pos;
      for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t mt = tile / ntiles, nt = tile % ntiles;  // consecutive CTAs share the token tile
        for (int64_t c = 0; c < C; ++c, pos.advance(stages)) {
          const int s = pos.stage;
          mbar_wait(&empty[s], pos.phase ^ 1);
          uint8_t* st = smem + s * L::kBytes;
          mbar_arrive_expect_tx(&full[s], L::kTx);
          tma_load_2d(st + L::kA, &tmap_a, static_cast<int32_t>(c * 64), static_cast<int32_t>(mt * BM), &full[s]);
          bulk_g2s(st + L::kW, p.wq + (nt * C + c) * kWCodeBytes, kWCodeBytes, &full[s]);
          bulk_g2s(st + L::kS, p.sfw + (nt * C + c) * kWScaleBytes, kWScaleBytes, &full[s]);
          bulk_g2s(st + L::kG, p.grec + (mt * C + c) * 4, 4 * 32, &full[s]);
          bulk_g2s(st + L::kR, p.wrec + (nt * C + c) * kTileN, kWRecBytes, &full[s]);
          bulk_g2s(st + L::kT, p.trec + (mt * C + c) * BM, BM * 32, &full[s]);
        }
      }
    }
    return;
  }

  regs_acquire<kConsumerRegs>();
  const int h = wg - 1, warp = tid / 32, lane = tid % 32, g8 = lane / 4, t = lane % 4;
  const int rw0 = 16 * warp + g8;                                // row within the warpgroup's 64 (and rw0 + 8)
  const int rt0 = 64 * h + rw0, rt1 = rt0 + 8;                   // rows within the CTA's 128
  float acc[R], ch[R];
  RingPos pos;  // the chunk being consumed
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t mt = tile / ntiles, nt = tile % ntiles;
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] = 0.0f;
    // |acc| extremes per row over this thread's tokens; before the first chunk every acc is +0,
    // which every test accepts.
    // |acc| per row over this thread's tokens: the smallest (tracked) and an upper bound (summed
    // from the chunk bounds); before the first chunk every acc is +0, which every test accepts.
    float mn0 = 3.0e38f, ub0 = 0.0f, mn1 = 3.0e38f, ub1 = 0.0f;
    uint32_t slow_steps = 0, refined_chunks = 0;  // for the optional path counters

    // Everything about chunk c that needs no accumulator: the weight fragment decoded from the
    // stage, and the first half of the per-thread tests.
    struct Prepared {
      uint32_t frag[4][4];
      hopper::GroupVerdict v0, v1;
      float inc0, inc1;
    };
    auto prepare = [&](const RingPos& at, Prepared& nx) {
      mbar_wait(&full[at.stage], at.phase);
      const uint8_t* st = smem + at.stage * L::kBytes;
      const GroupRec* gp = reinterpret_cast<const GroupRec*>(st + L::kG) + t;
      hopper::RowGroup grp;
      for (int g = 0; g < 4; ++g) grp.mag[g] = gp->mag[g];
      grp.lo = gp->lo;
      grp.hi = gp->hi;
      grp.spread = gp->spread;
      grp.lo_max = gp->lo_max;
      grp.nan = gp->nan != 0;
      const hopper::RowChunk w0 = weight_rec(reinterpret_cast<const WRec*>(st + L::kR) + rt0);
      const hopper::RowChunk w1 = weight_rec(reinterpret_cast<const WRec*>(st + L::kR) + rt1);
      nx.v0 = hopper::group_prepare(grp, w0);
      nx.v1 = hopper::group_prepare(grp, w1);
      nx.inc0 = hopper::group_acc_bound(grp, w0);
      nx.inc1 = hopper::group_acc_bound(grp, w1);
      const uint32_t sw0 = *reinterpret_cast<const uint32_t*>(st + L::kS + scale_offset_in_tile(rt0));
      const uint32_t sw1 = *reinterpret_cast<const uint32_t*>(st + L::kS + scale_offset_in_tile(rt1));
      const uint4 wc = *reinterpret_cast<const uint4*>(st + L::kW + (h * 128 + tid) * 16);
      __half2 s0_01, s0_23, s1_01, s1_23;
      decode_scales(sw0, s0_01, s0_23);
      decode_scales(sw1, s1_01, s1_23);
      const uint32_t words[4] = {wc.x, wc.y, wc.z, wc.w};
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        const __half2 a0 = g < 2 ? s0_01 : s0_23, a1 = g < 2 ? s1_01 : s1_23;
        const __half2 r0 = (g & 1) ? __high2half2(a0) : __low2half2(a0);
        const __half2 r1 = (g & 1) ? __high2half2(a1) : __low2half2(a1);
        decode_block(words[g], r0, r1, nx.frag[g]);
      }
    };

    // Measured on the H200 (docs/hopper-exact-path.md): each chunk is prepared, multiplied and
    // applied in turn; the other consumer warpgroup's MMAs overlap this one's scalar work. Tried and
    // slower or no better: preparing chunk c + 1 during chunk c's MMAs (register pressure); issuing
    // chunk c + 1's MMAs before applying chunk c (ptxas 13.0 then serialises every wgmma, C7514, even
    // in a minimal ping-pong kernel); two chunks per wait; the copies issued by a consumer thread
    // instead of this producer warpgroup (256 threads, up to 255 registers, two CTAs per SM).
    Prepared cur;
    for (int64_t c = 0; c < C; ++c, pos.advance(stages)) {
      prepare(pos, cur);
      const int s = pos.stage;
      const uint8_t* st = smem + s * L::kBytes;
      const uint64_t desc = desc_k_major_sw128(smem_addr(st + L::kA));
      __syncwarp();
      wgmma_fence();
      Wgmma<BM>::mma_first(ch, cur.frag[0], desc);
#pragma unroll
      for (int g = 1; g < 4; ++g) Wgmma<BM>::mma(ch, cur.frag[g], desc + 2 * g, true);  // +32 bytes per k16
      wgmma_commit();
      wgmma_wait_all();
      fence_regs(ch);
#pragma unroll
      for (int g = 0; g < 4; ++g) fence_regs(cur.frag[g]);  // the MMAs read them until the wait
      const bool ok0 = hopper::group_final(cur.v0, mn0, ub0), ok1 = hopper::group_final(cur.v1, mn1, ub1);
      ub0 = __fadd_ru(ub0, cur.inc0);
      ub1 = __fadd_ru(ub1, cur.inc1);
      if (ok0 && ok1) {
#pragma unroll
        for (int i = 0; i < R; ++i) acc[i] = __fadd_rz(acc[i], ch[i]);
      } else {
        ++refined_chunks;
        // Rare: the accumulators go to local memory and an out-of-line function walks them, so the
        // registers of the hot loop are not sized for the §3 model (it spilled when inlined).
        float la[R], lc[R];
#pragma unroll
        for (int i = 0; i < R; ++i) {
          la[i] = acc[i];
          lc[i] = ch[i];
        }
        refine_chunk<R>(la, lc, ok0, ok1, st, L::kA, L::kW, L::kS, L::kR, L::kT, h, t, rw0, rt0, slow_steps);
#pragma unroll
        for (int i = 0; i < R; ++i) acc[i] = la[i];
      }
      // Smallest |acc| per row: four independent chains, then combined (latency, not count).
      float m0[2] = {3.0e38f, 3.0e38f}, m1[2] = {3.0e38f, 3.0e38f};
#pragma unroll
      for (int j = 0; j < BM / 8; ++j) {
        m0[j % 2] = fminf(m0[j % 2], fminf(fabsf(acc[4 * j]), fabsf(acc[4 * j + 1])));
        m1[j % 2] = fminf(m1[j % 2], fminf(fabsf(acc[4 * j + 2]), fabsf(acc[4 * j + 3])));
      }
      mn0 = fminf(m0[0], m0[1]);
      mn1 = fminf(m1[0], m1[1]);
      // Every consumer thread arrives: an arrive releases only its own thread's reads of the stage
      // (PTX memory model), so one arrive per warp would lean on the warp barrier's ordering, which
      // compute-sanitizer's racecheck does not follow. One instruction per warp either way.
      mbar_arrive(&empty[s]);
    }

    if (p.counts) {
      atomicAdd(&p.counts[0], static_cast<unsigned long long>(C) * R);  // element steps
      atomicAdd(&p.counts[1], static_cast<unsigned long long>(refined_chunks));
      atomicAdd(&p.counts[2], static_cast<unsigned long long>(slow_steps));
    }
    // Epilogue: raw fp32 and bf16_rn(f32_rn(alpha * acc) [+ bias]) (§4, alpha before bf16).
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const int64_t n0 = nt * kTileN + rt0, n1 = nt * kTileN + rt1;
    const float b0 = (p.bias && n0 < p.n) ? bf16_to_f32(p.bias[n0]) : -0.0f;
    const float b1 = (p.bias && n1 < p.n) ? bf16_to_f32(p.bias[n1]) : -0.0f;
#pragma unroll
    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t m = mt * BM + 8 * j + 2 * t + e;
        if (m >= p.m) continue;
        if (n0 < p.n) {
          if (p.raw) p.raw[m * p.n + n0] = acc[4 * j + e];
          p.out[m * p.n + n0] = epilogue_alpha_before_bf16(acc[4 * j + e], alpha, b0);
        }
        if (n1 < p.n) {
          if (p.raw) p.raw[m * p.n + n1] = acc[4 * j + 2 + e];
          p.out[m * p.n + n1] = epilogue_alpha_before_bf16(acc[4 * j + 2 + e], alpha, b1);
        }
      }
  }
#endif
}

// cuTensorMapEncodeTiled through the runtime's driver entry point (no link against libcuda).
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
Result<CUtensorMap> make_a_map(const uint16_t* a16, int64_t rows, int64_t k64, int bm) {
  static EncodeTiled encode = nullptr;
  if (!encode) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    NVFP4_CUDA_TRY(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q));
    if (!fn || q != cudaDriverEntryPointSuccess) return cuda_error("cuTensorMapEncodeTiled is not available from the driver");
    encode = reinterpret_cast<EncodeTiled>(fn);
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k64), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k64 * 2)};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(bm)};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<uint16_t*>(a16), dims, strides, box, elem,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return cuda_error("cuTensorMapEncodeTiled failed for the A' operand (code " + std::to_string(r) + ")");
  return map;
}

template <int BM>
Status launch_bm(const Sm90Gemm& p, int sm_count, cudaStream_t stream) {
  using L = StageLayout<BM>;
  NVFP4_ASSIGN_OR_RETURN(CUtensorMap map, make_a_map(p.a16, (p.m + BM - 1) / BM * BM, p.chunks * 64, BM));
  int optin = 0, dev = 0;
  NVFP4_CUDA_TRY(cudaGetDevice(&dev));
  NVFP4_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const int budget = optin - kSmemAlign - 256;
  const int stages = std::min(16, budget / (L::kBytes + 16));
  if (stages < 2) return unsupported("sm90 kernel: not enough shared memory for two pipeline stages");
  const int smem = stages * L::kBytes + 2 * stages * 8 + kSmemAlign;
  NVFP4_CUDA_TRY(cudaFuncSetAttribute(sm90_gemm_nvfp4<BM>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int64_t tiles = (p.m + BM - 1) / BM * ((p.n + kTileN - 1) / kTileN);
  const int grid = static_cast<int>(std::min<int64_t>(tiles, sm_count));
  sm90_gemm_nvfp4<BM><<<grid, kThreads, smem, stream>>>(map, p, stages);
  NVFP4_CUDA_LAUNCH_TRY("sm90_gemm_nvfp4");
  return Status::ok();
}

}  // namespace

int sm90_pick_bm(int64_t m, int64_t n, int sm_count) {
  // Relative time of one (tile, chunk) step per tile height, measured on the H200 (M = 128, the four
  // MiniMax H3 linears; re-measured on qkv and fc2 after the shared-memory addressing fix, 2026-12-01):
  // the scalar work per chunk does not shrink with the tile, so small tiles cost more than their
  // share. A persistent grid runs ceil(tiles / SMs) rounds.
  static const struct {
    int bm;
    double t;
  } kCost[] = {{16, 0.65}, {32, 0.69}, {48, 0.85}, {64, 1.0}, {96, 1.39}, {128, 2.0}};
  const int64_t ntiles = (n + kTileN - 1) / kTileN;
  int best = 128;
  double best_t = 1e300;
  for (const auto& c : kCost) {
    const int64_t tiles = (m + c.bm - 1) / c.bm * ntiles;
    const double t = static_cast<double>((tiles + sm_count - 1) / sm_count) * c.t;
    if (t < best_t - 1e-9) {
      best_t = t;
      best = c.bm;
    }
    if (c.bm >= m) break;  // a taller tile only adds padding
  }
  return best;
}

Status launch_sm90_gemm(const Sm90Gemm& p, int sm_count, cudaStream_t stream) {
  if (p.m <= 0 || p.n <= 0 || p.chunks <= 0) return invalid_argument("sm90 kernel: empty problem");
  if (p.chunks > (int64_t{1} << 24) / 64) return invalid_argument("sm90 kernel: K too large");
  switch (p.bm) {
    case 8: return launch_bm<8>(p, sm_count, stream);
    case 16: return launch_bm<16>(p, sm_count, stream);
    case 32: return launch_bm<32>(p, sm_count, stream);
    case 48: return launch_bm<48>(p, sm_count, stream);
    case 64: return launch_bm<64>(p, sm_count, stream);
    case 96: return launch_bm<96>(p, sm_count, stream);
    case 128: return launch_bm<128>(p, sm_count, stream);
    default: return invalid_argument("sm90 kernel: tile height " + std::to_string(p.bm) + " is not one of 8, 16, 32, 48, 64, 96, 128");
  }
}

}  // namespace nvfp4::cuda
