// What one Hopper SM's copies can stream when each stage is small, as in the sm90 kernel's K-split
// tiles (one 64-row tile per CTA, a 2608-byte prepacked weight block (2352 bytes until results v27) and a 2 KB A' box per k64
// chunk). The K-split's traces (results v12) show every role at ~250 ns per chunk, with the weight
// copy thread spending ~190 ns between reaching a stage and having issued its copy, and neither a
// deeper ring nor a second weight copy thread changed it. This probe isolates the copies: one CTA
// per SM streams `chunks` chunks through a ring of stages, its consumer warp only waits and
// releases. It varies what a stage is copied with:
//   - bulk: one cp.async.bulk per chunk and operand (the kernel's weight copy);
//   - tma:  the A' operand as a 2-D tensor box of 16 rows x 128 bytes, 128-byte swizzle (the kernel's);
//   - G:    chunks per stage, in one copy per operand where they are consecutive (a weight laid out
//           by row block, `block-major`; A' by chunk), else one copy per chunk (the prepack's
//           chunk-major layout); `pitch` kPad (2688) puts each block on its own 128-byte-aligned bytes;
//   - lsu:  a whole warp copies the operand with 16-byte cp.async (LDGSTS, through L1 rather than the
//           copy engine) and arrives on the stage's barrier when its copies land;
//   - none: the operand is not copied;
//   - read: no shared memory at all: four warps read the weight with 16-byte loads (the SM's ceiling).
// Prints `config | us | ns per chunk | weight GB/s | all bytes GB/s` per configuration. Results and
// what the kernel took from them: benchmarks/results/2026-12-04-h200-sm90-v13 (r1, r2).
// Usage: nvfp4_sm90_copy_probe [iters]; PROBE_ONLY=s1,s2 keeps configurations whose name contains one.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../src/cuda/common/timing.hpp"
#include "../src/cuda/sm90/sm90_layout.hpp"
#include "../src/cuda/sm90/sm90_ptx.cuh"
#include "hopper_probe.hpp"

namespace {
using namespace nvfp4::cuda::sm90;

#define CK(x) nvfp4::bench::probe_check((x), "sm90_copy_probe", #x)

constexpr int kWBlock = kWBlockBytes;  // a prepacked 64-row weight block of one k64 chunk
constexpr int kPad = (kWBlock + 127) / 128 * 128;  // `pitch`: each block on its own 128-byte-aligned bytes
static_assert(kPad >= kWBlock && kPad % 128 == 0, "a padded block holds a block and starts on a 128-byte line");
constexpr int kABox = 2048;    // A' of 16 tokens x 64 f16
constexpr int kAlign = 1024;
constexpr int kSmem = 200 * 1024;  // one CTA per SM whatever the ring

enum Mode { kNone = 0, kBulk = 1, kTma = 2, kLsu = 3 };

struct Args {
  const uint8_t* w;  // weight blocks, `pitch` bytes apart: chunk-major [chunks][ctas] (the prepack's) or block-major [ctas][chunks]
  const uint8_t* a;  // A' chunk-major [chunks][kABox] (bulk, lsu)
  uint32_t* sink;
  int chunks, g, stages, wmode, amode, block_major, pitch;
};

__device__ __forceinline__ void lsu_copy(uint8_t* dst, const uint8_t* src, int bytes, int lane) {
  for (int o = lane * 16; o < bytes; o += 32 * 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst + o)), "l"(src + o) : "memory");
}
__device__ __forceinline__ void lsu_arrive(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Warp 0: the weight's copies; warp 1: A''s; warp 2: the consumer.
__global__ void __launch_bounds__(96, 1) copy_probe(const __grid_constant__ Args p, const __grid_constant__ CUtensorMap map_a) {
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((kAlign - (smem_addr(smem_raw) & (kAlign - 1))) & (kAlign - 1));
  const int w_bytes = p.g * kWBlock, a_bytes = p.g * kABox;
  const int stage_bytes = (a_bytes + w_bytes + kAlign - 1) / kAlign * kAlign;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + p.stages * stage_bytes);
  uint64_t* empty = full + p.stages;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    const uint32_t arrivals = (p.wmode == kLsu ? 32 : p.wmode == kNone ? 0 : 1) + (p.amode == kLsu ? 32 : p.amode == kNone ? 0 : 1);
    for (int s = 0; s < p.stages; ++s) {
      mbar_init(&full[s], arrivals);
      mbar_init(&empty[s], 1);
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int steps = p.chunks / p.g;
  if (warp < 2) {
    const int mode = warp == 0 ? p.wmode : p.amode;
    if (mode == kNone || (mode != kLsu && lane != 0)) return;
    RingPos pos;
    for (int q = 0; q < steps; ++q, pos.advance(p.stages)) {
      const int s = pos.stage;
      mbar_wait(&empty[s], pos.phase ^ 1);
      uint8_t* st = smem + s * stage_bytes;
      if (warp == 0) {
        uint8_t* dst = st + a_bytes;
        if (p.block_major && p.pitch == kWBlock) {  // the stage's G chunks are consecutive bytes: one copy
          const uint8_t* src = p.w + (static_cast<int64_t>(blockIdx.x) * p.chunks + q * p.g) * kWBlock;
          if (mode == kLsu) {
            lsu_copy(dst, src, w_bytes, lane);
            lsu_arrive(&full[s]);
          } else {
            mbar_arrive_expect_tx(&full[s], w_bytes);
            bulk_g2s(dst, src, w_bytes, &full[s]);
          }
        } else {  // one copy per chunk
          if (mode != kLsu) mbar_arrive_expect_tx(&full[s], w_bytes);
          for (int j = 0; j < p.g; ++j) {
            const int c = q * p.g + j;
            const int64_t at = p.block_major ? static_cast<int64_t>(blockIdx.x) * p.chunks + c : static_cast<int64_t>(c) * gridDim.x + blockIdx.x;
            if (mode == kLsu)
              lsu_copy(dst + j * kWBlock, p.w + at * p.pitch, kWBlock, lane);
            else
              bulk_g2s(dst + j * kWBlock, p.w + at * p.pitch, kWBlock, &full[s]);
          }
          if (mode == kLsu) lsu_arrive(&full[s]);
        }
      } else {
        const uint8_t* src = p.a + static_cast<int64_t>(q) * a_bytes;
        if (mode == kLsu) {
          lsu_copy(st, src, a_bytes, lane);
          lsu_arrive(&full[s]);
        } else if (mode == kBulk) {
          mbar_arrive_expect_tx(&full[s], a_bytes);
          bulk_g2s(st, src, a_bytes, &full[s]);
        } else {  // one 16 x 64 box per chunk, as the kernel's A' tile
          mbar_arrive_expect_tx(&full[s], a_bytes);
          for (int j = 0; j < p.g; ++j) tma_load_2d(st + j * kABox, &map_a, (q * p.g + j) * 64, 0, &full[s]);
        }
      }
    }
    return;
  }
  if (lane != 0) return;
  uint32_t acc = 0;
  RingPos pos;
  for (int q = 0; q < steps; ++q, pos.advance(p.stages)) {
    const int s = pos.stage;
    mbar_wait(&full[s], pos.phase);
    acc ^= *reinterpret_cast<const uint32_t*>(smem + s * stage_bytes + a_bytes);
    mbar_arrive(&empty[s]);
  }
  if (acc == 0x9e3779b9u) p.sink[0] = acc;
}

// The SM's ceiling without shared memory: 256 threads read the CTA's weight blocks (chunk-major, as
// the kernel's) with 16-byte streaming loads, four in flight per thread.
__global__ void __launch_bounds__(256, 1) read_probe(const uint8_t* w, int chunks, uint32_t* sink) {
  uint32_t acc = 0;
  constexpr int kPieces = kWBlock / 16;  // 147 per block
  const int total = chunks * kPieces;
  int i = threadIdx.x;
  for (; i + 3 * 256 < total; i += 4 * 256) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int j = i + u * 256, c = j / kPieces, o = j % kPieces;
      v[u] = __ldcs(reinterpret_cast<const uint4*>(w + (static_cast<int64_t>(c) * gridDim.x + blockIdx.x) * kWBlock) + o);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < total; i += 256) {
    const int c = i / kPieces, o = i % kPieces;
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(w + (static_cast<int64_t>(c) * gridDim.x + blockIdx.x) * kWBlock) + o);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// A' as the kernel maps it: [16 tokens][K] f16, boxes of 16 rows x 64 elements, 128-byte swizzle.
CUtensorMap map_a_of(const uint8_t* a, int64_t k) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {cuuint64_t(k), 16};
  const cuuint64_t strides[1] = {cuuint64_t(k * 2)};
  const cuuint32_t box[2] = {64, 16};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = nvfp4::bench::probe_encoder("sm90_copy_probe")(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<uint8_t*>(a), dims, strides,
                                                       box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                                       CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "sm90_copy_probe: cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
  return m;
}

const char* mode_name(int m) { return m == kNone ? "none" : m == kBulk ? "bulk" : m == kTma ? "tma" : "lsu"; }

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 30;
  cudaDeviceProp prop{};
  if (!nvfp4::bench::probe_require_hopper("sm90_copy_probe", prop)) return 2;
  int sms = 0, l2 = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaFuncSetAttribute(copy_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const nvfp4::bench::ProbeOnly only;
  nvfp4::cuda::timing_mode() = nvfp4::cuda::Timing::kQueued;
  uint32_t* sink;
  CK(cudaMalloc(&sink, 64));
  std::printf("device SMs %d, L2 %d bytes; one CTA per SM; median of %d queued runs after 3 warm-ups, weights rotated over copies > 3x L2\n",
              sms, l2, iters);
  std::printf("config | us | ns per chunk | weight GB/s | all bytes GB/s\n");
  struct Shape {
    const char* name;
    int ctas, chunks;
  };
  // attn_out_proj and mlp_fc2 at M = 16: 84 tiles of 64 rows, 112 and 224 k64 chunks; and every SM busy.
  const Shape shapes[] = {{"out", 84, 112}, {"fc2", 84, 224}, {"all-SM", sms, 112}};
  for (const Shape& sh : shapes) {
    const int64_t wbytes = static_cast<int64_t>(sh.ctas) * sh.chunks * kWBlock, wmem = wbytes / kWBlock * kPad;
    const int copies = static_cast<int>(std::max<int64_t>(2, (3LL * l2 + wbytes - 1) / wbytes + 1));
    std::vector<uint8_t*> w(copies);
    for (int c = 0; c < copies; ++c) {
      CK(cudaMalloc(&w[c], wmem));
      CK(cudaMemset(w[c], 0x11 * (c + 1), wmem));
    }
    uint8_t* a;
    const int64_t abytes = static_cast<int64_t>(sh.chunks) * kABox;
    CK(cudaMalloc(&a, abytes));
    CK(cudaMemset(a, 0x22, abytes));
    const CUtensorMap map_a = map_a_of(a, static_cast<int64_t>(sh.chunks) * 64);
    auto report = [&](const std::string& name, double us, bool with_a) {
      const double all = static_cast<double>(wbytes) + (with_a ? static_cast<double>(sh.ctas) * abytes : 0.0);
      std::printf("%s %s | %.1f | %.0f | %.0f | %.0f\n", sh.name, name.c_str(), us, us * 1e3 / sh.chunks, wbytes / us * 1e-3,
                  all / us * 1e-3);
      std::fflush(stdout);
    };
    struct Run {
      int wmode, amode, g, stages, block_major, pitch;
    };
    const Run runs[] = {
        {kBulk, kTma, 1, 16, 0, kWBlock},  {kBulk, kBulk, 1, 16, 0, kWBlock}, {kBulk, kNone, 1, 16, 0, kWBlock},
        {kBulk, kNone, 1, 16, 0, kPad},    {kBulk, kNone, 1, 16, 1, kWBlock}, {kBulk, kTma, 1, 16, 1, kWBlock},
        {kBulk, kNone, 1, 32, 1, kWBlock}, {kBulk, kNone, 2, 16, 0, kWBlock}, {kBulk, kNone, 4, 8, 0, kWBlock},
        {kBulk, kNone, 2, 16, 1, kWBlock}, {kBulk, kTma, 2, 16, 1, kWBlock},  {kBulk, kBulk, 2, 16, 1, kWBlock},
        {kBulk, kTma, 4, 8, 1, kWBlock},   {kBulk, kBulk, 4, 8, 1, kWBlock},  {kBulk, kNone, 4, 8, 1, kWBlock},
        {kBulk, kBulk, 4, 16, 1, kWBlock}, {kBulk, kBulk, 8, 8, 1, kWBlock},
        {kLsu, kTma, 1, 16, 0, kWBlock},   {kLsu, kNone, 1, 16, 1, kWBlock},  {kLsu, kBulk, 4, 8, 1, kWBlock},
    };
    for (const Run& r : runs) {
      char nm[128];
      std::snprintf(nm, sizeof nm, "w=%s a=%s G=%d stages=%d %s pitch=%d", mode_name(r.wmode), mode_name(r.amode), r.g, r.stages,
                    r.block_major ? "block-major" : "chunk-major", r.pitch);
      if (!only.wanted(nm)) continue;
      const int stage_bytes = (r.g * (kWBlock + kABox) + kAlign - 1) / kAlign * kAlign;
      if (kAlign + r.stages * (stage_bytes + 16) > kSmem) continue;
      const nvfp4::Result<double> us = nvfp4::cuda::median_us(iters, 3, [&](int i) -> nvfp4::Status {
        Args p{w[i % copies], a, sink, sh.chunks, r.g, r.stages, r.wmode, r.amode, r.block_major, r.pitch};
        copy_probe<<<sh.ctas, 96, kSmem>>>(p, map_a);
        NVFP4_CUDA_LAUNCH_TRY("a probe run");
        return nvfp4::Status::ok();
      });
      if (!us.is_ok()) {
        std::fprintf(stderr, "sm90_copy_probe: %s\n", us.status().message().c_str());
        return 1;
      }
      report(nm, us.value(), r.amode != kNone);
    }
    if (only.wanted("read")) {
      const nvfp4::Result<double> us = nvfp4::cuda::median_us(iters, 3, [&](int i) -> nvfp4::Status {
        read_probe<<<sh.ctas, 256>>>(w[i % copies], sh.chunks, sink);
        NVFP4_CUDA_LAUNCH_TRY("a read run");
        return nvfp4::Status::ok();
      });
      if (!us.is_ok()) {
        std::fprintf(stderr, "sm90_copy_probe: %s\n", us.status().message().c_str());
        return 1;
      }
      report("read (16-byte loads, no shared memory)", us.value(), false);
    }
    for (uint8_t* x : w) CK(cudaFree(x));
    CK(cudaFree(a));
  }
  return 0;
}
