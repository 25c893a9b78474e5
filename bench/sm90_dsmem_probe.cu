// Can chunk sums cross SMs through distributed shared memory fast enough for a K-split over a
// thread-block cluster (docs/hopper-exact-path.md, "out and fc2 at M <= 32")? The exact path's
// K-split runs out and fc2 at M <= 32 as 84 CTAs on 132 SMs: per CTA, chunk-sum warpgroups compute
// each k64 chunk's sums (fp32, 64 weight rows x T tokens) into a ring of slots and one applier
// warpgroup adds them to the accumulators in chunk order (the sequential contract). Results v14 had
// helper CTAs on the idle SMs hand sums over through L2 (a copy, a flag, an import): no faster. Here
// a helper CTA of the owners' cluster writes its sums straight into an owner's slot with `st.async`
// (completing the owner's mbarrier by bytes), and the owner's applier hands the slot group back by
// a remote `mbarrier.arrive` on the helper's barrier: no global memory and no flag. `(plain)` rows
// time the in-CTA K-split's own hand-over (ordinary stores, an arrival per thread) for comparison.
//
// Per cluster: O owner CTAs (applier warpgroup 0, L local sender warpgroups) and, with HS > 0, one
// helper CTA of O * HS sender warpgroups (HS per owner). An owner's chunk c goes to local sender
// c mod (L + HS) where that is < L, else to its helper sender (c mod (L + HS)) - L. Every sender
// writes its chunk with st.async into the owner's slot c mod S (the kernel's layout: float4 i of
// thread x at [i][x]); the S slots (16 up to 32 tokens) are two groups, each with one `full` barrier
// (armed by the applier with the group's bytes) and one `empty` barrier per side (the owner's for
// its local senders, the helper's per owner for the remote ones), which the applier arrives on once it has
// loaded the group. A sender's chunk is either nothing but its store (`-`) or the kernel's chunk
// work without memory: a 16-byte word decoded into the A fragments by the kernel's decode_word
// (four of them) and a chain of four `wgmma m64nTk16` from a zero accumulator (`mma`).
// At 64 and 128 tokens (8 and 4 slots) the hand-over alone and one local sender with a helper.
// Prints `T | owners | local senders | helper senders per owner | chunk work | clusters | ns per
// chunk per owner | helper GB/s` (median of 10 launches after 2 warm-up launches; 4096 chunks per
// owner per launch; as many clusters as can be resident, cudaOccupancyMaxActiveClusters).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../src/cuda/sm90/sm90_decode.cuh"
#include "../src/cuda/sm90/sm90_ptx.cuh"
#include "../src/cuda/sm90/sm90_wgmma.cuh"
#include "hopper_probe.hpp"

namespace {
using namespace nvfp4::cuda::sm90;

// The kernel's ring of sum slots, two groups (16 slots up to 32 tokens, 8 at 64); at 128 tokens, which
// the kernel never splits, four (32 KB each), for the hand-over's pace at 32 KB a chunk.
__host__ __device__ constexpr int slots_of(int t) { return t <= 32 ? 16 : (t <= 64 ? 8 : 4); }
constexpr int kGroups = 2;
constexpr int kChunks = 4096;  // per owner and launch; a multiple of every slot count
static_assert(kChunks % 16 == 0, "whole slot rounds");

// Shared memory from its 1024-byte-aligned start: the slots, the senders' B tile (T tokens x 128
// bytes of f16, also the words they decode), then the barriers: full[kGroups], the owner's
// empty[kGroups], the helper's empty[owner][kGroups].
__host__ __device__ constexpr int slot_bytes(int t) { return 64 * t * 4; }
__host__ __device__ constexpr int b_offset(int t) { return slots_of(t) * slot_bytes(t); }
__host__ __device__ constexpr int bar_offset(int t) { return b_offset(t) + t * 128; }
__host__ __device__ constexpr int smem_bytes(int t) { return bar_offset(t) + 8 * (2 * kGroups + 2 * kGroups) + 1024; }

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// addr (this CTA's shared memory) as the same offset in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t map_rank(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// A wait on a barrier of this CTA whose arrivals come from other CTAs (release at cluster scope).
__device__ __forceinline__ void wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "W_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra W_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void arrive_cluster(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}
__device__ __forceinline__ void st_async4(uint32_t cluster_addr, float a, float b, float c, float d, uint32_t cluster_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(cluster_addr),
               "f"(a), "f"(b), "f"(c), "f"(d), "r"(cluster_bar)
               : "memory");
}

// PLAIN (owners alone only): the in-CTA K-split's own hand-over instead, ordinary shared-memory stores
// and one mbarrier arrival per sender thread and chunk (full counts kGroup x 128 arrivals, no bytes).
// Up to 64 tokens five warpgroups a CTA (102 registers a thread); at 128 tokens three (64 sums and 64
// accumulators a thread).
template <int T, int O, int L, int HS, bool MMA, bool PLAIN = false>
__global__ void __launch_bounds__(T >= 128 ? 384 : 640, 1) dsmem_probe(float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kSlots = slots_of(T), kGroup = kSlots / kGroups;
  constexpr int RH = T / 2;  // sums per thread and chunk: 64 rows x T tokens over 128 threads
  constexpr int kP = L + HS;  // an owner's chunks come round in this period
  static_assert(RH % 4 == 0 && L + HS >= 1 && L <= 4 && O * HS <= 4, "T a multiple of 8, at most four sender warpgroups a CTA");
  static_assert(!PLAIN || (HS == 0 && O == 1), "the plain hand-over is the in-CTA one");
  static_assert(T < 128 || (1 + L <= 3 && O * HS <= 3), "at 128 tokens at most three warpgroups a CTA");
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint8_t* const btile = smem + b_offset(T);
  uint64_t* const full = reinterpret_cast<uint64_t*>(smem + bar_offset(T));
  uint64_t* const empty_own = full + kGroups;
  uint64_t* const empty_helper = empty_own + kGroups;  // [O][kGroups]
  const uint32_t rank = HS > 0 ? cluster_rank() : 0u;
  const bool helper = HS > 0 && rank == static_cast<uint32_t>(O);
  const int tid = threadIdx.x % 128, wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int g = 0; g < kGroups; ++g) {
      mbar_init(&full[g], PLAIN ? kGroup * 128 : 1);
      mbar_init(&empty_own[g], 1);
      for (int o = 0; o < O; ++o) mbar_init(&empty_helper[o * kGroups + g], 1);
    }
    // Round 0 armed before any sender can write (they start after the cluster barrier below).
    if (!helper && !PLAIN)
      for (int g = 0; g < kGroups; ++g) mbar_arrive_expect_tx(&full[g], kGroup * slot_bytes(T));
  }
  nvfp4::bench::probe_fill_f16_near_one(btile, T * 32, 0u);
  fence_barrier_init();
  fence_proxy_async();
  __syncthreads();
  if constexpr (HS > 0) cluster_sync_all();
  float keep = 0.0f;
  if (!helper && wg == 0) {
    // The applier: a group at a time, its loads and add.rz, then the group handed back.
    float acc[RH];
#pragma unroll
    for (int i = 0; i < RH; ++i) acc[i] = 0.0f;
    const float4* const my = reinterpret_cast<const float4*>(smem) + tid;
    const uint32_t helper_empty = HS > 0 ? map_rank(smem_addr(&empty_helper[rank * kGroups]), O) : 0u;
#pragma unroll 1
    for (int gi = 0; gi < kChunks / kGroup; ++gi) {
      const int b = gi % kGroups;
      wait_cluster(smem_addr(&full[b]), (gi / kGroups) & 1);
#pragma unroll
      for (int k = 0; k < kGroup; ++k)
#pragma unroll
        for (int i4 = 0; i4 < RH / 4; ++i4) {
          const float4 v = my[(b * kGroup + k) * (slot_bytes(T) / 16) + i4 * 128];
          acc[4 * i4] = __fadd_rz(acc[4 * i4], v.x);
          acc[4 * i4 + 1] = __fadd_rz(acc[4 * i4 + 1], v.y);
          acc[4 * i4 + 2] = __fadd_rz(acc[4 * i4 + 2], v.z);
          acc[4 * i4 + 3] = __fadd_rz(acc[4 * i4 + 3], v.w);
        }
      named_bar_sync(1, 128);  // every thread has loaded the group
      if (tid == 0) {
        if (!PLAIN && gi + kGroups < kChunks / kGroup) mbar_arrive_expect_tx(&full[b], kGroup * slot_bytes(T));  // the next round
        if constexpr (L > 0) arrive_cluster(map_rank(smem_addr(&empty_own[b]), rank));
        if constexpr (HS > 0) arrive_cluster(helper_empty + 8 * b);
      }
    }
#pragma unroll
    for (int i = 0; i < RH; ++i) keep += acc[i];
  } else if ((!helper && wg >= 1 && wg <= L) || (helper && wg < O * HS)) {
    // A sender: its chunks of one owner, each waited for by its slot group, worked, stored.
    const int o = helper ? wg / HS : static_cast<int>(rank);
    const int first = helper ? L + wg % HS : wg - 1;
    const uint32_t orank = static_cast<uint32_t>(o);
    const uint32_t slots_c = map_rank(smem_addr(smem), orank), full_c = map_rank(smem_addr(full), orank);
    uint64_t* const my_empty = helper ? &empty_helper[o * kGroups] : empty_own;
    const uint64_t desc = desc_k_major_sw128(smem_addr(btile));
    const uint4* const words = reinterpret_cast<const uint4*>(btile) + tid % (T * 8);
    const __half2 m = __float2half2_rn(0.5f);
    uint32_t frag[4][4];
    float ch[RH];
#pragma unroll 1
    for (int c = first; c < kChunks; c += kP) {
      const int gi = c / kGroup, b = gi % kGroups, s = c % kSlots;
      wait_cluster(smem_addr(&my_empty[b]), ((gi / kGroups) & 1) ^ 1);
      if constexpr (MMA) {
        const uint4 w = words[0];
        decode_word(w.x ^ static_cast<uint32_t>(c), m, m, frag[0]);
        decode_word(w.y, m, m, frag[1]);
        decode_word(w.z, m, m, frag[2]);
        decode_word(w.w, m, m, frag[3]);
        wgmma_fence();
        Wgmma<T>::mma_first(ch, frag[0], desc);
#pragma unroll
        for (int j = 1; j < 4; ++j) Wgmma<T>::mma(ch, frag[j], desc_add(desc, 2 * j), true);
        wgmma_commit();
        wgmma_wait_all();
        fence_regs(ch);
      } else {
#pragma unroll
        for (int i = 0; i < RH; ++i) ch[i] = static_cast<float>(c + i);
      }
      if constexpr (PLAIN) {
        float4* const dst = reinterpret_cast<float4*>(smem) + s * (slot_bytes(T) / 16) + tid;
#pragma unroll
        for (int i4 = 0; i4 < RH / 4; ++i4) dst[i4 * 128] = make_float4(ch[4 * i4], ch[4 * i4 + 1], ch[4 * i4 + 2], ch[4 * i4 + 3]);
        mbar_arrive(&full[b]);
      } else {
        const uint32_t dst = slots_c + (s * (slot_bytes(T) / 16) + tid) * 16;
#pragma unroll
        for (int i4 = 0; i4 < RH / 4; ++i4)
          st_async4(dst + i4 * 128 * 16, ch[4 * i4], ch[4 * i4 + 1], ch[4 * i4 + 2], ch[4 * i4 + 3], full_c + 8 * b);
      }
    }
  }
  // No CTA leaves while another may still write its slots or arrive on its barriers.
  if constexpr (HS > 0) cluster_sync_all();
  if (!helper && wg == 0) out[blockIdx.x * 128 + tid] = keep;
#else
  (void)out;
#endif
}

struct Variant {
  int t, o, l, hs;
  bool mma, plain;
  void (*kernel)(float*);
};
template <int T>
void add_all(std::vector<Variant>& v) {
  // Owners alone (the in-CTA K-split's shape: three senders and the applier), owners with a helper
  // for two of them (one or two remote senders each), and remote senders only (the hand-over's pace).
  v.push_back({T, 1, 3, 0, false, true, dsmem_probe<T, 1, 3, 0, false, true>});
  v.push_back({T, 1, 3, 0, true, true, dsmem_probe<T, 1, 3, 0, true, true>});
  v.push_back({T, 1, 3, 0, false, false, dsmem_probe<T, 1, 3, 0, false>});
  v.push_back({T, 1, 3, 0, true, false, dsmem_probe<T, 1, 3, 0, true>});
  v.push_back({T, 2, 3, 1, true, false, dsmem_probe<T, 2, 3, 1, true>});
  v.push_back({T, 2, 3, 2, true, false, dsmem_probe<T, 2, 3, 2, true>});
  v.push_back({T, 2, 2, 1, true, false, dsmem_probe<T, 2, 2, 1, true>});
  v.push_back({T, 1, 0, 1, false, false, dsmem_probe<T, 1, 0, 1, false>});
  v.push_back({T, 1, 0, 1, true, false, dsmem_probe<T, 1, 0, 1, true>});
  v.push_back({T, 1, 0, 3, true, false, dsmem_probe<T, 1, 0, 3, true>});
  v.push_back({T, 2, 0, 1, false, false, dsmem_probe<T, 2, 0, 1, false>});
  v.push_back({T, 2, 0, 2, true, false, dsmem_probe<T, 2, 0, 2, true>});
}
// 64 and 128 tokens (the lone warpgroups of M = 33-128): the hand-over alone, and owners of one
// local sender with a helper.
template <int T>
void add_wide(std::vector<Variant>& v) {
  v.push_back({T, 1, 0, 1, false, false, dsmem_probe<T, 1, 0, 1, false>});
  v.push_back({T, 1, 0, 1, true, false, dsmem_probe<T, 1, 0, 1, true>});
  v.push_back({T, 2, 0, 1, true, false, dsmem_probe<T, 2, 0, 1, true>});
  v.push_back({T, 1, 1, 0, true, false, dsmem_probe<T, 1, 1, 0, true>});
  v.push_back({T, 2, 1, 1, true, false, dsmem_probe<T, 2, 1, 1, true>});
}
}  // namespace

int main(int argc, char** argv) {
  const char* probe = "sm90 dsmem probe";
  const std::string out = nvfp4::bench::probe_out_path(argc, argv);
  const nvfp4::bench::ProbeOnly only;
  cudaDeviceProp prop{};
  if (!nvfp4::bench::probe_require_hopper(probe, prop)) return 3;
  std::vector<Variant> vs;
  add_all<16>(vs);
  add_all<32>(vs);
  add_wide<64>(vs);
  add_wide<128>(vs);
  float* d_out = nullptr;
  nvfp4::bench::probe_check(cudaMalloc(&d_out, static_cast<size_t>(prop.multiProcessorCount) * 640 * sizeof(float)), probe, "cudaMalloc");
  FILE* js = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (js) std::fprintf(js, "{\"device\": \"%s\", \"sms\": %d, \"chunks_per_owner\": %d, \"rows\": [\n", prop.name, prop.multiProcessorCount, kChunks);
  std::printf("T | owners | local senders | helper senders per owner | chunk work | clusters | ns per chunk per owner | helper GB/s\n");
  bool first = true;
  for (const Variant& x : vs) {
    const std::string name = "t" + std::to_string(x.t) + "-o" + std::to_string(x.o) + "-l" + std::to_string(x.l) + "-h" +
                             std::to_string(x.hs) + (x.mma ? "-mma" : "-none") + (x.plain ? "-plain" : "");
    if (!only.wanted(name)) continue;
    const int cluster = x.hs > 0 ? x.o + 1 : 1;
    const int threads = 128 * std::max(1 + x.l, x.o * x.hs);
    const int smem = smem_bytes(x.t);
    nvfp4::bench::probe_check(cudaFuncSetAttribute(x.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), probe, "smem attribute");
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(cluster);
    int clusters = 0;
    nvfp4::bench::probe_check(cudaOccupancyMaxActiveClusters(&clusters, x.kernel, &cfg), probe, "cudaOccupancyMaxActiveClusters");
    if (clusters < 1) {
      std::printf("%s: no cluster of %d fits\n", name.c_str(), cluster);
      continue;
    }
    clusters = std::min(clusters, prop.multiProcessorCount / cluster);
    cfg.gridDim = dim3(clusters * cluster);
    const double ms = nvfp4::bench::probe_median_ms(2, 10, [&](int) { cudaLaunchKernelEx(&cfg, x.kernel, d_out); });
    if (ms < 0) {
      std::printf("%s: error: %s\n", name.c_str(), cudaGetErrorString(cudaGetLastError()));
      return 4;
    }
    const double ns = 1e6 * ms / kChunks;
    const double helper_gbs = x.hs > 0 ? (static_cast<double>(x.o) * kChunks * x.hs / (x.l + x.hs) * slot_bytes(x.t)) / (ms * 1e6) : 0.0;
    std::printf("%d | %d | %d | %d | %s%s | %d | %.1f | %.1f\n", x.t, x.o, x.l, x.hs, x.mma ? "mma" : "-", x.plain ? " (plain)" : "", clusters, ns,
                helper_gbs);
    if (js)
      std::fprintf(js,
                   "%s{\"name\": \"%s\", \"t\": %d, \"owners\": %d, \"local_senders\": %d, \"helper_senders\": %d, \"mma\": %s, \"plain\": %s, "
                   "\"clusters\": %d, \"ns_per_chunk_per_owner\": %.2f, \"helper_gb_s\": %.2f}",
                   first ? "" : ",\n", name.c_str(), x.t, x.o, x.l, x.hs, x.mma ? "true" : "false", x.plain ? "true" : "false", clusters, ns, helper_gbs);
    first = false;
  }
  if (js) {
    std::fprintf(js, "\n]}\n");
    std::fclose(js);
  }
  cudaFree(d_out);
  return 0;
}
