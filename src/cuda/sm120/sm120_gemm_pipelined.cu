// NVFP4 GEMM for SM120/SM121 with a shared-memory pipeline: the production data path.
//
// CTA tile 128 (M) x kTileN (N), kTileN 64 or 128 (the launcher picks 128 where the 128-column
// tiles still give every SM one: sm120p_tile_n below): at M <= 128 one CTA holds
// every row, so each weight byte crosses DRAM once. One producer thread streams k256 stages (four
// k64 chunks) into a ring of kStages buffers: per stage one TMA box of the tile's A rows, one of its
// W rows (128 bytes of each row, written with the TMA's 128-byte swizzle) and one bulk copy of the
// stage's scale blocks per operand, all counted in bytes on the stage's mbarrier (one CTA per
// cluster: no multicast). 128-byte box rows halve the TMA's per-row work against 64-byte ones; the
// data-path probe (bench/sm120_stream_probe.cu) measured what that and the tile width are worth.
// Eight consumer warps (a 4 x 2 grid of 32 x kTileN/2 warp tiles) read fragments with ldmatrix at
// the swizzled offsets, which keeps every ldmatrix phase conflict-free, and release each stage on a
// second mbarrier. Persistent: every CTA walks work items (tile, K slice) in a fixed order, so the
// producer and the consumers agree on the stage sequence without talking.
//
// Numerics are the §4 contracts exactly: each output's accumulator starts at +0 and takes one MMA
// per k64 chunk in increasing K over its slice (sequential K: the whole K), then the fused
// alpha-before-bf16 epilogue or, for split-K, an fp32 partial for launch_merge_splitk. Rows past M
// or N in a tile arrive as zeros (the TMA's out-of-bounds fill) and only reach outputs that are
// never stored (an MMA output row depends on its A row and scale row alone).
//
// Variants: native (sm_120a/sm_121a), emulated (the MMA replaced by its exact emulation: validates
// this data path on Hopper) and proxy (a register-only stand-in: times the data path on Hopper).
//
// Streaming A (native and emulated, kStream): A arrives as the bf16 activation x. Four producer
// warps (free: the CTA's warp count rounds to the one of the plain kernel, see Tile) quantize each
// stage's A slice (the tile's 128 rows x k256) into the stage's A and SF_A areas with the comfy-cuda
// recipe (stream_quantize_block16, the steps of sm120_gemm_blockscaled's fragment producer), byte
// for byte the image the TMA and the bulk copies would have written from quantize-then-GEMM's
// packed A (the 128-byte swizzle, one 128x4 scale block per chunk), then arrive on the stage's full
// barrier; one thread of them still issues the W box and SF_W copies. So every activation slice is
// quantized once per CTA per stage, in shared memory, and never written to global memory.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/tensor_map.hpp"
#include "mma_sm120.cuh"
#include "sm120_ptx.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kStreamProducerWarps = 4;              // streaming A: the warps that quantize (one thread also issues)
constexpr int kStreamProducers = kStreamProducerWarps * 32;
constexpr int kTileM = 128;
constexpr int kChunksPerStage = 4;
constexpr int kRowBytes = kChunksPerStage * 32;        // a row's K slice per stage = the TMA box's inner extent
constexpr int kSfBlock = 512;                          // one 128x4 swizzle block: 128 rows x one chunk
constexpr int kAlign = 1024;                           // the swizzle atoms' alignment (dynamic smem is rounded up to it)
// The 99 KB a GB10 block may use. -DNVFP4_SM120P_SMEM_LIMIT=n (a measurement build, for the proxy
// on Hopper, whose blocks may use 227 KB) sizes the ring for n bytes instead: how the data path
// scales with the stages in flight.
#ifndef NVFP4_SM120P_SMEM_LIMIT
#define NVFP4_SM120P_SMEM_LIMIT 101376
#endif
constexpr int kSmemLimit = NVFP4_SM120P_SMEM_LIMIT;
static_assert(kTileM == 128, "a tile's SF_A is exactly one 128-row swizzle block per chunk");
static_assert(kRowBytes == 128, "128-byte rows: the TMA's 128-byte swizzle, which the ldmatrix addresses below undo");
constexpr int kBlocksPerStageRow = kRowBytes / 8;  // 16-element blocks of a row per stage (8 bytes of codes each)
static_assert((kTileM * kBlocksPerStageRow) % kStreamProducers == 0, "whole rounds of the streaming producer");

// A kTileN-column tile: its consumer warps and their warp tiles, its stage layout (A box, W box,
// the stage's SF_A blocks, its SF_W blocks: the 128-row block around the tile, for 64-column tiles
// half of it the neighbour's) and its register budget. Eight consumer warps in a 4 x 2 grid at
// both widths: four 64 x 64 warp tiles for 128 columns (half the fragment reads from shared
// memory) measured no faster with two CTAs per SM and 25-40 % slower with one, a GB10's
// occupancy (docs/gb10-performance.md, "What bounds the proxy now"): the stage latency needs the warps.
template <int kTileN>
struct Tile {
  static_assert(kTileN == 64 || kTileN == 128, "64- or 128-column tiles");
  static constexpr int kWarpTileM = 32, kWarpTileN = kTileN / 2;
  static constexpr int kWarpsM = kTileM / kWarpTileM, kWarpsN = kTileN / kWarpTileN;
  static constexpr int kConsumerWarps = kWarpsM * kWarpsN;
  static constexpr int kMmaM = kWarpTileM / 16, kMmaN = kWarpTileN / 8;  // m16 and n8 MMAs per warp per chunk
  static constexpr int kThreads = (kConsumerWarps + 1) * 32;             // + one producer warp (one thread of it issues)
  static constexpr int kStreamThreads = (kConsumerWarps + kStreamProducerWarps) * 32;
  static constexpr int kOffW = kTileM * kRowBytes;
  static constexpr int kOffSfa = kOffW + kTileN * kRowBytes;
  static constexpr int kOffSfw = kOffSfa + kChunksPerStage * kSfBlock;
  static constexpr int kStageBytes = kOffSfw + kChunksPerStage * kSfBlock;
  static constexpr int kTmaBytes = (kTileM + kTileN) * kRowBytes;  // both boxes, rows past M or N zero-filled and counted
  static constexpr int kStages = (kSmemLimit - kAlign - 16 * 8) / kStageBytes;  // as many as fit the 99 KB
  static constexpr int kSmemBytes = kAlign + kStages * kStageBytes + 2 * kStages * 8;
  static constexpr int kOmmaPerChunkPerWarp = kMmaM * kMmaN;  // what tools/check-sass expects
  // Registers: the launch check counts a CTA's warps rounded up to a multiple of the SM's four
  // sub-partitions (cuda_occupancy.h, "Hardware check"): 9 warps cost what 12 do; a
  // budget from the thread count alone (227 for 288 threads) made the emulated variant (222
  // registers) unlaunchable. Each variant is compiled for the CTAs per SM it launches with (one:
  // native and emulated, a GB10's 99 KB holds one CTA's stages; two: the proxy, on Hopper's
  // 228 KB per SM). The streaming variant's producer warps fit in the same rounded count.
  static constexpr int kWarpsCounted = (kThreads / 32 + 3) / 4 * 4;
  template <int kCtasPerSm>
  static constexpr int kMaxRegs = std::min(248, 65536 / (kWarpsCounted * 32 * kCtasPerSm) / 8 * 8);
  static_assert(kWarpsM * kWarpTileM == kTileM && kWarpsN * kWarpTileN == kTileN, "the warp grid covers the tile");
  static_assert(kWarpTileN == 32 || kWarpTileN == 64, "SF_W words: one per n8 (32-wide), or paired (64-wide, below)");
  static_assert((kStreamThreads / 32 + 3) / 4 * 4 == kWarpsCounted, "the streaming producer warps are free under the register rule");
  static_assert(kOffW % kAlign == 0 && kOffSfa % kAlign == 0 && kStageBytes % kAlign == 0, "boxes on swizzle-atom boundaries");
  static_assert(kStages >= 2 && kSmemBytes <= kSmemLimit, "two stages or more in a GB10 block's 99 KB");
  static_assert(kOmmaPerChunkPerWarp == kTileN / 8, "tools/check-sass expects kTileN / 8 per k64 chunk");
};
static_assert(kSmemLimit != 101376 || (Tile<64>::kStages == 3 && Tile<128>::kStages == 2), "28 KB and 36 KB stages");
static_assert(Tile<64>::kMaxRegs<1> == 168 && Tile<64>::kMaxRegs<2> == 80 && Tile<128>::kMaxRegs<1> == 168 &&
                  Tile<128>::kMaxRegs<2> == 80,
              "register budgets of one and two CTAs per SM");

enum Mode { kNative = 0, kEmulated = 1, kProxy = 2 };

__device__ __forceinline__ int64_t imin64(int64_t a, int64_t b) { return a < b ? a : b; }

using namespace sm120;  // the shared-memory barrier and bulk-copy wrappers (sm120_ptx.cuh)
// Byte offset of the 16-byte piece `piece` of row `row` in a box the TMA wrote with its 128-byte
// swizzle: address bits 4-6 XOR bits 7-9, i.e. piece ^ (row & 7) for 128-byte rows. The eight rows
// one ldmatrix phase reads (eight consecutive rows, one piece) then land in eight distinct 16-byte
// bank groups (conflict-free).
__host__ __device__ constexpr uint32_t swizzled128(int row, int piece) {
  return static_cast<uint32_t>(row * 128 + ((piece ^ (row & 7)) << 4));
}
static_assert(swizzled128(3, 1) == 3 * 128 + 2 * 16 && swizzled128(9, 0) == 9 * 128 + 1 * 16, "128-byte swizzle");
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The work item sequence every warp of a CTA walks: (tile, K slice), M tiles fastest, so CTAs that
// run together share one weight tile through L2 when M > 128.
struct Work {
  int64_t m0, n0;
  int slice;
  int64_t q0, q1;
};
template <int kTileN>
__device__ __forceinline__ Work work_item(const GemmOperands& op, int64_t item, int64_t tiles_m, int64_t tiles) {
  Work w;
  const int64_t tile = item % tiles;
  w.slice = static_cast<int>(item / tiles);
  w.m0 = (tile % tiles_m) * kTileM;
  w.n0 = (tile / tiles_m) * kTileN;
  slice_chunks(op, w.slice, w.q0, w.q1);
  return w;
}

// The emulation is a call that updates its accumulators in place, not inlined: eight inlined
// copies per chunk need more registers than a 288-thread CTA has per thread and spill. So the
// emulated variant keeps accumulators and fragments in local memory, by design (it validates the
// data path on Hopper; tools/check-sass reports it), and the native variant is untouched.
__device__ __noinline__ void mma_emulated_acc(float* acc, uint4 a4, uint2 b2, uint32_t sfa, uint32_t sfb) {
  const uint32_t a[4] = {a4.x, a4.y, a4.z, a4.w}, b[2] = {b2.x, b2.y};
  const float c[4] = {acc[0], acc[1], acc[2], acc[3]};
  float d[4];
  mma_emulated(d, a, b, c, sfa, sfb);
  acc[0] = d[0]; acc[1] = d[1]; acc[2] = d[2]; acc[3] = d[3];
}

// acc <- MMA(a, b, acc) in the variant's way (the proxy's stand-in works per chunk, below).
template <int kMode>
__device__ __forceinline__ void mma(float (&acc)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], uint32_t sfa,
                                    uint32_t sfb) {
  if constexpr (kMode == kEmulated) {
    mma_emulated_acc(acc, make_uint4(a[0], a[1], a[2], a[3]), make_uint2(b[0], b[1]), sfa, sfb);
  } else {
    float d[4];
    mma_native(d, a, b, acc, sfa, sfb);
    acc[0] = d[0]; acc[1] = d[1]; acc[2] = d[2]; acc[3] = d[3];
  }
}

// CTAs per SM each variant is compiled for (the register budget above). The native variant runs
// on SM12x only, where the stages' shared memory admits one CTA per SM, and needs more than 80
// registers without spilling; the proxy runs on Hopper, whose 228 KB per SM hold two CTAs' stages.
template <int kMode>
constexpr int kCtasPerSm = kMode == kProxy ? 2 : 1;

// tma_a, tma_w: A [M][K64/2] and W [N][K64/2] as 2-D byte tensors, boxes of 128 bytes x 128 (A) or
// kTileN (W) rows, 128-byte swizzle, rows past M or N read as zeros.
// kStream: A is quantized here from op.x (tma_a is not read).
template <int kMode, int kTileN>
constexpr int kRegsOf = Tile<kTileN>::template kMaxRegs<kCtasPerSm<kMode>>;

template <int kMode, bool kStream, int kTileN>
__global__ void __maxnreg__((kRegsOf<kMode, kTileN>))
    sm120_gemm_pipelined(const __grid_constant__ GemmOperands op, const __grid_constant__ CUtensorMap tma_a,
                         const __grid_constant__ CUtensorMap tma_w) {
  using T = Tile<kTileN>;
  constexpr int kStages = T::kStages, kStageBytes = T::kStageBytes, kMmaN = T::kMmaN, kWarpTileN = T::kWarpTileN;
  constexpr int kOffW = T::kOffW, kOffSfa = T::kOffSfa, kOffSfw = T::kOffSfw;
  constexpr int kConsumerWarps = T::kConsumerWarps, kMmaM = T::kMmaM, kWarpTileM = T::kWarpTileM;
  extern __shared__ __align__(128) uint8_t smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t raw_base = smem_addr(smem_raw);
  const uint32_t base = (raw_base + kAlign - 1) & ~static_cast<uint32_t>(kAlign - 1);
  uint8_t* const smem = smem_raw + (base - raw_base);
  const uint32_t full0 = base + kStages * kStageBytes, empty0 = full0 + kStages * 8;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      // The producer's arrive (+ the copies' bytes); streaming: + one arrive per quantizing thread.
      mbar_init(full0 + 8 * s, kStream ? 1 + kStreamProducers : 1);
      mbar_init(empty0 + 8 * s, 32 * kConsumerWarps);  // one arrive per consumer thread
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  const int64_t cp = op.k64 / 16;
  const int64_t tiles_m = (op.m + kTileM - 1) / kTileM, tiles = tiles_m * ((op.n + kTileN - 1) / kTileN);
  const int64_t items = tiles * op.splits;

  if (warp >= kConsumerWarps) {
    // ---------------------------------------------------------------- producer: one thread (streaming: four warps)
    // Per stage two TMA boxes (the tile's A and W rows, 128 bytes each: the TMA engine gathers the
    // rows, no thread touches the data) and one bulk copy per operand's scale blocks. 196 bulk copies of 64
    // bytes per stage ran this data path at 2-3 % of the H200's copy bandwidth, 16-byte cp.async
    // from 128 threads at 27-32 % with the SM's load/store pipe the busiest unit (2026-12-01).
    // Streaming: all kStreamProducers threads quantize A (below), thread 0 of them issues W.
    const int pt = threadIdx.x - kConsumerWarps * 32;
    if (!kStream && pt != 0) return;
    float s_x = 0.0f, rcp_s = 0.0f;
    if constexpr (kStream) {  // the activation's dynamic scale, from the amax the launcher reduced
      s_x = dynamic_global_scale(*op.x_amax);
      rcp_s = rcp_approx_ftz(s_x);
      if (blockIdx.x == 0 && pt == 0 && op.s_x_out) *op.s_x_out = s_x;
    }
    uint32_t it = 0;  // stage sequence number, shared by construction with the consumers
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
      const Work w = work_item<kTileN>(op, item, tiles_m, tiles);
      const uint8_t* sfa_tile = kStream ? nullptr : op.sfa + (w.m0 / 128) * (cp / 4) * kSfBlock;
      const uint8_t* sfw_tile = op.sfw + (w.n0 / 128) * (cp / 4) * kSfBlock;
      for (int64_t q = w.q0; q < w.q1; q += kChunksPerStage, ++it) {
        const int s = static_cast<int>(it % kStages);
        const int nch = static_cast<int>(imin64(kChunksPerStage, w.q1 - q));
        if (it >= kStages) mbar_wait(empty0 + 8 * s, ((it / kStages) - 1) & 1);
        const uint32_t full = full0 + 8 * s, st = base + s * kStageBytes;
        if constexpr (kStream) {
          if (pt == 0) {
            // The W box (whole, as below) and SF_W's scale blocks, counted in bytes.
            mbar_arrive_expect_tx(full, static_cast<uint32_t>(kTileN * kRowBytes + nch * kSfBlock));
            tma_load_2d(st + kOffW, &tma_w, static_cast<int>(q * 32), static_cast<int>(w.n0), full);
            bulk_copy(st + kOffSfw, sfw_tile + q * kSfBlock, nch * kSfBlock, full);
          }
          // A: block b of tile row r is K q * 64 + 16 b .. + 15 (chunk b / 4 of the stage), its codes
          // the 8 bytes at half b & 1 of the row's swizzled 16-byte piece b / 2, its scale byte b & 3
          // of the row's word in chunk b / 4's 128x4 block. A warp takes 2 rows x 16 blocks: 512
          // contiguous bf16 bytes per row in, 128 contiguous (permuted) code bytes out. Rows past M
          // are zeros (their outputs are never stored); a stage of nch < 4 chunks leaves the rest unread.
          uint8_t* const sm = smem + s * kStageBytes;
#pragma unroll 1
          for (int idx = pt; idx < kTileM * kBlocksPerStageRow; idx += kStreamProducers) {
            const int r = idx / kBlocksPerStageRow, b = idx % kBlocksPerStageRow;
            if (b >= 4 * nch) continue;
            const int64_t row = w.m0 + r;
            uint8_t sf = 0;
            uint2 codes = make_uint2(0u, 0u);
            if (row < op.m) codes = stream_quantize_block16(op, row, q * 64 + 16 * b, s_x, rcp_s, sf);
            *reinterpret_cast<uint2*>(sm + swizzled128(r, b >> 1) + 8 * (b & 1)) = codes;
            sm[kOffSfa + (b >> 2) * kSfBlock + (r % 32) * 16 + (r / 32) * 4 + (b & 3)] = sf;
          }
          mbar_arrive(full);  // release: this thread's stores of the stage, for the consumers' acquire
          continue;
        }
        // A stage of fewer than four chunks (a slice's last) still moves whole boxes, and the tx
        // count is the boxes' full size: the other chunks' bytes (the next slice's, or zeros past
        // K64/2) are never read by the consumers.
        mbar_arrive_expect_tx(full, static_cast<uint32_t>(T::kTmaBytes + 2 * nch * kSfBlock));
        tma_load_2d(st, &tma_a, static_cast<int>(q * 32), static_cast<int>(w.m0), full);
        tma_load_2d(st + kOffW, &tma_w, static_cast<int>(q * 32), static_cast<int>(w.n0), full);
        // Whole swizzle blocks: SF_A of the tile's 128 rows, SF_W of the 128 rows around the tile;
        // a row block's chunks are consecutive 512-byte blocks, so one copy per operand per stage.
        bulk_copy(st + kOffSfa, sfa_tile + q * kSfBlock, nch * kSfBlock, full);
        bulk_copy(st + kOffSfw, sfw_tile + q * kSfBlock, nch * kSfBlock, full);
      }
    }
    return;
  }

  // ------------------------------------------------------------------ consumers
  const int g = lane >> 2, t = lane & 3;
  const int wm = warp % T::kWarpsM, wn = warp / T::kWarpsM;
  // Streaming: alpha = f32_rn(s_x * s_w) (§2.4), s_x from the amax as the producers derive it.
  const float alpha_s = kStream ? __fmul_rn(dynamic_global_scale(*op.x_amax), op.s_w) : 0.0f;
  // ldmatrix row addresses (byte offsets in a stage): lane l feeds row l & 7 of matrix l >> 3.
  // A: matrices (rows 0-7, K 0-31), (rows 8-15, K 0-31), (rows 0-7, K 32-63), (rows 8-15, K 32-63) = a0..a3.
  // W: matrices (n8 j, K 0-31), (n8 j, K 32-63), (n8 j+1, K 0-31), (n8 j+1, K 32-63) = b0, b1 of j and j+1.
  const int mi = lane >> 3, mr = lane & 7;
  // Offsets for chunk 0 of a stage (pieces 0-1 of each row); chunk c reads pieces 2c, 2c + 1, and
  // (2c + p) ^ x = (p ^ x) ^ 2c for p in {0, 1}, so offset(c) = offset(0) ^ (c << 5) (bits 5-6).
  uint32_t a_off[kMmaM], w_off[kMmaN / 2];
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) a_off[i] = swizzled128(wm * kWarpTileM + i * 16 + (mi & 1) * 8 + mr, mi >> 1);
#pragma unroll
  for (int j = 0; j < kMmaN / 2; ++j) w_off[j] = kOffW + swizzled128(wn * kWarpTileN + (2 * j + (mi >> 1)) * 8 + mr, mi & 1);
  // Scale words: SF_A from lanes t = 0 (row g) and t = 1 (row g + 8), SF_W from lanes t = 0 (column g).
  uint32_t sfa_off[kMmaM], sfw_off[kMmaN];
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
    const int r = wm * kWarpTileM + i * 16 + g + 8 * (t & 1);
    sfa_off[i] = kOffSfa + (r % 32) * 16 + (r / 32) * 4;
  }

  uint32_t it = 0;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const Work w = work_item<kTileN>(op, item, tiles_m, tiles);
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
      const int r = static_cast<int>(w.n0 % 128) + wn * kWarpTileN + j * 8 + g;
      sfw_off[j] = kOffSfw + (r % 32) * 16 + (r / 32) * 4;
    }
    // Warps (and m16 blocks) wholly past M or N skip their MMAs; they still release every stage.
    const bool warp_live = w.m0 + wm * kWarpTileM < op.m && w.n0 + wn * kWarpTileN < op.n;
    float acc[kMmaM][kMmaN][4];
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

    for (int64_t q = w.q0; q < w.q1; q += kChunksPerStage, ++it) {
      const int s = static_cast<int>(it % kStages);
      const int nch = static_cast<int>(imin64(kChunksPerStage, w.q1 - q));
      mbar_wait(full0 + 8 * s, (it / kStages) & 1);
      const uint32_t st = base + s * kStageBytes;
      if (warp_live) {
        // One chunk per iteration, in increasing K: tools/check-sass counts this loop's MMAs.
#pragma unroll 1
        for (int c = 0; c < nch; ++c) {
          uint32_t a[kMmaM][4], b[kMmaN][2], sfa[kMmaM], sfb[kMmaN];
#pragma unroll
          for (int i = 0; i < kMmaM; ++i) {
            ldmatrix_x4(a[i], st + (a_off[i] ^ (c << 5)));
            sfa[i] = *reinterpret_cast<const uint32_t*>(smem + s * kStageBytes + sfa_off[i] + c * kSfBlock);
          }
#pragma unroll
          for (int j = 0; j < kMmaN / 2; ++j) {
            uint32_t r4[4];
            ldmatrix_x4(r4, st + (w_off[j] ^ (c << 5)));
            b[2 * j][0] = r4[0];
            b[2 * j][1] = r4[1];
            b[2 * j + 1][0] = r4[2];
            b[2 * j + 1][1] = r4[3];
          }
          if constexpr (kWarpTileN == 64) {
            // Columns j and j + 4 of a 64-wide warp tile are rows 32 apart of one 128-row scale
            // block: adjacent words of its 16-byte row line (offset(j + 4) = offset(j) + 4), so one
            // 8-byte load carries both.
#pragma unroll
            for (int j = 0; j < kMmaN / 2; ++j) {
              const uint2 v = *reinterpret_cast<const uint2*>(smem + s * kStageBytes + sfw_off[j] + c * kSfBlock);
              sfb[j] = v.x;
              sfb[j + kMmaN / 2] = v.y;
            }
          } else {
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) sfb[j] = *reinterpret_cast<const uint32_t*>(smem + s * kStageBytes + sfw_off[j] + c * kSfBlock);
          }
          if constexpr (kMode == kEmulated) {
            // One call at a time over fragments kept in local memory: no register pressure.
#pragma unroll 1
            for (int ij = 0; ij < kMmaM * kMmaN; ++ij) {
              const int i = ij / kMmaN, j = ij % kMmaN;
              mma<kMode>(acc[i][j], a[i], b[j], sfa[i], sfb[j]);
            }
          } else if constexpr (kMode == kProxy) {
            mma_proxy_chunk(acc[0][0][0], a, b, sfa, sfb);
          } else {
#pragma unroll
            for (int i = 0; i < kMmaM; ++i)
#pragma unroll
              for (int j = 0; j < kMmaN; ++j) mma<kMode>(acc[i][j], a[i], b[j], sfa[i], sfb[j]);
          }
        }
      }
      // Every consumer thread arrives: an arrive releases only its own thread's reads of the stage
      // (PTX memory model); one instruction per warp either way.
      mbar_arrive(empty0 + 8 * s);
    }
    if (!warp_live) continue;
    // Fused epilogue, or the slice's fp32 partial (C/D map: c0,c1 = row g cols 2t,2t+1; c2,c3 = row g+8).
    // The two columns of a pair are stored together where both exist and the pair is aligned (N
    // even): per warp 8 rows x 8 contiguous bf16 or fp32 values instead of 2-byte pieces.
    const bool pairs = op.n % 2 == 0;
    // A device alpha (gemm_alpha) is read here, per tile, rather than held in a register through
    // the K loop (it cost the emulated variants spills). The proxy, a timing variant at 80
    // registers with no device-pointer entry point, never gets one (its check cost it a spill).
    const float alpha = kStream ? alpha_s : kMode == kProxy ? op.alpha : gemm_alpha(op.alpha_a, op.alpha_w, op.alpha);
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t row = w.m0 + wm * kWarpTileM + i * 16 + g + 8 * h;
          const int64_t col = w.n0 + wn * kWarpTileN + j * 8 + 2 * t;
          if (row >= op.m || col >= op.n) continue;
          const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
          const bool both = col + 1 < op.n;
          if (op.splits > 1) {
            float* dst = op.partials + (w.slice * op.m + row) * op.n + col;
            if (pairs && both) {
              *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
            } else {
              dst[0] = v0;
              if (both) dst[1] = v1;
            }
            continue;
          }
          const uint16_t o0 = epilogue_alpha_before_bf16(v0, alpha, op.bias ? bf16_to_f32(op.bias[col]) : -0.0f);
          const uint16_t o1 = both ? epilogue_alpha_before_bf16(v1, alpha, op.bias ? bf16_to_f32(op.bias[col + 1]) : -0.0f) : 0;
          const int64_t at = row * op.n + col;
          if (pairs && both) {
            if (op.raw) *reinterpret_cast<float2*>(op.raw + at) = make_float2(v0, v1);  // production callers skip it
            *reinterpret_cast<uint32_t*>(op.out + at) = static_cast<uint32_t>(o0) | (static_cast<uint32_t>(o1) << 16);
          } else {
            if (op.raw) op.raw[at] = v0;
            op.out[at] = o0;
            if (both) {
              if (op.raw) op.raw[at + 1] = v1;
              op.out[at + 1] = o1;
            }
          }
        }
  }
}

// A measurement setting: the environment variable `name`, which must read `a` or `b` if set and
// not empty; `otherwise` when it is not.
Result<int> env_choice(const char* name, int a, int b, int otherwise) {
  const char* e = std::getenv(name);
  if (!e || !*e) return otherwise;
  const std::string v = e;
  if (v == std::to_string(a)) return a;
  if (v == std::to_string(b)) return b;
  return invalid_argument(std::string(name) + " must be " + std::to_string(a) + " or " + std::to_string(b) + ", not '" + v + "'");
}

// [rows][pitch] bytes as a 2-D tensor, boxes of kRowBytes x box_rows with the 128-byte swizzle the
// consumers' ldmatrix offsets undo; rows and bytes past the tensor read as zeros.
Result<CUtensorMap> operand_map(const uint8_t* data, int64_t rows, int64_t pitch, int box_rows, const char* what) {
  // L2 sector promotion of the boxes' row reads: 128 bytes (a stage's row), or 256 (the next
  // stage's row too, fetched into L2 with this one). NVFP4_SM120P_L2_PROMOTION=128|256 picks one
  // for measurements; 128 otherwise.
  NVFP4_ASSIGN_OR_RETURN(const int promote, env_choice("NVFP4_SM120P_L2_PROMOTION", 128, 256, 128));
  const CUtensorMapL2promotion promotion = promote == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  return tensor_map_2d_sw128(CU_TENSOR_MAP_DATA_TYPE_UINT8, data, static_cast<uint64_t>(pitch), static_cast<uint64_t>(rows),
                             static_cast<uint64_t>(pitch), static_cast<uint32_t>(kRowBytes), static_cast<uint32_t>(box_rows), promotion,
                             "sm120p: ", what);
}

template <int kMode, bool kStream, int kTileN>
Status launch_mode(const GemmOperands& op, int sm_count, cudaStream_t stream, const char* name) {
  constexpr int threads = kStream ? Tile<kTileN>::kStreamThreads : Tile<kTileN>::kThreads;
  constexpr int kSmemBytes = Tile<kTileN>::kSmemBytes;
  auto kernel = sm120_gemm_pipelined<kMode, kStream, kTileN>;
  // Once per device and process: a host gap between a timed event and the launch would count as
  // kernel time in nvfp4 bench. The shared-memory opt-in is an attribute of the current device's
  // function, so a second GPU needs its own; a failure is returned, not remembered.
  int device = 0;
  NVFP4_CUDA_TRY(cudaGetDevice(&device));
  static std::mutex mu;
  static std::map<int, int> per_device;  // device -> CTAs per SM
  int per_sm = 0;
  {
    const std::lock_guard<std::mutex> lock(mu);
    auto it = per_device.find(device);
    if (it == per_device.end()) {
      NVFP4_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
      int n = 0;
      NVFP4_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, kSmemBytes));
      it = per_device.emplace(device, n).first;
    }
    per_sm = it->second;
  }
  // NVFP4_SM120P_CTAS_PER_SM caps the CTAs per SM below what fits (for measuring the data path at a
  // GB10's one CTA per SM on a GPU that holds more).
  int ctas_per_sm = per_sm;
  if (const char* e = std::getenv("NVFP4_SM120P_CTAS_PER_SM")) ctas_per_sm = std::min(per_sm, std::max(1, std::atoi(e)));
  if (per_sm < 1)
    return unsupported(std::string(name) + " (" + std::to_string(kTileN) + "-column tiles): this GPU cannot hold one CTA (" + std::to_string(kSmemBytes) +
                       " bytes of shared memory, " + std::to_string(threads) + " threads)");
  const int64_t items = ((op.m + kTileM - 1) / kTileM) * ((op.n + kTileN - 1) / kTileN) * op.splits;
  const int64_t grid = std::min<int64_t>(items, static_cast<int64_t>(sm_count) * ctas_per_sm);  // persistent
  // The maps name this call's buffers: encoded per launch (host only, about a microsecond).
  CUtensorMap tma_a{};  // streaming: A never comes from global memory
  if (!kStream) {
    NVFP4_ASSIGN_OR_RETURN(tma_a, operand_map(op.a, op.m, op.k64 / 2, kTileM, "A"));
  }
  NVFP4_ASSIGN_OR_RETURN(CUtensorMap tma_w, operand_map(op.w, op.n, op.k64 / 2, kTileN, "W"));
  kernel<<<static_cast<unsigned>(grid), threads, kSmemBytes, stream>>>(op, tma_a, tma_w);
  NVFP4_CUDA_LAUNCH_TRY(name);
  return Status::ok();
}

template <int kTileN>
Status launch_tile(const GemmOperands& op, Sm120pMode mode, int sm_count, cudaStream_t stream) {
  if (op.x) {  // the streaming A producer
    switch (mode) {
      case Sm120pMode::kNative:
        return launch_mode<kNative, true, kTileN>(op, sm_count, stream, "sm120_gemm_pipelined<native, stream>");
      case Sm120pMode::kEmulated:
        return launch_mode<kEmulated, true, kTileN>(op, sm_count, stream, "sm120_gemm_pipelined<emulated, stream>");
      case Sm120pMode::kProxy: return unsupported("the memory-path proxy reads a quantized A (no streaming A producer)");
    }
    return invalid_argument("unknown pipelined kernel mode");
  }
  switch (mode) {
    case Sm120pMode::kNative: return launch_mode<kNative, false, kTileN>(op, sm_count, stream, "sm120_gemm_pipelined<native>");
    case Sm120pMode::kEmulated:
      return launch_mode<kEmulated, false, kTileN>(op, sm_count, stream, "sm120_gemm_pipelined<emulated>");
    case Sm120pMode::kProxy:
      // The proxy (timing only) does not read a device alpha (see its epilogue).
      if (op.alpha_a) return invalid_argument("the memory-path proxy takes a host alpha, not device global scales");
      return launch_mode<kProxy, false, kTileN>(op, sm_count, stream, "sm120_gemm_pipelined<proxy>");
  }
  return invalid_argument("unknown pipelined kernel mode");
}

}  // namespace

Result<int> sm120p_tile_n(int64_t m, int64_t n, int splits, int sm_count) {
  // 128-column tiles where they still give every SM a work item: per weight byte they carry half
  // the activation bytes and none of the neighbour's SF_W. On the H200 the proxy measured them
  // 1.15x faster than 64-column tiles for fc1 and equal for qkv at M = 128 (the data-path probe
  // without fragment reads: 1.3x; docs/gb10-performance.md, "The memory-path proxy on the H200").
  // Below that (out and fc2 at M = 128: 42 tiles) 64-column tiles keep twice the CTAs.
  // NVFP4_SM120P_TILE_N=64|128 forces one: for measurements and for the tests of both widths.
  const int64_t items128 = ((m + kTileM - 1) / kTileM) * ((n + 127) / 128) * splits;
  return env_choice("NVFP4_SM120P_TILE_N", 64, 128, items128 >= sm_count ? 128 : 64);
}

Status launch_sm120p_gemm(const GemmOperands& op, Sm120pMode mode, int sm_count, cudaStream_t stream) {
  NVFP4_ASSIGN_OR_RETURN(const int tile_n, sm120p_tile_n(op.m, op.n, op.splits, sm_count));
  return tile_n == 128 ? launch_tile<128>(op, mode, sm_count, stream) : launch_tile<64>(op, mode, sm_count, stream);
}

}  // namespace nvfp4::cuda
