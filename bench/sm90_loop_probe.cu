// The speed of light of the exact Hopper path's main-loop structures, measured without global
// memory traffic: every operand sits in shared memory from the start, and each CTA runs the same
// k64 chunk loop many times. What it answers (docs/hopper-exact-path.md, "Loop structures"): how
// fast the tensor cores can go when every chunk sum must be waited for and added with add.rz
// (one FADD per output per chunk), for each way of hiding that add and of feeding the weight
// operand (decoded in the consumer's registers, or by a decoder warpgroup into shared memory).
//
// Each variant: one CTA per SM, warpgroup 0 the producer (idle, or the decoder), WGS consumer
// warpgroups of 64 weight rows x BN tokens. Values are arbitrary finite fp16 numbers; the
// accumulators are written out so no work is dead. Prints `variant | us | TFLOP/s | % of peak`.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../src/cuda/sm90/sm90_layout.hpp"
#include "../src/cuda/sm90/sm90_ptx.cuh"
#include "../src/cuda/sm90/sm90_wgmma.cuh"
#include "hopper_probe.hpp"

namespace {
using namespace nvfp4::cuda::sm90;

enum Style { kPeak = 0, kSerial = 1, kLate = 2, kSerial2 = 3, kPeak256 = 4, kWaitOnly = 5, kNoMma = 6, kPeakPre = 7, kSerialPre = 8, kPipe2 = 9 };
enum ASrc { kStatic = 0, kRegDecode = 1, kDecoderWG = 2, kDecoderNoFence = 3 };
__host__ __device__ constexpr bool decoder(int a) { return a == kDecoderWG || a == kDecoderNoFence; }
constexpr int kRing = 4;        // decoder ring stages
constexpr int kChunks = 2048;   // k64 chunks per CTA per launch

__device__ __forceinline__ float fadd_rz(float a, float b) { return __fadd_rz(a, b); }

// The decode of one 32-bit code word into four f16x2 registers: the kernel's conversion-free
// decode (sm90_layout.hpp's code_word_fp16: five integer operations, four PRMT) and four HMUL2.
__device__ __forceinline__ void decode8(uint32_t w, uint32_t m, uint32_t (&h)[4]) {
  uint32_t x[4];
  code_word_fp16(w, x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 r = __hmul2(*reinterpret_cast<__half2*>(&x[i]), *reinterpret_cast<__half2*>(&m));
    h[i] = *reinterpret_cast<uint32_t*>(&r);
  }
}

template <int STYLE, int ASRC, int WGS>
struct Probe {
  static constexpr int BN = STYLE == kSerial2 || STYLE == kPeak256 ? 256 : 128;   // tokens per consumer warpgroup
  static constexpr int kThreads = 128 * (WGS + 1);
  static constexpr int kEntry = (65536 / kThreads > 255 ? 255 : 65536 / kThreads) / 8 * 8;
  static constexpr int kProd = 40;
  static constexpr int kGrant = (kEntry + (kEntry - kProd) / WGS) / 8 * 8;  // what the producer gives back, shared
  static constexpr int kCons = kGrant > 232 ? 232 : kGrant;
  // shared memory: B (tokens) 256 x 128 B; A' static tiles WGS x 8 KB; codes WGS x 2 KB; ring kRing x WGS x 8 KB
  static constexpr int kOffB = 0, kOffA = 32768, kOffCodes = kOffA + WGS * 8192, kOffRing = kOffCodes + WGS * 2048;
  static constexpr int kOffBar = kOffRing + kRing * WGS * 8192;
  static constexpr int kSmem = kOffBar + 2 * kRing * 8 + 1024;
};

template <int STYLE, int ASRC, int WGS>
__global__ void __launch_bounds__(Probe<STYLE, ASRC, WGS>::kThreads, 1) loop_probe(float* out, uint32_t seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using P = Probe<STYLE, ASRC, WGS>;
  constexpr int BN = P::BN;
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + P::kOffBar);
  uint64_t* empty = full + kRing;
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  // Fill: fp16 values 1 + j/1024 (finite, normal), codes arbitrary.
  nvfp4::bench::probe_fill_f16_near_one(smem, P::kOffBar / 4, seed);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kRing; ++s) {
      mbar_init(&full[s], 128);
      mbar_init(&empty[s], 128 * WGS);
    }
    fence_barrier_init();
  }
  fence_proxy_async();
  __syncthreads();

  if (wg == 0) {
    regs_release<P::kProd>();
    if constexpr (decoder(ASRC)) {
      // The decoder: per chunk and consumer block, 32 weights per thread: one 16-byte code load, four
      // words decoded, four 16-byte stores at the 128-byte-swizzled K-major position.
      const int r = tid / 2, half = tid % 2;
      uint32_t ph = 0;
      int s = 0;
      for (int c = 0; c < kChunks; ++c) {
        mbar_wait(&empty[s], ph ^ 1);
#pragma unroll
        for (int b = 0; b < WGS; ++b) {
          const uint4 w = *reinterpret_cast<const uint4*>(smem + P::kOffCodes + b * 2048 + tid * 16);
          const uint32_t m = *reinterpret_cast<const uint32_t*>(smem + P::kOffCodes + b * 2048 + (tid % 64) * 4);
          const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
          uint8_t* dst = smem + P::kOffRing + (s * WGS + b) * 8192 + r * 128;
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            uint32_t h[4];
            decode8(ws[u], m, h);
            const int unit = (half * 4 + u) ^ (r % 8);
            *reinterpret_cast<uint4*>(dst + unit * 16) = make_uint4(h[0], h[1], h[2], h[3]);
          }
        }
        if constexpr (ASRC == kDecoderWG) fence_proxy_async();
        mbar_arrive(&full[s]);
        if (++s == kRing) {
          s = 0;
          ph ^= 1;
        }
      }
    }
    return;
  }
  regs_acquire<P::kCons>();
  const int q = wg - 1;
  const uint64_t db = desc_k_major_sw128(smem_addr(smem + P::kOffB));
  const uint64_t da_static = desc_k_major_sw128(smem_addr(smem + P::kOffA + q * 8192));
  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
  uint32_t frag[4][4];
  auto decode_into = [&](uint32_t(&f)[4][4]) {
    const uint4 w = *reinterpret_cast<const uint4*>(smem + P::kOffCodes + q * 2048 + tid * 16);
    const uint32_t m0 = *reinterpret_cast<const uint32_t*>(smem + P::kOffCodes + q * 2048 + (tid % 32) * 4);
    const uint32_t m1 = *reinterpret_cast<const uint32_t*>(smem + P::kOffCodes + q * 2048 + 128 + (tid % 32) * 4);
    decode8(w.x, m0, f[0]);
    decode8(w.y, m0, f[1]);
    decode8(w.z, m1, f[2]);
    decode8(w.w, m1, f[3]);
  };
  auto decode_regs = [&]() { decode_into(frag); };
  // One chain of four k16 MMAs over BN_ tokens into d (zero-initialised unless acc_in), A from the
  // fragments f (register operand): the *Pre and pipe2 styles pass the buffer they decoded into.
  auto chain_f = [&](auto& d, uint32_t(&f)[4][4], uint64_t dbb, bool acc_in) {
    constexpr int N = sizeof(d) / sizeof(float) * 2;
    wgmma_fence();
    if (acc_in) Wgmma<N>::mma(d, f[0], dbb, true);
    else Wgmma<N>::mma_first(d, f[0], dbb);
#pragma unroll
    for (int j = 1; j < 4; ++j) Wgmma<N>::mma(d, f[j], dbb + 2 * j, true);
    wgmma_commit();
  };
  // The same with A by descriptor da, or from `frag` for the register-decode sources.
  auto chain = [&](auto& d, uint64_t da, uint64_t dbb, bool acc_in) {
    if constexpr (ASRC == kRegDecode) {
      chain_f(d, frag, dbb, acc_in);
    } else {
      constexpr int N = sizeof(d) / sizeof(float) * 2;
      wgmma_fence();
      if (acc_in) Wgmma<N>::mma_ss(d, da, dbb, true);
      else Wgmma<N>::mma_ss_first(d, da, dbb);
#pragma unroll
      for (int j = 1; j < 4; ++j) Wgmma<N>::mma_ss(d, da + 2 * j, dbb + 2 * j, true);
      wgmma_commit();
    }
  };
  uint32_t ph = 0;
  int s = 0;
  auto a_desc = [&]() -> uint64_t {
    if constexpr (decoder(ASRC)) {
      mbar_wait(&full[s], ph);
      return desc_k_major_sw128(smem_addr(smem + P::kOffRing + (s * WGS + q) * 8192));
    } else {
      return da_static;
    }
  };
  auto release = [&]() {
    if constexpr (decoder(ASRC)) {
      mbar_arrive(&empty[s]);
      if (++s == kRing) {
        s = 0;
        ph ^= 1;
      }
    }
  };

  if constexpr (STYLE == kNoMma) {  // the decoder's own rate: consumers take each stage and give it back
#pragma unroll 1
    for (int c = 0; c < kChunks; ++c) {
      acc[0] += static_cast<float>(a_desc() & 1);
      release();
    }
  } else if constexpr (STYLE == kPeakPre || STYLE == kSerialPre) {
    // The register-decode chain with chunk c + 1 decoded into a second fragment buffer before the
    // wait for chunk c's MMAs (kPeakPre: one accumulator across chunks; kSerialPre: each chunk from
    // zero, waited for and added with add.rz, as the exact kernel's step). In the SASS (results v17
    // r2) the fragment loads stay above the wait (its memory clobber) and ptxas moves the decode's
    // arithmetic between the chain's HGMMAs (kPeakPre) or below the wait, among the adds
    // (kSerialPre); the two unrolled steps' chunk sums get registers 16 apart, so some of a step's
    // adds follow the next chain's first HGMMA.
    static_assert(ASRC == kRegDecode, "the *Pre styles decode in the consumer's registers");
    uint32_t fb[4][4];
    float cs[64];
    decode_into(frag);
    auto step = [&](uint32_t(&fa)[4][4], uint32_t(&fn)[4][4]) {
      if constexpr (STYLE == kPeakPre) chain_f(acc, fa, db, true);
      else chain_f(cs, fa, db, false);
      decode_into(fn);
      wgmma_fence();  // as measured in results v17 r2; it does not keep ptxas from moving the arithmetic below the wait
      wgmma_wait_all();
#pragma unroll
      for (int j = 0; j < 4; ++j) fence_regs(fa[j]);
      if constexpr (STYLE == kPeakPre) {
        fence_regs(acc);
      } else {
        fence_regs(cs);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = fadd_rz(acc[i], cs[i]);
      }
    };
#pragma unroll 1
    for (int c = 0; c < kChunks; c += 2) {
      step(frag, fb);
      step(fb, frag);
    }
  } else if constexpr (STYLE == kPipe2) {
    // The warpgroup's 128 tokens as two chains of 64 (ca: tokens 0-63, cb: 64-127), each from zero,
    // waited for and added with add.rz, software-pipelined so that one chain is always in flight:
    //   wait chain 0 of c | issue chain 1 of c | add chain 0, decode c + 1 | wait chain 1 of c |
    //   issue chain 0 of c + 1 | add chain 1
    // The adds of one chain run under the other chain's MMAs; ptxas places the decode's
    // arithmetic partly between chain 1's HGMMAs and partly after its wait (results v17 r2).
    static_assert(ASRC == kRegDecode, "kPipe2 decodes in the consumer's registers");
    uint32_t fb[4][4];
    float ca[32], cb[32];
    const uint64_t db1 = db + 64 * 128 / 16;
    decode_into(frag);
    chain_f(ca, frag, db, false);
    // ptxas serialises every wgmma (C7514) when accumulators are read after a wait_group 1, so
    // each chain is retired by a wait_group 0 before its sums are read, with the other issued.
    auto step = [&](uint32_t(&fa)[4][4], uint32_t(&fn)[4][4]) {
      wgmma_wait_all();
      fence_regs(ca);
      chain_f(cb, fa, db1, false);
#pragma unroll
      for (int i = 0; i < 32; ++i) acc[i] = fadd_rz(acc[i], ca[i]);
      decode_into(fn);
      wgmma_wait_all();
      fence_regs(cb);
#pragma unroll
      for (int j = 0; j < 4; ++j) fence_regs(fa[j]);
      chain_f(ca, fn, db, false);
#pragma unroll
      for (int i = 0; i < 32; ++i) acc[32 + i] = fadd_rz(acc[32 + i], cb[i]);
    };
#pragma unroll 1
    for (int c = 0; c < kChunks; c += 2) {
      step(frag, fb);
      step(fb, frag);
    }
    wgmma_wait_all();
    fence_regs(ca);
#pragma unroll
    for (int i = 0; i < 32; ++i) acc[i] = fadd_rz(acc[i], ca[i]);
  } else if constexpr (STYLE == kPeak || STYLE == kPeak256) {  // one accumulator across chunks
#pragma unroll 1
    for (int c = 0; c < kChunks; ++c) {
      if constexpr (ASRC == kRegDecode) decode_regs();
      const uint64_t da = a_desc();
      chain(acc, da, db, true);
      wgmma_wait_all();
      fence_regs(acc);
      release();
    }
  } else if constexpr (STYLE == kSerial || STYLE == kWaitOnly) {  // chain from zero, wait, add (or not)
    float cs[64];
#pragma unroll 1
    for (int c = 0; c < kChunks; ++c) {
      if constexpr (ASRC == kRegDecode) decode_regs();
      const uint64_t da = a_desc();
      chain(cs, da, db, false);
      wgmma_wait_all();
      fence_regs(cs);
      release();
      if constexpr (STYLE == kSerial) {
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = fadd_rz(acc[i], cs[i]);
      }
    }
    if constexpr (STYLE == kWaitOnly) {
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = cs[i];
    }
  } else if constexpr (STYLE == kSerial2) {
    float cs[64];
#pragma unroll 1
    for (int c = 0; c < kChunks; ++c) {
      if constexpr (ASRC == kRegDecode) decode_regs();
      const uint64_t da = a_desc();
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        chain(cs, da, db + h * (128 * 128 / 16), false);
        wgmma_wait_all();
        fence_regs(cs);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[64 * h + i] = fadd_rz(acc[64 * h + i], cs[i]);
      }
      release();
    }
  } else {  // kLate: chunk c's sums are added after chunk c + 1 is issued
    float c0[64], c1[64];
    if constexpr (ASRC == kRegDecode) decode_regs();
    chain(c0, a_desc(), db, false);
    auto step = [&](float(&cur)[64], float(&nxt)[64]) {
      wgmma_wait_all();
      fence_regs(cur);
      release();
      if constexpr (ASRC == kRegDecode) decode_regs();
      chain(nxt, a_desc(), db, false);
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = fadd_rz(acc[i], cur[i]);
    };
#pragma unroll 1
    for (int c = 0; c + 2 < kChunks; c += 2) {
      step(c0, c1);
      step(c1, c0);
    }
    step(c0, c1);
    wgmma_wait_all();
    fence_regs(c1);
    release();
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = fadd_rz(acc[i], c1[i]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) sum += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
#endif
}

struct Variant {
  const char* name;
  int style, wgs, bn;
  void (*kernel)(float*, uint32_t);
  int smem;
};
#define V(NAME, ST, AS, W) \
  Variant { NAME, ST, W, Probe<ST, AS, W>::BN, loop_probe<ST, AS, W>, Probe<ST, AS, W>::kSmem }

}  // namespace

int main(int argc, char** argv) {
  const std::string out = nvfp4::bench::probe_out_path(argc, argv);
  cudaDeviceProp prop{};
  if (!nvfp4::bench::probe_require_hopper("sm90 loop probe", prop)) return 3;
  const Variant vs[] = {
      V("peak ss (acc across chunks), 2 wg", kPeak, kStatic, 2),
      V("peak ss n256, 2 wg", kPeak256, kStatic, 2),
      V("wait-only ss (zero-init chain + wait, no add), 2 wg", kWaitOnly, kStatic, 2),
      V("wait-only ss, 3 wg", kWaitOnly, kStatic, 3),
      V("peak ss, 3 wg", kPeak, kStatic, 3),
      V("serial ss, 2 wg", kSerial, kStatic, 2),
      V("serial ss, 3 wg", kSerial, kStatic, 3),
      V("late ss, 2 wg", kLate, kStatic, 2),
      V("serial2 ss (256 tok, 2 chains), 2 wg", kSerial2, kStatic, 2),
      V("peak rs-decode, 2 wg", kPeak, kRegDecode, 2),
      V("serial rs-decode, 2 wg", kSerial, kRegDecode, 2),
      V("late rs-decode, 2 wg", kLate, kRegDecode, 2),
      V("serial2 rs-decode, 2 wg", kSerial2, kRegDecode, 2),
      V("peak rs-decode, next chunk decoded before the wait, 2 wg", kPeakPre, kRegDecode, 2),
      V("serial rs-decode, next chunk decoded before the wait, 2 wg", kSerialPre, kRegDecode, 2),
      V("pipe2 rs-decode (two chains of 64, one always in flight), 2 wg", kPipe2, kRegDecode, 2),
      V("pipe2 rs-decode, 3 wg", kPipe2, kRegDecode, 3),
      V("peak decoder-wg, 2 wg", kPeak, kDecoderWG, 2),
      V("serial decoder-wg, 2 wg", kSerial, kDecoderWG, 2),
      V("serial decoder-wg, 3 wg", kSerial, kDecoderWG, 3),
      V("late decoder-wg, 2 wg", kLate, kDecoderWG, 2),
      V("serial2 decoder-wg, 2 wg", kSerial2, kDecoderWG, 2),
      V("decoder alone, 2 blocks per chunk (TFLOP/s as if 2 wg x 128 tokens)", kNoMma, kDecoderWG, 2),
      V("decoder alone, 1 block per chunk", kNoMma, kDecoderWG, 1),
      V("decoder alone without the proxy fence, 2 blocks", kNoMma, kDecoderNoFence, 2),
      V("serial2 decoder-wg without the proxy fence, 2 wg", kSerial2, kDecoderNoFence, 2),
  };
  const int grid = prop.multiProcessorCount;
  float* d_out = nullptr;
  cudaMalloc(&d_out, static_cast<size_t>(grid) * 512 * sizeof(float));
  FILE* js = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (js) std::fprintf(js, "{\"device\": \"%s\", \"sms\": %d, \"chunks_per_cta\": %d, \"variants\": [\n", prop.name, grid, kChunks);
  double peak = 0;
  std::printf("variant | us | TFLOP/s | %% of the first line\n");
  for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); ++v) {
    const Variant& x = vs[v];
    cudaFuncSetAttribute(x.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, x.smem);
    const double ms =
        nvfp4::bench::probe_median_ms(2, 10, [&](int it) { x.kernel<<<grid, 128 * (x.wgs + 1), x.smem>>>(d_out, 12345u + it); });
    if (ms < 0) {
      std::printf("%s | error: %s\n", x.name, cudaGetErrorString(cudaGetLastError()));
      return 4;
    }
    const double us = 1e3 * ms;
    const double flop = 2.0 * 64 * x.bn * 64 * kChunks * x.wgs * grid;
    const double tf = flop / us * 1e-6;
    if (v == 0) peak = tf;
    std::printf("%s | %.1f | %.1f | %.1f\n", x.name, us, tf, 100 * tf / peak);
    if (js) std::fprintf(js, "%s{\"variant\": \"%s\", \"us\": %.2f, \"tflops\": %.2f}", v ? ",\n" : "", x.name, us, tf);
  }
  if (js) {
    std::fprintf(js, "\n]}\n");
    std::fclose(js);
  }
  return 0;
}
