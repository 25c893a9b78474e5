// What one k64 chunk of the exact Hopper path's MMAs costs at small token counts, without memory,
// decode or adds: per chunk each consumer warpgroup issues four `wgmma m64nNk16` (A, the weight,
// from registers; B, the tokens, from a 128-byte-swizzled shared-memory tile) and waits for them,
// as the kernel does. N is the tokens per chain (the kernel's BN: 16 at M = 16). Shapes of the
// chunk's four MMAs:
//   chain  - one chain, the second to fourth accumulating into the first's result (the kernel);
//   halves - two chains of two (k0-31, k32-63), as if summed afterwards;
//   free   - four independent MMAs (four accumulators);
//   ss     - one chain with A from a 128-byte-swizzled shared-memory tile too (64 rows x 128 bytes):
//            what the same MMAs cost when the weight is not read from registers (a decoder that
//            writes the weight fragment to shared memory would feed them so).
// chain and ss also run beside a writer warpgroup (`+w`: 8 KB of conflict-free 4-byte stores into a
// 128-byte-swizzled tile and a `fence.proxy.async` per thread, again and again until the MMA
// warpgroups are done, as a decoder that writes W' tiles would; `+wnf`: the stores without the
// fence), with 1-3 MMA warpgroups: does such a writer slow the MMAs (results v44 r7 read the lone
// consumer's shared-memory chains 100-130 ns slower beside the decoder).
// chain:h / chain:i / chain:f (results v45 r4) add 32 instructions of one kind to each chunk of
// `chain`, on registers of their own (four dependent runs of eight): HMUL2 (the decode's fp16
// multiply), integer LOP3 + IADD3 pairs (its masks and shifts) or FMUL. `<` places them between the
// chain's issue and its wait (under the MMAs, where v45 r1's slower loop had the decode), `>` after
// the wait and the adds (where the kept kernel has it). Do ALU instructions of the issuing warp
// slow its register-operand MMAs, and does the fp16 pipe differ from the others?
// N = 8-64 (accumulators within 128 registers per thread). One CTA per SM, 1-4 warpgroups each.
// Prints `N | warpgroups | shape | ns per chunk per warpgroup | ns per chunk round of the CTA`
// (median of 10 launches after 2 warm-up launches).
// The question it answers (docs/hopper-exact-path.md, "What bounds small M"): is a chunk's time
// at small N the MMAs' own issue and latency, and do warpgroups on one SM share it.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../src/cuda/sm90/sm90_ptx.cuh"
#include "../src/cuda/sm90/sm90_wgmma.cuh"
#include "hopper_probe.hpp"

namespace {
using namespace nvfp4::cuda::sm90;

enum Shape { kChain = 0, kHalves = 1, kFree = 2, kSS = 3 };
const char* const kShapeName[] = {"chain", "halves", "free", "ss"};
constexpr int kChunks = 4096;  // k64 chunks per warpgroup per launch
// Shared memory from its 1024-byte-aligned start: B (N token rows x 128 bytes), A (64 weight rows
// x 128 bytes, kSS) at the next 1024-byte boundary, the writer's tile (64 x 128 bytes) and its
// stop flag; every shape keeps each part's room. The launch adds 1024 bytes for the alignment.
__host__ __device__ constexpr int a_offset(int n) { return (n * 128 + 1023) / 1024 * 1024; }
__host__ __device__ constexpr int w_offset(int n) { return a_offset(n) + 64 * 128; }
__host__ __device__ constexpr int flag_offset(int n) { return w_offset(n) + 64 * 128; }
__host__ __device__ constexpr int smem_bytes(int n) { return flag_offset(n) + 16 + 1024; }

// A thread's weight fragments for the four k16 steps: constant f16 pairs near 1.
__device__ __forceinline__ void fill_fragments(uint32_t (&frag)[4][4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) frag[j][r] = 0x3C003C00u ^ ((threadIdx.x + 4 * j + r) & 0x00FF00FFu);
}

// The kernel's chain: four MMAs of one k64 chunk, A from the fragments, the second to fourth
// accumulating into the first's result in d.
template <int N>
__device__ __forceinline__ void mma_chain(float (&d)[N / 2], uint32_t (&frag)[4][4], uint64_t desc) {
  Wgmma<N>::mma_first(d, frag[0], desc);
  Wgmma<N>::mma(d, frag[1], desc + 2, true);
  Wgmma<N>::mma(d, frag[2], desc + 4, true);
  Wgmma<N>::mma(d, frag[3], desc + 6, true);
}

template <int N, int SHAPE, int WRITER>
__global__ void __launch_bounds__(512, 1) hgmma_probe(float* out, uint32_t seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // B (one k64 chunk of f16 per token), A and the writer's tile as smem_bytes lays them out.
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  constexpr int kAOff = a_offset(N), kWOff = w_offset(N);
  nvfp4::bench::probe_fill_f16_near_one(smem, SHAPE == kSS ? kAOff / 4 + 64 * 32 : N * 32, seed);  // B, and A for `ss`
  // WRITER: the last warpgroup writes the 8 KB tile at kWOff until the flag is set.
  volatile uint32_t* const done = reinterpret_cast<volatile uint32_t*>(smem + flag_offset(N));
  if (threadIdx.x == 0) *done = 0u;
  fence_proxy_async();
  __syncthreads();
  if (WRITER != 0 && threadIdx.x >= blockDim.x - 128) {
    const int tid = threadIdx.x % 128, warp = tid / 32, g = tid % 32 / 4, t = tid % 4;
    uint32_t v = seed + tid;
    while (*done == 0u) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = 16 * warp + g + 8 * (i & 1), unit = (2 * j + (i >> 1)) ^ (row & 7);
          *reinterpret_cast<volatile uint32_t*>(smem + kWOff + row * 128 + unit * 16 + 4 * t) = v + 4 * j + i;
        }
      if constexpr (WRITER == 1) fence_proxy_async();
      ++v;
    }
    return;
  }
  const uint64_t desc = desc_k_major_sw128(smem_addr(smem));
  const uint64_t desc_a = desc_k_major_sw128(smem_addr(smem + kAOff));
  (void)desc_a;
  uint32_t frag[4][4];
  fill_fragments(frag);
  constexpr int R = N / 2;
  float acc[R], d0[R], d1[R], d2[R], d3[R];
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = 0.0f;
#pragma unroll 1
  for (int c = 0; c < kChunks; ++c) {
    // The fragments as the kernel has them: written each chunk (there by the decode; here an empty
    // asm that ptxas must take as a write), then one wgmma fence for the chain. Without it ptxas
    // rebuilt the constant fragments inside the loop between the MMAs, each with its own fence.
    if constexpr (SHAPE != kSS) {
#pragma unroll
      for (int j = 0; j < 4; ++j) fence_regs(frag[j]);
    }
    wgmma_fence();
    if constexpr (SHAPE == kChain) {
      mma_chain<N>(d0, frag, desc);
    } else if constexpr (SHAPE == kSS) {
      Wgmma<N>::mma_ss_first(d0, desc_a, desc);
      Wgmma<N>::mma_ss(d0, desc_a + 2, desc + 2, true);
      Wgmma<N>::mma_ss(d0, desc_a + 4, desc + 4, true);
      Wgmma<N>::mma_ss(d0, desc_a + 6, desc + 6, true);
    } else if constexpr (SHAPE == kHalves) {
      Wgmma<N>::mma_first(d0, frag[0], desc);
      Wgmma<N>::mma_first(d1, frag[2], desc + 4);
      Wgmma<N>::mma(d0, frag[1], desc + 2, true);
      Wgmma<N>::mma(d1, frag[3], desc + 6, true);
    } else {
      Wgmma<N>::mma_first(d0, frag[0], desc);
      Wgmma<N>::mma_first(d1, frag[1], desc + 2);
      Wgmma<N>::mma_first(d2, frag[2], desc + 4);
      Wgmma<N>::mma_first(d3, frag[3], desc + 6);
    }
    wgmma_commit();
    wgmma_wait_all();
    fence_regs(d0);
    // One add per output keeps the sums alive (the kernel's add.rz), the other chains' results too.
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] = __fadd_rz(acc[i], d0[i]);
    if constexpr (SHAPE != kChain && SHAPE != kSS) {
      fence_regs(d1);
#pragma unroll
      for (int i = 0; i < R; ++i) acc[i] = __fadd_rz(acc[i], d1[i]);
    }
    if constexpr (SHAPE == kFree) {
      fence_regs(d2);
      fence_regs(d3);
#pragma unroll
      for (int i = 0; i < R; ++i) acc[i] = __fadd_rz(acc[i], __fadd_rz(d2[i], d3[i]));
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < R; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (WRITER != 0 && threadIdx.x == 0) *done = 1u;  // warpgroup 0's end stops the writer (the others end about then)
#else
  (void)out;
  (void)seed;
#endif
}

// OPS: 1 HMUL2, 2 LOP3 + IADD3, 3 FMUL; UNDER: between the issue and the wait, else after the adds.
template <int N, int OPS, bool UNDER>
__global__ void __launch_bounds__(512, 1) hgmma_ops_probe(float* out, uint32_t seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  nvfp4::bench::probe_fill_f16_near_one(smem, N * 32, seed);
  fence_proxy_async();
  __syncthreads();
  const uint64_t desc = desc_k_major_sw128(smem_addr(smem));
  const uint32_t key_addr = smem_addr(smem) + 16 * (threadIdx.x % 64);
  uint32_t frag[4][4];
  fill_fragments(frag);
  constexpr int R = N / 2;
  float acc[R], d0[R];
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = 0.0f;
  uint32_t x[4] = {seed, seed + 1, seed + 2, seed + 3};
  // 32 instructions in four dependent runs of eight, held where they stand (after the chain's issue,
  // or after the adds) by shared-memory stores, which ptxas does not move across the MMAs (they
  // read shared memory): the seed is stored and loaded back before them (a C++ or PTX branch there
  // made ptxas serialise the MMAs) and the result stored after them. The threads that share an
  // address store in any order: only the time is read.
  auto ops = [&]() {
    uint32_t k;
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(key_addr + 8192), "r"(x[0]) : "memory");
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(k) : "r"(key_addr + 8192) : "memory");
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      uint32_t v = x[q] ^ k;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        if constexpr (OPS == 1) {
          __half2 h = __hmul2(*reinterpret_cast<__half2*>(&v), *reinterpret_cast<const __half2*>(&k));
          v = *reinterpret_cast<uint32_t*>(&h);
        } else if constexpr (OPS == 2) {
          if (i & 1) v = v + k;
          else v = (v & 0x0E0E0E0Eu) | (k & 0x80808080u);
        } else {
          float f = __uint_as_float(v) * __uint_as_float(k | 0x3F800000u);
          v = __float_as_uint(f);
        }
      }
      x[q] = v;
    }
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(key_addr + 8192), "r"(x[0] ^ x[1] ^ x[2] ^ x[3]) : "memory");
  };
#pragma unroll 1
  for (int c = 0; c < kChunks; ++c) {
#pragma unroll
    for (int j = 0; j < 4; ++j) fence_regs(frag[j]);
    wgmma_fence();
    mma_chain<N>(d0, frag, desc);
    wgmma_commit();
    if constexpr (OPS != 0 && UNDER) ops();
    wgmma_wait_all();
    fence_regs(d0);
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] = __fadd_rz(acc[i], d0[i]);
    if constexpr (OPS != 0 && !UNDER) ops();
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < R; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s + __uint_as_float(x[0] ^ x[1] ^ x[2] ^ x[3]);
#else
  (void)out;
  (void)seed;
#endif
}

struct Variant {
  int n, shape, writer;
  void (*kernel)(float*, uint32_t);
};
const char* const kWriterName[] = {"", "+w", "+wnf"};
struct OpsVariant {
  int n;
  const char* name;
  void (*kernel)(float*, uint32_t);
};
template <int N>
void add_ops(std::vector<OpsVariant>& v) {
  v.push_back({N, "chain", hgmma_ops_probe<N, 0, true>});
  v.push_back({N, "chain:h<", hgmma_ops_probe<N, 1, true>});
  v.push_back({N, "chain:h>", hgmma_ops_probe<N, 1, false>});
  v.push_back({N, "chain:i<", hgmma_ops_probe<N, 2, true>});
  v.push_back({N, "chain:i>", hgmma_ops_probe<N, 2, false>});
  v.push_back({N, "chain:f<", hgmma_ops_probe<N, 3, true>});
  v.push_back({N, "chain:f>", hgmma_ops_probe<N, 3, false>});
}

// Shapes whose accumulators fit 128 registers per thread (512 threads): chain, halves and ss at
// every N, free up to N = 32.
template <int N>
void add_all(std::vector<Variant>& v) {
  v.push_back({N, kChain, 0, hgmma_probe<N, kChain, 0>});
  v.push_back({N, kHalves, 0, hgmma_probe<N, kHalves, 0>});
  v.push_back({N, kSS, 0, hgmma_probe<N, kSS, 0>});
  if constexpr (N <= 32) v.push_back({N, kFree, 0, hgmma_probe<N, kFree, 0>});
  if constexpr (N == 16 || N == 64) {
    v.push_back({N, kChain, 1, hgmma_probe<N, kChain, 1>});
    v.push_back({N, kChain, 2, hgmma_probe<N, kChain, 2>});
    v.push_back({N, kSS, 1, hgmma_probe<N, kSS, 1>});
    v.push_back({N, kSS, 2, hgmma_probe<N, kSS, 2>});
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = nvfp4::bench::probe_out_path(argc, argv);
  cudaDeviceProp prop{};
  if (!nvfp4::bench::probe_require_hopper("sm90 hgmma probe", prop)) return 3;
  std::vector<Variant> vs;
  add_all<8>(vs);
  add_all<16>(vs);
  add_all<32>(vs);
  add_all<64>(vs);
  const int grid = prop.multiProcessorCount;
  float* d_out = nullptr;
  if (cudaMalloc(&d_out, static_cast<size_t>(grid) * 512 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "sm90 hgmma probe: cudaMalloc failed\n");
    return 4;
  }
  FILE* js = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (js) std::fprintf(js, "{\"device\": \"%s\", \"sms\": %d, \"chunks_per_warpgroup\": %d, \"rows\": [\n", prop.name, grid, kChunks);
  std::printf("N | warpgroups | shape | ns per chunk per warpgroup | ns per chunk round of the CTA\n");
  // One row per MMA warpgroup count: the median launch time per chunk round, printed and in the JSON.
  bool first = true;
  auto run = [&](int n, const std::string& name, void (*kernel)(float*, uint32_t), int max_wgs, int extra_threads) {
    const int smem = smem_bytes(n);
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int wgs = 1; wgs <= max_wgs; ++wgs) {
      const int threads = 128 * wgs + extra_threads;
      const double ms = nvfp4::bench::probe_median_ms(2, 10, [&](int it) { kernel<<<grid, threads, smem>>>(d_out, 777u + it); });
      if (ms < 0) {
        std::printf("N=%d %s: error: %s\n", n, name.c_str(), cudaGetErrorString(cudaGetLastError()));
        return false;
      }
      const double round_ns = 1e6 * ms / kChunks;
      std::printf("%d | %d | %s | %.1f | %.1f\n", n, wgs, name.c_str(), round_ns / wgs, round_ns);
      if (js)
        std::fprintf(js, "%s{\"n\": %d, \"warpgroups\": %d, \"shape\": \"%s\", \"ns_per_chunk_round\": %.2f}", first ? "" : ",\n", n, wgs,
                     name.c_str(), round_ns);
      first = false;
    }
    return true;
  };
  for (const Variant& x : vs)  // with a writer: up to three MMA warpgroups and the writer's 128 threads
    if (!run(x.n, std::string(kShapeName[x.shape]) + kWriterName[x.writer], x.kernel, x.writer ? 3 : 4, x.writer ? 128 : 0)) return 4;
  std::vector<OpsVariant> ov;
  add_ops<16>(ov);
  add_ops<64>(ov);
  for (const OpsVariant& x : ov)
    if (!run(x.n, x.name, x.kernel, 3, 0)) return 4;
  if (js) {
    std::fprintf(js, "\n]}\n");
    std::fclose(js);
  }
  cudaFree(d_out);
  return 0;
}
