// What the SM120 kernel's data path can stream, measured without its consumers' fragment work:
// persistent CTAs, one producer thread per CTA filling a ring of stages with TMA boxes (the
// kernel's 2-D maps over the row-major ComfyUI arrays) or with one 1-D bulk copy per operand per
// stage (a tile-contiguous, prepacked layout), consumer warps that wait for each stage, optionally
// read it from shared memory `reads` times with 16-byte loads, and release it. What it answers
// (docs/gb10-performance.md, "What bounds the data path"): which of the box row width, the tile
// width, the activation boxes, the scale copies, the stage count and the CTAs per SM bound the
// weight stream at M = 128, against the device copy and a plain read of the same bytes measured
// in the same process.
//
// Prints `shape | config | us | weight GB/s | % of copy | % of read` per configuration.
// Environment: PROBE_TIMING=queued (runs enqueued back to back, as nvfp4 bench's default; else each
// run alone after a synchronize), PROBE_PITCH_PAD=B (the weight rows B bytes apart beyond their
// K/2 bytes: whether the row pitch of the TMA boxes' reads matters; 2-D boxes only),
// PROBE_ONLY=s1,s2 (only configurations whose name contains one of them).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../src/cuda/common/timing.hpp"
#include "hopper_probe.hpp"
#include "../src/cuda/sm120/sm120_ptx.cuh"

namespace {
using namespace nvfp4::cuda::sm120;  // the kernel's own barrier and copy wrappers: the probe moves data as it does

#define CK(x) nvfp4::bench::probe_check((x), "sm120_stream_probe", #x)

constexpr int kAlign = 1024;
constexpr int kSfBlock = 512;  // one 128x4 swizzle block of scales: 128 rows x one k64 chunk

struct Cfg {
  int tile_n;     // weight rows per CTA tile
  int tile_m;     // activation rows per stage (0: no activation operand)
  int row_bytes;  // K bytes of a row per stage: 64 (k128) or 128 (k256)
  int stages;
  int consumer_warps;
  int reads;      // times the consumers read each stage from shared memory (0: wait and release only)
  int bulk;       // 0: 2-D TMA boxes over row-major arrays; 1: one 1-D bulk copy per operand (tile-contiguous)
  int sf;         // 1: one 512-byte scale block per k64 chunk per operand, as the kernel copies them
  int ctas_per_sm;
  int stage_bytes() const {
    const int chunks = row_bytes / 32;
    const int sf_blocks = sf ? (tile_n + 127) / 128 + (tile_m ? 1 : 0) : 0;  // 128-row scale blocks per chunk
    return ((tile_m + tile_n) * row_bytes + sf_blocks * chunks * kSfBlock + kAlign - 1) / kAlign * kAlign;
  }
  int smem() const { return kAlign + stages * stage_bytes() + 2 * stages * 8; }
  std::string name() const {
    char b[160];
    std::snprintf(b, sizeof b, "%s n%d m%d row%d st%d w%d rd%d sf%d c%d", bulk ? "bulk" : "tma ", tile_n, tile_m, row_bytes,
                  stages, consumer_warps, reads, sf, ctas_per_sm);
    return b;
  }
};

struct Args {
  const uint8_t* w;    // [N][K/2], or tile-contiguous for bulk
  const uint8_t* a;    // [tile_m][K/2]
  const uint8_t* sfw;  // [N/128][K/64][512]
  const uint8_t* sfa;  // [K/64][512]
  uint32_t* sink;
  int64_t n, k2;       // rows, bytes per row
  int tile_n, tile_m, row_bytes, stages, stage_bytes, reads, bulk, sf, consumer_warps;
};


__global__ void stream_probe(const __grid_constant__ Args p, const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_w) {
  extern __shared__ __align__(128) uint8_t smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + kAlign - 1) & ~uint32_t(kAlign - 1);
  const uint8_t* smem = smem_raw + (base - raw);
  const uint32_t full0 = base + p.stages * p.stage_bytes, empty0 = full0 + 8 * p.stages;
  const int warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, 32 * p.consumer_warps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int64_t tiles = (p.n + p.tile_n - 1) / p.tile_n;
  const int steps = static_cast<int>(p.k2 / p.row_bytes);  // stages per tile (k2 a multiple of row_bytes here)
  const int chunks = p.row_bytes / 32;
  const int a_bytes = p.tile_m * p.row_bytes, w_bytes = p.tile_n * p.row_bytes;
  const int sf_bytes = p.sf ? chunks * kSfBlock : 0;  // per 128-row block of an operand
  const int sfw_blocks = (p.tile_n + 127) / 128;
  if (warp == p.consumer_warps) {
    if ((threadIdx.x & 31) != 0) return;
    uint32_t it = 0;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      for (int q = 0; q < steps; ++q, ++it) {
        const int s = static_cast<int>(it % p.stages);
        if (it >= static_cast<uint32_t>(p.stages)) mbar_wait(empty0 + 8 * s, ((it / p.stages) - 1) & 1);
        const uint32_t full = full0 + 8 * s, st = base + s * p.stage_bytes;
        mbar_arrive_expect_tx(full, a_bytes + w_bytes + sf_bytes * (sfw_blocks + (p.tile_m ? 1 : 0)));
        if (p.bulk) {
          if (a_bytes) bulk_copy(st, p.a + int64_t(q) * a_bytes, a_bytes, full);
          bulk_copy(st + a_bytes, p.w + (tile * steps + q) * int64_t(w_bytes), w_bytes, full);
        } else {
          if (a_bytes) tma_load_2d(st, &map_a, q * p.row_bytes, 0, full);
          tma_load_2d(st + a_bytes, &map_w, q * p.row_bytes, static_cast<int>(tile * p.tile_n), full);
        }
        if (sf_bytes) {
          const int64_t c0 = int64_t(q) * chunks;
          for (int b = 0; b < sfw_blocks; ++b)
            bulk_copy(st + a_bytes + w_bytes + b * sf_bytes, p.sfw + ((tile * p.tile_n / 128 + b) * (p.k2 / 32) + c0) * kSfBlock,
                 sf_bytes, full);
          if (a_bytes) bulk_copy(st + a_bytes + w_bytes + sfw_blocks * sf_bytes, p.sfa + c0 * kSfBlock, sf_bytes, full);
        }
      }
    }
    return;
  }
  uint32_t acc = 0;
  uint32_t it = 0;
  const int used = a_bytes + w_bytes + sf_bytes * (sfw_blocks + (p.tile_m ? 1 : 0));
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    for (int q = 0; q < steps; ++q, ++it) {
      const int s = static_cast<int>(it % p.stages);
      mbar_wait(full0 + 8 * s, (it / p.stages) & 1);
      const uint8_t* st = smem + s * p.stage_bytes;
      for (int r = 0; r < p.reads; ++r)
        for (int o = threadIdx.x * 16; o < used; o += 32 * p.consumer_warps * 16) {
          const uint4 v = *reinterpret_cast<const uint4*>(st + o);
          acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
      mbar_arrive(empty0 + 8 * s);
    }
  }
  if (acc == 0x9e3779b9u) p.sink[blockIdx.x] = acc;  // keeps the reads alive
}

// A plain read of the weight bytes: kIlp independent 16-byte loads per thread per step.
template <int kIlp>
__global__ void read_kernel(const uint4* w, int64_t n16, uint32_t* sink) {
  uint32_t acc = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (; i + (kIlp - 1) * stride < n16; i += kIlp * stride) {
    uint4 v[kIlp];
#pragma unroll
    for (int u = 0; u < kIlp; ++u) v[u] = __ldcs(w + i + u * stride);
#pragma unroll
    for (int u = 0; u < kIlp; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) {
    const uint4 v = __ldcs(w + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// PROBE_L2_PROMOTION=256: the boxes' row reads promote to 256-byte L2 fetches (default 128).
CUtensorMapL2promotion l2_promotion() {
  const char* e = std::getenv("PROBE_L2_PROMOTION");
  return e && std::string(e) == "256" ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
}
CUtensorMap map_of(const uint8_t* data, int64_t rows, int64_t width, int64_t pitch, int row_bytes, int box_rows) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {cuuint64_t(width), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(pitch)};
  const cuuint32_t box[2] = {cuuint32_t(row_bytes), cuuint32_t(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  static const nvfp4::bench::EncodeTiled encode = nvfp4::bench::probe_encoder("sm120_stream_probe");
  const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<uint8_t*>(data), dims, strides, box, elem,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                             l2_promotion(), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "sm120_stream_probe: cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  struct Shape {
    const char* name;
    int64_t n, k;
  };
  const Shape shapes[] = {{"qkv 21504x5376", 21504, 5376}, {"out 5376x7168", 5376, 7168}, {"fc1 28672x5376", 28672, 5376},
                          {"fc2 5376x14336", 5376, 14336}};
  uint32_t* sink;
  CK(cudaMalloc(&sink, 4096 * sizeof(uint32_t)));
  const char* te = std::getenv("PROBE_TIMING");
  const bool queued = te && std::string(te) == "queued";
  nvfp4::cuda::timing_mode() = queued ? nvfp4::cuda::Timing::kQueued : nvfp4::cuda::Timing::kSync;
  const char* pe = std::getenv("PROBE_PITCH_PAD");
  const int64_t pitch_pad = pe ? std::atoll(pe) : 0;
  if (pitch_pad < 0 || pitch_pad % 16) {
    std::fprintf(stderr, "sm120_stream_probe: PROBE_PITCH_PAD must be a multiple of 16 bytes, >= 0\n");
    return 2;
  }
  const nvfp4::bench::ProbeOnly only;
  std::printf("device SMs %d, L2 %d bytes; median of %d after 3 warm-ups (%s), weights rotated over copies > 3x L2; L2 promotion %s bytes; "
              "weight row pitch K/2 + %lld bytes\n",
              sms, l2, iters, queued ? "runs enqueued back to back" : "each run alone after a synchronize",
              l2_promotion() == CU_TENSOR_MAP_L2_PROMOTION_L2_256B ? "256" : "128", static_cast<long long>(pitch_pad));
  for (const Shape& sh : shapes) {
    const int64_t k2 = sh.k / 2, wbytes = sh.n * k2, pitch = k2 + pitch_pad, wmem = sh.n * pitch;
    const int64_t sfw_bytes = (sh.n + 127) / 128 * (sh.k / 64) * kSfBlock;
    const int copies = static_cast<int>(std::max<int64_t>(2, (3LL * l2 + wbytes - 1) / wbytes + 1));
    std::vector<uint8_t*> w(copies), sfw(copies), dst(copies);
    for (int c = 0; c < copies; ++c) {
      CK(cudaMalloc(&w[c], wmem));
      CK(cudaMemset(w[c], 0x11 * (c + 1), wmem));
      CK(cudaMalloc(&sfw[c], sfw_bytes));
      CK(cudaMemset(sfw[c], 0x38, sfw_bytes));
      CK(cudaMalloc(&dst[c], wbytes));
    }
    uint8_t *a, *sfa;
    CK(cudaMalloc(&a, 256 * k2));
    CK(cudaMemset(a, 0x22, 256 * k2));
    CK(cudaMalloc(&sfa, (sh.k / 64) * kSfBlock));
    CK(cudaMemset(sfa, 0x38, (sh.k / 64) * kSfBlock));
    // Median of `iters` runs after 3 warm-ups, timed as nvfp4 bench times (cuda::median_us).
    auto time = [&](auto&& launch) {
      const nvfp4::Result<double> us = nvfp4::cuda::median_us(iters, 3, [&](int i) -> nvfp4::Status {
        launch(i % copies);
        NVFP4_CUDA_LAUNCH_TRY("a probe run");
        return nvfp4::Status::ok();
      });
      if (!us.is_ok()) {
        std::fprintf(stderr, "sm120_stream_probe: %s\n", us.status().message().c_str());
        std::exit(1);
      }
      return static_cast<float>(us.value());
    };
    const float copy_us = time([&](int c) { CK(cudaMemcpyAsync(dst[c], w[c], wbytes, cudaMemcpyDeviceToDevice)); });
    const double copy_gbs = 2.0 * wbytes / copy_us * 1e-3;
    // The best of a few plain reads (loads in flight per thread x blocks per SM).
    float read_us = 1e30f;
    for (int blocks : {4, 8, 16}) {
      read_us = std::min(read_us, time([&](int c) {
        read_kernel<1><<<sms * blocks, 512>>>(reinterpret_cast<const uint4*>(w[c]), wbytes / 16, sink);
      }));
      read_us = std::min(read_us, time([&](int c) {
        read_kernel<4><<<sms * blocks, 256>>>(reinterpret_cast<const uint4*>(w[c]), wbytes / 16, sink);
      }));
    }
    const double read_gbs = double(wbytes) / read_us * 1e-3;
    std::printf("%-16s | device copy %8.1f us %7.0f GB/s (read+write) | best plain read %8.1f us %7.0f GB/s = %.1f %% of copy\n", sh.name, copy_us,
                copy_gbs, read_us, read_gbs, 100.0 * read_gbs / copy_gbs);
    std::vector<Cfg> cfgs;
    for (int row : {64, 128})
      for (int tn : {32, 64, 128, 256})
        for (int tm : {0, 128})
          for (int bk : {0, 1})
            for (int sf : {0, 1})
              for (int rd : {0, 2})
                for (int cps : {1, 2}) {
                  if (bk && tn == 32) continue;
                  Cfg c{tn, tm, row, 0, 8, rd, bk, sf, cps};
                  // as many stages as fit in a GB10 block's 99 KB (smem(): alignment + stages and their two barriers)
                  c.stages = (101376 - kAlign) / (c.stage_bytes() + 16);
                  if (c.stages < 2) continue;
                  cfgs.push_back(c);
                }
    for (const Cfg& c : cfgs) {
      Args p{};
      p.n = sh.n;
      p.k2 = k2;
      p.tile_n = c.tile_n;
      p.tile_m = c.tile_m;
      p.row_bytes = c.row_bytes;
      p.stages = c.stages;
      p.stage_bytes = c.stage_bytes();
      p.reads = c.reads;
      p.bulk = c.bulk;
      p.sf = c.sf;
      p.consumer_warps = c.consumer_warps;
      p.a = a;
      p.sfa = sfa;
      p.sink = sink;
      if (c.bulk && (sh.n % c.tile_n || pitch_pad)) continue;
      if (!only.wanted(c.name()))
        continue;
      const int threads = 32 * (c.consumer_warps + 1);
      CK(cudaFuncSetAttribute(stream_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, c.smem()));
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_probe, threads, c.smem()));
      const int cps = std::min(per_sm, c.ctas_per_sm);
      if (cps < c.ctas_per_sm) continue;
      const int64_t tiles = (sh.n + c.tile_n - 1) / c.tile_n;
      const int grid = static_cast<int>(std::min<int64_t>(tiles, int64_t(sms) * cps));
      std::vector<CUtensorMap> mw(copies);
      for (int i = 0; i < copies; ++i) mw[i] = map_of(w[i], sh.n, k2, pitch, c.row_bytes, c.tile_n);
      const CUtensorMap ma = map_of(a, 256, k2, k2, c.row_bytes, c.tile_m ? c.tile_m : 8);
      const float us = time([&](int i) {
        Args q = p;
        q.w = w[i];
        q.sfw = sfw[i];
        stream_probe<<<grid, threads, c.smem()>>>(q, ma, mw[i]);
      });
      const double gbs = double(wbytes) / us * 1e-3;
      std::printf("%-16s | %-44s | grid %4d | %8.1f us | %7.0f GB/s | %5.1f %% of copy | %5.1f %% of read\n", sh.name,
                  c.name().c_str(), grid, us, gbs, 100.0 * gbs / copy_gbs, 100.0 * gbs / read_gbs);
      std::fflush(stdout);
    }
    for (int c = 0; c < copies; ++c) {
      CK(cudaFree(w[c]));
      CK(cudaFree(sfw[c]));
      CK(cudaFree(dst[c]));
    }
    CK(cudaFree(a));
    CK(cudaFree(sfa));
  }
  return 0;
}
