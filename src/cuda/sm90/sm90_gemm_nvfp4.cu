// The exact NVFP4 linear on Hopper (sm_90a): GB10's bits (the §3 model under the sequential
// contract) from bf16-class tensor cores. docs/hopper-exact-path.md gives the argument; in short,
// per k64 chunk and consumer warpgroup (64 weight rows x BM tokens):
//   - the weight codes are decoded in registers straight into the wgmma A fragment: five integer
//     instructions put eight codes into fp16 high bytes (value e2m1 * 2^-14, sm90_layout.hpp), a
//     PRMT spreads them into f16x2 registers, one HMUL2 by s_w * 2^7 scales them: e2m1 * s_w * 2^-7,
//     exact. The activation A' (e2m1 * s_a, fp16, from the pre-pass) comes by TMA into shared
//     memory as the B operand: D^T[n][m] = W'[n][k] A'[m][k], so the accumulators hold the §3 values
//     times 2^-7 (kAccShift; exact, fp32 has the range) and the epilogue multiplies by 2^7;
//   - a zero-initialised chain of four m64nBNk16 wgmmas gives the chunk sum CH (BN = BM / NH
//     tokens; NH = 1: the chunk's sums are added one chunk late, under the next chunk's MMAs);
//   - the tile test (src/model/hopper_exact.hpp), from a record of the weight block and one of the
//     token block, decides for the whole tile whether acc = add.rz(acc, CH) is the §3 step; it
//     costs a few instructions per thread and passes on almost every chunk of real activations.
//     Where it fails, the thread tests its own tokens and rows (thread-group records), then each
//     element (per-token records), and evaluates an element that fails by the §3 model
//     (mma_combine) from the exact fp32 block sums of the same operands (the stage's, or for the
//     K-split applier the same bytes in global memory).
// CTA: warpgroup 0 produces (one to three threads, or on K-split stages of two chunks two lanes of
// each copy warp, issue TMA / bulk copies into a ring of stages; the lanes of a second warp run each
// consumer warpgroup's tile test per stage); RW x TW consumer warpgroups each own 64 weight rows x BM
// tokens; persistent over (token tile, row tile).
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/numerics.cuh"
#include "../common/tensor_map.hpp"
#include "../../model/hopper_exact.hpp"
#include "sm90_decode.cuh"
#include "sm90_layout.hpp"
#include "sm90_ptx.cuh"
#include "sm90_wgmma.cuh"

namespace nvfp4::cuda {

namespace {
using namespace sm90;

constexpr int kSmemAlign = 1024;  // the 128-byte swizzle pattern repeats every 1024 bytes
constexpr int kMaxStages = 16;    // 48 measured no faster at M = 16 (2026-12-02)
// The ring's stage cap: the configuration's (Cfg::kStageCap), or NVFP4_SM90_MAX_STAGES (2..64) for
// tuning runs.
int max_stages(int cap) {
  static const int env = [] {
    const char* e = std::getenv("NVFP4_SM90_MAX_STAGES");
    const int v = e ? std::atoi(e) : 0;
    return v >= 2 && v <= 64 ? v : 0;
  }();
  return env ? env : cap;
}
constexpr int kRasterGroup = 8;   // token tiles swept together over the row tiles (L2 reuse at large M)
// A consumer warpgroup releases a stage or a slot by an arrive of every thread: an arrive releases
// its own thread's accesses (and racecheck follows it). One arrive per warp after __syncwarp, or
// one per warpgroup after a named barrier, were measured no faster (2026-12-02, H200; for the
// K-split's stage and slot barriers again in results v12 r2, where racecheck also reported the
// other lanes' accesses as hazards).
constexpr int kArrivalsPerWarpgroup = 128;
// Copy threads per CTA (Cfg::kCopyThreads), each in its own warp of the producer warpgroup: one
// issues the weight blocks, one the A' box, one the token-block records (with one, a single thread
// issues all three). A thread spends ~190 ns per stage on its barrier wait and one copy and ~100 ns
// on each further copy (traces, results v11), so one thread for all three issued a stage per
// ~320 ns at M = 16: one of the bounds of the K-split tiles. Three were 1-2 % faster at M = 4096
// (128x2x1x1) and 0-2 % slower on 64x1x2x1 and 128x3x1x2 at M = 128 (results v11 r3, r7, r8), so
// the one-chain 128-token tiles take three, the K-split two (its stages carry no records: its
// verdict lanes read them from global memory, results v12). The tiles of one consumer warpgroup
// (a lone warpgroup per SM, whose producer has the SM's issue slots to itself) take three as well:
// out and fc2 at M = 40-64 (48x1x1x1, 64x1x1x1) 2.3-3.9 % faster, at M = 80-96 (96x1x1x1) 0.5-1.2 %,
// while the tiles of three and four warpgroups at 16-64 tokens were within +-0.6 % (results v44
// r1, r2, an H100). The rest take one.
// -DNVFP4_SM90_COPY_THREADS=1 builds one everywhere (a measurement build).
#ifndef NVFP4_SM90_COPY_THREADS
#define NVFP4_SM90_COPY_THREADS 3
#endif
static_assert(NVFP4_SM90_COPY_THREADS == 1 || NVFP4_SM90_COPY_THREADS == 3, "one copy thread, or one per kind of copy");
// The one-chain loop's early ready wait (lone warpgroups of at least this many tokens) and early
// stage release (tiles of at most this many tokens, and wherever the ready wait is early); the
// defaults are the measured picks (see kEarlyReady in the kernel). Measurement builds may move them.
#ifndef NVFP4_SM90_EARLY_READY_BM
#define NVFP4_SM90_EARLY_READY_BM 96
#endif
#ifndef NVFP4_SM90_EARLY_RELEASE_BM
#define NVFP4_SM90_EARLY_RELEASE_BM 32
#endif
// K-split stages hold several consecutive chunks of the tile (Cfg::CPS): one barrier round trip and
// one wait per CPS chunks for the chunk-sum warpgroup that takes the stage. With one chunk per
// stage the copy thread issued a stage per ~250 ns and every role kept that pace (traces, results
// v12); alone, the copies ran at ~190-230 ns per one-chunk stage and ~150 ns per chunk with four
// chunks a stage (bench/sm90_copy_probe.cu, results v13 r1-r2). Four chunks a stage at 16 tokens
// made attn_out_proj and mlp_fc2 12-14 % faster, two at 32 tokens 9-10 % (results v13 r4, r6). By
// tile height, as the slots leave shared memory: 4 at 16 tokens, 2 at 32, 1 above (64-token
// K-split tiles, which the launcher never picks, keep one chunk a stage and the per-stage loop: about
// a fifth slower than before, see v1 in results v13 r4). -DNVFP4_SM90_KS_STAGE_CHUNKS=n forces n
// (a measurement build; configurations with KS * n above two slot groups are refused, see
// Cfg::kSlotWaitsSafe).
#ifndef NVFP4_SM90_KS_STAGE_CHUNKS
#define NVFP4_SM90_KS_STAGE_CHUNKS 0
#endif
// Who issues a K-split stage's copies (Cfg::kStageWarps): one warp per kind of copy (the weight's,
// A''s), each lane one chunk's weight copy, lane 0 the stage's A' box; or, for two-chunk stages (32
// tokens), two warps that take whole stages in turn, each issuing a stage's weight copies and A'
// box from its lanes. At 32 tokens the weight warp had taken ~290 ns from reaching a stage to
// having issued its copies, a stage every ~380 ns, the pace of every role (traces of results v36
// r6); by stages in turn out and fc2 at M = 32 ran 1.7-2.3 % faster, and at 8-16 tokens
// (four-chunk stages) 2-4 % slower, with two or three warps (results v37 r3, an H100; with the
// 3-D A' box still 2.4-4 % slower there, v38 r3). -DNVFP4_SM90_KS_STAGE_WARPS=w forces w warps (0:
// by kind; 1-3: warps 0, 2, 3 in turn) for every multi-chunk K-split stage (a measurement build).
#ifndef NVFP4_SM90_KS_STAGE_WARPS
#define NVFP4_SM90_KS_STAGE_WARPS -1
#endif
static_assert(NVFP4_SM90_KS_STAGE_WARPS >= -1 && NVFP4_SM90_KS_STAGE_WARPS <= 3, "warps 0, 2 and 3 of the producer are free for copies");
// A multi-chunk K-split stage's A' tiles go as one 3-D box: at 16 tokens the A' warp then issues
// one copy a stage where it issued four (the ring's round trip paced the 16-token K-split: results
// v37 r5's count); out and fc2 at M = 8-16 1.4-2.9 % faster, M = 32 within +-0.5 % (results v38
// r1, r2, an H100). -DNVFP4_SM90_KS_A3D=0 keeps one 2-D box per chunk (a measurement build).
#ifndef NVFP4_SM90_KS_A3D
#define NVFP4_SM90_KS_A3D 1
#endif
// The weight blocks' bulk copies carry the L2 evict-first policy: the launches ran 0.6-3.8 %
// faster with it at M = 16 (fc2 3.2-3.8 %), 0-2.8 % at M = 32 (fc2 2.8, qkv 2.0), -1.8 to +0.8 % at
// M = 64-128 and -0.3 to +0.6 % at M = 256-4096 (results v46 r1, r2, an H100; at large M the
// raster groups' concurrent readers of a weight block still find it in L2). Why the small launches
// gain was not traced; their A' tiles and records are what the weight stream no longer pushes out
// of L2 (a trip's thread-group test 2.0 -> 1.7 us, v46 r1). A' copies with the evict-last policy
// on top were no better (`a-evict-last-not-kept.diff` there).
// -DNVFP4_SM90_WEIGHT_EVICT_FIRST=0 copies without a policy (a measurement build).
#ifndef NVFP4_SM90_WEIGHT_EVICT_FIRST
#define NVFP4_SM90_WEIGHT_EVICT_FIRST 1
#endif
#if defined(NVFP4_SM90_NO_COPY) && NVFP4_SM90_KS_STAGE_WARPS > 0
#error "NVFP4_SM90_NO_COPY measures the copy warps by kind only"
#endif

// From here to the kernel: device-side helpers and the configuration's constants. nvcc's host
// pass, and its sm_120a / sm_121a passes (where the kernel is a trap), see them as never referenced
// (warning 177, once per member and configuration: ~230 lines per build); the sm_90a pass uses them.
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
template <int BM_, int RW_, int TW_, int NH_, int KS_ = 1>
struct Cfg {
  static constexpr int BM = BM_, RW = RW_, TW = TW_, NH = NH_, KS = KS_;
  static constexpr int T = RW * TW;                 // tiles per CTA: one verdict per stage each
  // Consumer warpgroups: one per tile; with KS > 1 (one tile), KS chunk-sum warpgroups and the
  // warpgroup that applies their sums (the "applier", warpgroup 1).
  static constexpr int P = KS == 1 ? T : KS + 1;
  static constexpr int kThreads = 128 * (P + 1);
  static constexpr int BN = BM / NH;                // tokens of one MMA chain (wgmma N)
  static constexpr int R = BM / 2;                  // accumulator registers per thread
  static constexpr int RH = BN / 2;                 // chunk-sum registers per thread (one chain)
  static constexpr int CPS = KS == 1 ? 1
                             : (NVFP4_SM90_KS_STAGE_CHUNKS > 0 ? NVFP4_SM90_KS_STAGE_CHUNKS : (BM <= 16 ? 4 : (BM <= 32 ? 2 : 1)));
  // setmaxnreg: the producer warpgroup (a copy thread and the verdict warp) gives its registers to
  // the consumers (64K per SM); with one consumer warpgroup (256 threads) every thread has 255 anyway.
  // setmaxnreg.inc only takes what setmaxnreg.dec gave back to the CTA's pool: the kernel starts
  // with the launch bound's registers per thread (kEntryRegs), and asking for more than the
  // producer released blocks forever (seen: a hang with four consumer warpgroups at 112).
  // With KS > 1 a stage carries no records (the verdict lanes read them from global memory): two
  // copy threads, the weight's and A''s.
  static constexpr int kCopyThreads = NVFP4_SM90_COPY_THREADS == 1 ? 1 : (KS > 1 ? 2 : ((BM >= 128 || T == 1) && NH == 1 ? 3 : 1));
  // K-split stages of several chunks: lane k of the weight warp and of the A' warp issues the
  // stage's copy k (lane 0 the barrier work). Two chunks a stage (32 tokens): out and fc2 at M = 32
  // 9-10 % faster than one thread issuing both (results v21 r8). Four (16 tokens): no faster while
  // the verdict lanes paced the K-split (fc2 +0.5 %, v21), 4.5-6 % faster on 16x1x1x1x2 once they
  // did not (results v36 r5: one thread took ~540 ns from reaching a stage to having issued its
  // four). Stage warps and the 3-D A' box (below) build on these lanes.
  static constexpr bool kLaneCopies = KS > 1 && CPS >= 2 && kCopyThreads == 2;
  // Warps that take whole K-split stages in turn (above), 0: a warp per kind of copy. Stage g is
  // warp g mod kStageWarps's, which waits for its slot's previous round by parity; the launcher
  // makes the stages a multiple of kStageWarps, so each slot is one warp's and that warp's own order
  // keeps its wait from passing on an older round (as for the chunk-sum warpgroups, launch_cfg).
  static constexpr int kStageWarps =
      kLaneCopies ? (NVFP4_SM90_KS_STAGE_WARPS >= 0 ? NVFP4_SM90_KS_STAGE_WARPS : (CPS == 2 ? 2 : 0)) : 0;
  // A multi-chunk K-split stage's A' tiles [CPS][BM][64] as one 3-D box of the A' operand seen as
  // [chunk][token][64] (tensor_map_planes_sw128), instead of one 2-D box per chunk.
  static constexpr bool kA3d = kLaneCopies && NVFP4_SM90_KS_A3D != 0;
  // Arrivals that complete a stage's full barrier: one per copy thread with its bytes, or the stage's warp's.
  static constexpr int kFullArrivals = kStageWarps > 0 ? 1 : kCopyThreads;
  static constexpr int kEntryRegs = (65536 / kThreads > 255 ? 255 : 65536 / kThreads) / 8 * 8;
  // Three one-chain warpgroups of 96 tokens need 160 registers each to keep their loop out of local
  // memory but one loop-invariant address (results v35 r1), more than the 152 of the other
  // three-warpgroup tiles, so their producer keeps 24 instead of 40 (its copy and verdict warps fit).
  static constexpr bool kThree96 = KS == 1 && BM == 96 && NH == 1 && P == 3;
  static constexpr int kProducerRegs = KS == 1 ? (kThree96 ? 24 : 40) : 72;
  // With KS > 1 the chunk-sum warpgroups keep the launch bound's share (a small tile's chain fits
  // it) and the applier takes what the producer gives back: its loop keeps two chunks' verdicts and
  // sums besides the accumulators, and the inlined fallback around it spilled that loop state at the
  // launch bound's 128 registers (KS = 2).
  static constexpr bool kRealloc = P > 1;
  static constexpr int kConsumerRegs =
      !kRealloc ? kEntryRegs
                : (KS > 1 ? (2 * kEntryRegs - kProducerRegs > 248 ? 248 : 2 * kEntryRegs - kProducerRegs) / 8 * 8
                          : (P <= 2 ? 232 : (P == 3 ? (kThree96 ? 160 : 152) : 104)));
  // Arrivals that release a stage: every thread of every consumer warpgroup that reads it. With
  // KS > 1 that is the chunk's chunk-sum warpgroup alone: the verdict lanes read the tile records
  // from global memory and the applier's fallback the chunk's operands, so the ring runs ahead of
  // both by the slots (a stage held until its verdict lane's round began was what paced the
  // K-split at ~290 ns per chunk, results v11 r6).
  static constexpr int kEmptyArrivals = KS == 1 ? kArrivalsPerWarpgroup * P : kArrivalsPerWarpgroup;
  // Ring stages at most (shared memory may allow fewer). The tiles of up to 64 tokens and the
  // two-chain ones run faster with six stages than with the 9-16 that fit (results v22 r4 swept 4,
  // 6, 8, 12, 16; r5, in one call with the previous binary: qkv at M = 16 / 32 / 64 / 128 43.5 /
  // 46.9 / 59.2 / 91.6 -> 42.3-42.5 / 45.6-45.7 / 57.2-57.3 / 88.0 us, fc1 at M = 16 51.6-51.9 ->
  // 50.0-50.1, attn_out_proj and mlp_fc2 at M = 512 (128x3x1x2) 1.5-2.5 % faster, 64x2x1x1 within
  // +-0.5 %); the 128-token one-chain tiles were within +-0.8 % with six and keep the cap. The
  // K-split rounds its ring to two slots per chunk-sum warpgroup anyway (six at KS = 3).
  // The K-split of two chunk-sum warpgroups at 16 tokens takes four stages, two per warpgroup:
  // 16x1x1x1x2 with four was 1.5-2.3 % faster than 16x1x1x1x3 with six on mlp_fc2 and 0-0.7 % on
  // attn_out_proj (results v22 r9 on the H200, v24 r1 on an H100), the launcher's pick at M <= 16
  // until lane copies made 16x1x1x1x3 (six stages) the faster (results v36 r5). Ten stages with the
  // lone warpgroup's three copy threads ran -1.4..+2.3 % against six at M = 40-96 (results v44 r2),
  // and mlp_fc1 at M = 16 2.5 % slower (r1).
  static constexpr int kStageCap = KS == 1 && (BM <= 64 || NH == 2) ? 6 : (KS == 2 && BM <= 16 ? 4 : kMaxStages);
  // KS > 1: chunk g's sums (fp32, 64 rows x BM tokens, float4 i of consumer thread x at [i][x]:
  // conflict-free) and its verdict go through slot g mod kSlots. The slots come in kGroups groups of
  // kGroup consecutive chunks with one pair of mbarriers each (sum_full: every chunk's sums and
  // verdict written; sum_empty: the applier has loaded them), so the applier waits once per group
  // and, where the group's verdicts hold, applies it as straight-line loads and adds (a barrier and
  // a branchy step per chunk held it at ~300 ns per chunk, results v5 r1 and v11).
  static constexpr int kSlots = KS == 1 ? 0 : (BM <= 32 ? 16 : 8);
  static constexpr int kGroup = KS == 1 ? 1 : kSlots / 2;  // the applier drains one group while the other fills
  static constexpr int kGroups = KS == 1 ? 0 : kSlots / kGroup;
  static constexpr int kSlotBytes = KS == 1 ? 0 : 64 * BM * 4;
  // Per group: kGroup x (kArrivalsPerWarpgroup chunk-sum threads + one verdict lane).
  static constexpr int kSumArrivals = kGroup * (kArrivalsPerWarpgroup + 1);
  static constexpr int kSlotArea = kSlots * (kSlotBytes + 16) + kGroups * 16;  // sums, verdicts, two mbarriers per group
  // Tiles of 64 and 128 tokens (KS = 1) run a trip's per-element tests and model steps on the
  // failing warp's lanes (warp_element_steps: one lane per token of a thread, R / 2 <= 32), with
  // per consumer warp R floats of shared memory where the failing lane puts its accumulators (at
  // 64x3x1x1 the ring, then of 15 stages, gave one up for them at no cost: results v19 r9; since
  // results v22 it has six, kStageCap).
  // Trips took 13-16 us before, 4.5-7 after (results v19 r4, r5). The smaller tiles keep
  // element_steps: the warp path's registers moved their hot loops (16x4x1x1 reloaded a spill in
  // it; M = 16 ran 2-3 % slower, r2) and no trip was seen at M <= 32; the 256-token tiles too (64
  // tokens a thread).
  static constexpr bool kWarpTrip = KS == 1 && BM >= 64 && BM <= 128;
  static constexpr int kScratchBytes = kWarpTrip ? P * 4 * R * 4 : 0;
  // The two-chain tiles keep their four path counters per thread in static shared memory
  // (shared_counters): in registers, ptxas kept some in local memory inside 128x3x1x2's loop.
  static constexpr int kCounterBytes = NH == 2 ? 4 * kThreads * 4 : 0;
  // The bf16 output through shared memory (when no fp32 copy is asked for, 8 | n and the output is
  // 16-byte aligned): each consumer warpgroup converts its accumulators, puts them by stmatrix into
  // its buffer [BM tokens][64 rows] (the 128-byte swizzle of the output's tensor map), and one
  // thread stores the buffer with one tensor copy: a tile's epilogue ~2.0 -> ~0.7 us, 1.1-3.6 %
  // faster at M = 1024-4096 (results v33 r3, r4, an H100). The one-chain tiles of up to 128 tokens (16
  // KB a buffer). Not the two-chain tiles, whose loop ptxas then laid out anew (128x3x1x2, qkv at
  // M = 128, 2.6 % slower in r2), nor the K-split (its chunk-sum loop 7 instructions longer, its
  // one 16-32-token tile per CTA no faster): both keep the 8-byte stores and their machine code.
  static constexpr bool kEpiTma = BM <= 128 && NH == 1 && KS == 1 && BN % 16 == 0;
  static constexpr int kEpiBufs = kEpiTma ? P : 0;
  static constexpr int kEpiBytes = kEpiBufs * BM * 128;
  // Stage: A' tile [TW*BM tokens][64] f16 (128-byte swizzle), RW weight blocks, TW token-block
  // records (these three by the copy engine), then P verdicts (written by the verdict warp). With
  // KS > 1 neither records nor verdicts (the verdicts go into the slots), and CPS chunks: their A'
  // tiles [CPS][BM][64], then their weight blocks [CPS].
  static constexpr int kATile = TW * BM * 128;     // one chunk's A' tile
  static constexpr int kA = 0;
  static constexpr int kW = CPS * kATile;
  static constexpr int kT = kW + CPS * RW * kWBlockBytes;
  static constexpr int kV = kT + (KS == 1 ? TW * static_cast<int>(sizeof(TileRec)) : 0);
  static constexpr int kBytes = (kV + (KS == 1 ? T * 16 : 0) + kSmemAlign - 1) / kSmemAlign * kSmemAlign;
  static_assert(!kA3d || kATile % 1024 == 0,
                "a 3-D A' box lands as CPS 2-D boxes only if each chunk's tile is whole 1024-byte swizzle periods");
  static_assert(KS == 1 ? (P >= 1 && P <= 4) : (KS >= 2 && KS <= 4),
                "one to four consumer warpgroups per CTA, or two to four chunk-sum warpgroups and an applier");
  static_assert(KS == 1 || (RW == 1 && TW == 1 && NH == 1 && BM <= 64),
                "a K-split CTA owns one tile of at most 64 tokens, in one chain");
  static_assert(CPS == 1 || (KS > 1 && CPS <= 8), "several chunks per stage in the K-split only (one row block), at most 8");
  static_assert(KS == 1 || ((kSlots & (kSlots - 1)) == 0 && (kGroup & (kGroup - 1)) == 0 && kGroup <= kSlots),
                "slot and group index and phase by shifts: powers of two");
  static_assert(kSumArrivals < (1 << 20), "an mbarrier counts at most 2^20 - 1 arrivals");
  // A chunk-sum warpgroup waits for a slot group's sum_empty by phase parity, which cannot tell a
  // phase from the one two later: its consecutive stages (KS * CPS chunks apart) must lie at most
  // two slot groups apart, so that it never reaches a group while the applier still holds the one
  // two groups before it on the same barrier. The default stage sizes keep it (KS * CPS <= 16 =
  // 2 * kGroup at 16 and 32 tokens, <= 4 <= 8 at 64); a measurement build with
  // NVFP4_SM90_KS_STAGE_CHUNKS may not, and the launcher refuses those configurations.
  static constexpr bool kSlotWaitsSafe = KS == 1 || KS * CPS <= 2 * kGroup;
  static_assert(kSlotWaitsSafe || NVFP4_SM90_KS_STAGE_CHUNKS > 0, "the default K-split stages keep the slot waits within two groups");
  static_assert(KS == 1 || kGroup <= 16, "a K-split verdict round is one lane of warp 1 per chunk of a group");
  static_assert(NH == 1 || NH == 2, "a warpgroup's tokens in one chain or two");
  static_assert(BN % 8 == 0 && BN >= 8 && BN <= 128, "wgmma N (tokens per chain) is a multiple of 8, at most 128 here");
  static_assert(TW * BM <= 256, "the A' tile is one TMA box: at most 256 rows");
  static_assert(kW % kSmemAlign == 0 && (BM * 128) % kSmemAlign == 0 && (BN * 128) % kSmemAlign == 0,
                "every B operand starts on a 1024-byte swizzle atom");
  static_assert(kEpiBytes % kSmemAlign == 0, "every output buffer starts on a 1024-byte swizzle atom (after the ring)");
  static_assert(!kRealloc || (kConsumerRegs - kEntryRegs) * 128 * (KS > 1 ? 1 : P) <= (kEntryRegs - kProducerRegs) * 128,
                "setmaxnreg: the consumers ask for more registers than the producer warpgroup gives back");
};

// Measurement builds only. -DNVFP4_SM90_NO_EPILOGUE leaves each tile's epilogue out (what its
// conversions and stores cost, results v33 r1; the output is meaningless). -DNVFP4_SM90_NO_COPY
// re-arms the stages without copies after the first ring round (what the ring costs without memory
// traffic; the output is meaningless).
// -DNVFP4_SM90_TRACE: CTA 0 stamps %globaltimer at each role's steps per chunk, and the launcher
// writes the last launch's stamps to $NVFP4_SM90_TRACE_OUT. Events:
// 0 copies issued, 1 verdict written, 2 a chunk-sum warpgroup has the stage, 3 its MMAs are done,
// 4 its sums are in the slot, 5 the consumer has the verdict (K-split applier: the chunk's group,
// stamped at the group's first chunk), 6 the applier has loaded the sums, 7 the chunk applied,
// 8 the copy thread reaches the stage (before it waits for the stage to be free).
// -DNVFP4_SM90_RING_CHECK: the K-split's copy threads stamp each ring stage they fill with its
// stage index (in the `ready` barriers' words, which the K-split leaves unused), and a chunk-sum
// warpgroup that finds another stage's stamp after its wait prints both and traps.
// The one-chain warpgroups (NH = 1) also stamp per warpgroup (thread 0 of each; the events above
// mix warps), to $NVFP4_SM90_TRACE_OUT.wg: 0 its MMAs of chunk c done, 1 the verdict test and the
// next stage's ready wait done (since results v28 that wait comes before event 0), 2 chunk c applied
// and c + 1's MMAs issued (a tile's last chunk: the end of the tile's epilogue, since results v33),
// 3 chunk c's stage released (the early-release tiles released it before 2).
#if defined(NVFP4_SM90_TRACE) || defined(NVFP4_SM90_CTA_STATS)
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif
#ifdef NVFP4_SM90_TRACE
constexpr int kTraceEvents = 9, kTraceChunks = 4096, kTraceWgs = 4, kTraceWgEvents = 4;
constexpr int kTraceTiles = 16;  // the files hold the chunks of a CTA's first 16 tiles at most (and kTraceChunks)
__device__ unsigned long long g_sm90_trace[kTraceEvents][kTraceChunks];
__device__ unsigned long long g_sm90_wg_trace[kTraceWgs][kTraceWgEvents][kTraceChunks];
__device__ __forceinline__ void trace(int ev, uint32_t g) {
  if (blockIdx.x == 0 && g < static_cast<uint32_t>(kTraceChunks) && threadIdx.x % 32 == 0) g_sm90_trace[ev][g] = globaltimer();
}
__device__ __forceinline__ void trace_wg(int q, int ev, uint32_t g) {
  if (blockIdx.x == 0 && q < kTraceWgs && g < static_cast<uint32_t>(kTraceChunks) && threadIdx.x % 128 == 0)
    g_sm90_wg_trace[q][ev][g] = globaltimer();
}
#else
__device__ __forceinline__ void trace(int, uint32_t) {}
__device__ __forceinline__ void trace_wg(int, int, uint32_t) {}
#endif
// -DNVFP4_SM90_CTA_STATS: every CTA stamps %globaltimer when it starts and when its last consumer
// warpgroup ends, and counts its warpgroup-tiles; every fallback trip of a one-chain warpgroup
// (NH = 1, KS = 1; the two-chain and K-split tiles are not logged) with its tile, chunk, row block
// and duration (to the warpgroup's slowest warp: a named barrier after it, in this build only).
// The launcher writes the last launch's to $NVFP4_SM90_CTA_STATS_OUT (per CTA) and
// $NVFP4_SM90_CTA_STATS_OUT.trips; tools/sm90-cta-stats summarises them. It shows what ends a
// launch: the last CTAs, their trips, their tile counts (results v18).
#if defined(NVFP4_SM90_TRIP_PHASES) && !defined(NVFP4_SM90_CTA_STATS)
#error "NVFP4_SM90_TRIP_PHASES adds to the CTA statistics: build with NVFP4_SM90_CTA_STATS too"
#endif
#ifdef NVFP4_SM90_CTA_STATS
constexpr int kStatCtas = 1024, kStatTrips = 16384;
__device__ unsigned long long g_sm90_cta[kStatCtas][3];     // start, end, tiles (consumer warpgroups together)
constexpr int kTripFields = 7;  // cta, warpgroup, tile, chunk, row block, start, duration (ns)
__device__ unsigned long long g_sm90_trip[kStatTrips][kTripFields];
__device__ unsigned int g_sm90_trip_n;
#ifdef NVFP4_SM90_TRIP_PHASES
// -DNVFP4_SM90_TRIP_PHASES (with -DNVFP4_SM90_CTA_STATS; results v46):
// per trip (one-chain, 64- and 128-token tiles): ns from the trip's start to the bound's recompute
// done (warp 0), to the thread-group test done and to the element steps done (the slowest warp),
// the lanes that failed the thread-group test, and ns to the thread-group record's first 16 bytes
// loaded (the slowest warp; a load of its own before the test). FILE.phases.
__device__ unsigned long long g_sm90_trip_ph[kStatTrips][5];
#endif
#endif

// The verdict warp's result for one warpgroup and chunk (hopper::TileVerdict plus the running
// minimum of La + Lb that the fallback's thread-group test needs): 16 bytes in the stage.
struct Verdict {
  uint32_t pre_ok;
  float acc_limit, inc;
  int32_t run_lo;
};
static_assert(sizeof(Verdict) == 16, "a verdict is one 16-byte shared-memory load");

__device__ __forceinline__ TileRec load_tile_rec(const uint8_t* p) {
  TileRec r;
  const uint4* v = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
  d[0] = v[0];
  d[1] = v[1];
  d[2] = v[2];
  return r;
}

// A tile record as three loads' words (TileRec's layout: mag_n, mag, then lo | hi << 16 and the NaN
// byte), for the K-split's verdict lanes, which load a round ahead and take the fields apart later.
struct RecWords {
  uint4 mag_n, mag;
  uint2 tail;
};
__device__ __forceinline__ RecWords load_rec_words(const uint8_t* p) {
  static_assert(offsetof(TileRec, lo) == 32 && offsetof(TileRec, hi) == 34 && offsetof(TileRec, nan) == 36,
                "RecWords reads lo, hi and nan from TileRec's third vector");
  const uint4* v = reinterpret_cast<const uint4*>(p);
  return RecWords{v[0], v[1], *reinterpret_cast<const uint2*>(p + 32)};
}
__device__ __forceinline__ hopper::TileChunk tile_chunk(const RecWords& r) {
  hopper::TileChunk t;
  const uint32_t mn[4] = {r.mag_n.x, r.mag_n.y, r.mag_n.z, r.mag_n.w}, mg[4] = {r.mag.x, r.mag.y, r.mag.z, r.mag.w};
  for (int g = 0; g < 4; ++g) {
    t.mag_n[g] = __uint_as_float(mn[g]);
    t.mag[g] = __uint_as_float(mg[g]);
  }
  t.lo = static_cast<int16_t>(r.tail.x & 0xFFFFu);
  t.hi = static_cast<int16_t>(r.tail.x >> 16);
  t.nan = (r.tail.y & 0xFFu) != 0;
  return t;
}

// The path counters of a CTA's N threads in shared memory, [4][N] (the two-chain tiles': below).
template <int N>
__device__ __forceinline__ uint32_t* shared_counters() {
  __shared__ uint32_t c[4 * N];
  return c;
}

// A pointer the compiler cannot see through: arrays accessed by it stay in local memory instead of
// being promoted to registers (the fallback's copies must not take the hot loop's registers).
__device__ __forceinline__ float* opaque(float* p) {
  asm volatile("" : "+l"(p));
  return p;
}

__device__ __forceinline__ float max_nan(float a, float b) {  // NaN-propagating: a NaN accumulator fails every bound
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
template <int N>
__device__ __forceinline__ float abs_max(const float (&v)[N]) {
  float m0 = 0.0f, m1 = 0.0f;  // two chains: latency, not count
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    m0 = max_nan(m0, fabsf(v[i]));
    if (i + 1 < N) m1 = max_nan(m1, fabsf(v[i + 1]));
  }
  return max_nan(m0, m1);
}

// ---- the fallback: thread-group test, per-element tests, §3 model -----------------------------
struct Fallback {
  const uint8_t* a_tile;      // the warpgroup's token block of the chunk (BM x 64 f16): in the stage or global memory
  int64_t a_pitch;            // 0: a_tile is the stage's (128-byte rows, swizzled); else its global row pitch in bytes
  const uint8_t* wblock;      // the warpgroup's weight block (the stage's or global memory's: the same bytes)
  const TokenRec* trec;       // this token block's records of this chunk [BM]
  const TileRec* group;       // this thread's group record of this chunk
  int run_lo;                 // the warpgroup's running min of La + Lb (this chunk included)
  int r0;                     // the thread's first row in the block (the second is r0 + 8)
  int t;                      // lane % 4
};

// §3 for one element from the chunk's operands (the stage's, swizzled, or global memory's when
// a_pitch != 0): exact fp32 block sums of the folded products (each partial sum is a multiple of
// 2^(ea+eb-8) below 2^(ea+eb+12): 20 bits), turned into the model's integer terms, then
// mma_combine. acc and the result in value units.
__device__ __forceinline__ float slow_element(const uint8_t* a_tile, int64_t a_pitch, int mi, const uint8_t* wblock, int rw,
                                              uint32_t sfa, float acc) {
  const uint32_t sfw = row_scale_word(wblock, rw);
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
      const __half ah = *reinterpret_cast<const __half*>(
          a_pitch == 0 ? a_tile + mi * 128 + (((k / 8) ^ (mi % 8)) * 16) + (k % 8) * 2 : a_tile + mi * a_pitch + k * 2);
      const float wv = __fmul_rn(e2m1_value(block_code(wblock + kWBlockCodes, rw, k)), sv);
      const float pr = __fmul_rn(__half2float(ah), wv);  // exact
      any = any || pr != 0.0f;
      t = __fadd_rn(t, pr);  // exact (see above)
    }
    const bool zero = !any || pa.sig == 0 || pw.sig == 0;
    e[g] = zero ? model::kEZero : pa.exp + pw.exp;
    // term = t = sig * 2^(e - 8): sig = t * 2^(8 - e), an integer (|sig| <= 2304 * 225)
    sig[g] = zero ? 0 : static_cast<int64_t>(__float2ll_rz(__fmul_rn(t, hopper::pow2f(8 - pa.exp - pw.exp))));
  }
  return model::mma_combine(sig, e, nan, acc);
}

// slow_element by a whole warp (every lane calls it with the same arguments, converged; every
// lane gets the result): lanes 8 g .. 8 g + 7 take block g, two products each, summed by shuffles
// (each partial sum exact, see above, so the order is free: Sm90Layout.BlockSumsOfFoldedProducts
// checks it on the CPU), and every lane combines the four block terms. One lane running
// slow_element (~1,800 instructions, unrolled) took 6-15 us in a trip, and as long again when
// timed a second time on warm caches (results v19 r3); here a lane runs ~60 instructions, seven
// shuffles and the combine. Its scale decode, product and term exponent repeat slow_element's:
// written once as shared helpers, every kernel's SASS moved and qkv at M = 16 ran 3-3.7 % slower
// (16x3x1x1's loop rescheduled; results v19 r13), so both keep their own lines.
__device__ __forceinline__ float warp_slow_element(const uint8_t* a_tile, int64_t a_pitch, int mi, const uint8_t* wblock, int rw,
                                                   uint32_t sfa, float acc) {
  const int lane = threadIdx.x % 32, g = lane / 8;
  const uint32_t sfw = row_scale_word(wblock, rw);
  const uint8_t ba = static_cast<uint8_t>(sfa >> (8 * g)), bw = static_cast<uint8_t>(sfw >> (8 * g));
  const model::ScaleParts pa = model::decode_scale(ba), pw = model::decode_scale(bw);
  const float sv = pw.nan ? 0.0f : hopper::scale_value(bw);
  float t = 0.0f;
  bool any = false;
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const int k = 16 * g + 2 * (lane % 8) + e;
    // A' element (mi, k) under the 128-byte swizzle: 16-byte unit k/8 of the row XOR row % 8.
    const __half ah = *reinterpret_cast<const __half*>(
        a_pitch == 0 ? a_tile + mi * 128 + (((k / 8) ^ (mi % 8)) * 16) + (k % 8) * 2 : a_tile + mi * a_pitch + k * 2);
    const float wv = __fmul_rn(e2m1_value(block_code(wblock + kWBlockCodes, rw, k)), sv);
    const float pr = __fmul_rn(__half2float(ah), wv);  // exact
    any = any || pr != 0.0f;
    t = __fadd_rn(t, pr);  // exact
  }
#pragma unroll
  for (int d = 1; d < 8; d *= 2) t = __fadd_rn(t, __shfl_xor_sync(0xFFFFFFFFu, t, d));  // exact
  const bool any_g = ((__ballot_sync(0xFFFFFFFFu, any) >> (8 * g)) & 0xFFu) != 0;
  const bool zero = !any_g || pa.sig == 0 || pw.sig == 0;
  const int eg = zero ? model::kEZero : pa.exp + pw.exp;
  // term = t = sig * 2^(e - 8): sig = t * 2^(8 - e), an integer (|sig| <= 2304 * 225: 32 bits suffice)
  const int sg = zero ? 0 : __float2int_rz(__fmul_rn(t, hopper::pow2f(8 - pa.exp - pw.exp)));
  const bool nan = __any_sync(0xFFFFFFFFu, pa.nan || pw.nan);
  int64_t sig[4];
  int e4[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    sig[j] = __shfl_sync(0xFFFFFFFFu, sg, 8 * j);
    e4[j] = __shfl_sync(0xFFFFFFFFu, eg, 8 * j);
  }
  return model::mma_combine(sig, e4, nan, acc);
}

// The thread-group test, where the tile test failed: the tile test's function on the thread's
// tokens (its group record, from the pre-pass) and its two rows. Whether chunk c's step is
// add.rz(acc, sum) for every element of the thread; amax: its largest |acc| (scaled units, NaN
// fails). Its operands are registers and one record: a thread that passes (nearly all) never
// copies its accumulators to local memory (below). A trip runs it once, cold, one warp per
// scheduler, so its length is the chain of its instructions: with the weight rows folded byte by
// byte (branches around each byte, ~600 instructions) it ended 1.2-2.0 us after its record had
// arrived; weight_pair_tile's selects (~300) end it 0.4-0.9 us after (results v47 r1, r2).
__device__ __forceinline__ bool group_holds(const Fallback& f, float amax) {
  const hopper::TileChunk wt = weight_pair_tile(f.wblock, f.r0);  // rows r0, r0 + 8: no branches
  int run_lo = f.run_lo;  // the group's La + Lb is >= the tile's: run_lo stays as it is
  const hopper::TileVerdict v = hopper::tile_prepare(tile_chunk(*f.group), wt, run_lo, kAccShift);
  return v.pre_ok && amax < v.acc_limit;
}

// Token u of a thread (lane % 4 = t) and its element in row r0 + 8 second: chain u / (BN / 4),
// then the wgmma accumulator layout (element i = chain * BN / 2 + 4 j + 2 second + e holds token
// 8 j + 2 t + e of the chain, row r0 + 8 second).
template <int BN>
__device__ __forceinline__ int thread_token(int u, int t) {
  return (u / (BN / 4)) * BN + 8 * ((u % (BN / 4)) / 2) + 2 * t + u % 2;
}
template <int BN>
__device__ __forceinline__ int thread_element(int u, int second) {
  return (u / (BN / 4)) * (BN / 2) + 4 * ((u % (BN / 4)) / 2) + 2 * second + u % 2;
}

// The per-element tests and the §3 model for a thread that failed the thread-group test: its R
// accumulators and chunk sums (all chains, after every chain of the chunk has finished), copied
// to local memory by the caller so the hot loop's registers are not sized for the model. Inlined:
// as a call, its ABI kept loop state in local memory on the fast path too (measured in the SASS).
// Returns the number of element steps the model evaluated. Since results v19 it serves the
// K-split applier (whose threads may take different paths through a chunk), the tiles of 16 and 32
// tokens and the 256-token tiles; the 64- and 128-token tiles run warp_element_steps (below).
//
// Local memory is not L1-resident here: the ring takes the shared-memory carve-out, and a
// warpgroup's copies (2 x R floats per thread) exceed what is left of L1, so a load that waits is
// an L2 round trip. When each element waited for its own (an accumulator, a chunk sum and a token
// record, element after element), a trip through this path took ~40 us (results v18 r1:
// -DNVFP4_SM90_CTA_STATS logs every trip), the time of ~60 chunks, and the kernel ended with the
// CTA that had the most. Here a batch's loads are independent of each other and issue together:
// ~16 us at 128 tokens, ~11 at 64 (r2, r3). Not kept (diffs in the results folder): the failing
// thread's elements spread over its warp's lanes by shuffles (r4: ~10 us at 128 tokens but 17-19 at
// 64, no launch faster), and the tests on the registers with only the model's elements copied
// (r5: the two-chain loop, which holds this code inline, spilled; qkv at M = 128 29 % slower).
template <int R, int BN>
__device__ __forceinline__ uint32_t element_steps(float* acc, const float* ch, const Fallback f) {
  uint32_t m[4];  // rows r0 and r0 + 8: their multiplier words (one load, as group_holds')
  pair_multiplier_words(f.wblock, f.r0, m);
  float wmag[4];  // the block bounds: not needed by the per-element test
  const hopper::RowChunk w0 = weight_row_chunk(m[0], m[1], wmag), w1 = weight_row_chunk(m[2], m[3], wmag);  // no branches
  // Per element, a batch of kBatch tokens (2 kBatch elements: the thread's two rows) at a time:
  // the batch's token records, accumulators and chunk sums are loaded first, the (E)/(M) test runs
  // on registers, and the rare elements that fail it go to the model one by one afterwards.
  uint32_t slow = 0;
  const float up = hopper::pow2f(-kAccShift), down = hopper::pow2f(kAccShift);
  constexpr int kTokens = R / 2, kBatch = kTokens < 4 ? kTokens : kTokens < 32 ? 4 : 8;
  static_assert(kTokens % kBatch == 0, "the thread's tokens come in whole batches");
  auto token = [&](int u) { return thread_token<BN>(u, f.t); };
  auto element = [&](int u, int second) { return thread_element<BN>(u, second); };
#pragma unroll 1
  for (int u0 = 0; u0 < kTokens; u0 += kBatch) {
    TokenRec tr[kBatch];
    float va[2 * kBatch], vc[2 * kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      tr[k] = f.trec[token(u0 + k)];
#pragma unroll
      for (int second = 0; second < 2; ++second) {
        va[2 * k + second] = acc[element(u0 + k, second)];
        vc[2 * k + second] = ch[element(u0 + k, second)];
      }
    }
    uint32_t to_model = 0;  // bit 2 k + second: the element goes to the model
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      hopper::RowChunk a;
      for (int g = 0; g < 4; ++g) a.mag[g] = tr[k].mag[g];
      a.lo = tr[k].lo;
      a.hi = tr[k].hi;
      a.nan = tr[k].nan != 0;
#pragma unroll
      for (int second = 0; second < 2; ++second) {
        if (hopper::step_is_fast(a, second ? w1 : w0, __fmul_rn(va[2 * k + second], up)))  // the value exact
          acc[element(u0 + k, second)] = __fadd_rz(va[2 * k + second], vc[2 * k + second]);
        else
          to_model |= 1u << (2 * k + second);
      }
    }
#pragma unroll 1
    while (to_model) {
      const int bit = __ffs(to_model) - 1, u = u0 + bit / 2, second = bit % 2, i = element(u, second), mi = token(u);
      to_model &= to_model - 1;
      ++slow;
      const float value = __fmul_rn(acc[i], up);  // exact
      acc[i] = __fmul_rn(slow_element(f.a_tile, f.a_pitch, mi, f.wblock, f.r0 + 8 * second, f.trec[mi].sf, value), down);  // exact
    }
  }
  return slow;
}

// The per-element tests and the §3 model of a trip (tiles of 64 and 128 tokens, C::kWarpTrip) for
// the lanes of a warp whose thread-group test failed (held = false; about one thread of 128 in a
// trip), one failing lane L at a time. acc: the thread's R accumulators, all chains (thread_element's
// order); ch: its chunk sums (registers, or the two-chain loop's local copy). L puts its
// accumulators into the warp's scratch (shared memory); lane u tests L's two elements of token u
// (its record from global memory: the caller prefetched the token block's records into L1); the
// elements that fail go to the model one at a time, each run by the whole warp
// (warp_slow_element), the result written over the accumulator in the scratch; then L takes, per
// element, the model's result or add.rz(acc, ch), and with kZeroSums zeroes its sums (the
// one-chain caller adds them afterwards). Every lane of the warp calls this, converged. Returns the
// model steps the lane counted (lane 0 counts them).
//
// Why not element_steps: a load that leaves the SM waited ~1-2 us in a trip (results v19 r1, the
// trip's phases: -DNVFP4_SM90_CTA_STATS with stamps), and element_steps' copies to local memory
// and back and its batches' loads were each such a wait; its one-thread model step took 6-15 us
// more: ~13-16 us a trip. Here the far loads are the thread-group test's record and the
// prefetched token records (not timed on their own).
template <int R, int BN, bool kZeroSums, class Sums>
__device__ __forceinline__ uint32_t warp_element_steps(bool held, const Fallback& f, float (&acc)[R], Sums& ch, float* scr) {
  constexpr int kTokens = R / 2;  // a thread's tokens, one lane each
  static_assert(kTokens <= 32, "one lane per token of the failing thread");
  const int lane = threadIdx.x % 32;
  const float up = hopper::pow2f(-kAccShift), down = hopper::pow2f(kAccShift);
  uint32_t slow = 0;
  uint32_t fails = __ballot_sync(0xFFFFFFFFu, !held);
#pragma unroll 1
  while (fails) {
    const int L = __ffs(fails) - 1;
    fails &= fails - 1;
    if (lane == L) {
#pragma unroll
      for (int i = 0; i < R; ++i) scr[i] = acc[i];
    }
    __syncwarp();
    const int r0 = f.r0 - lane / 4 + L / 4;  // L's rows: 16 w + L / 4 and + 8 (the same in every lane)
    bool model0 = false, model1 = false;
    uint32_t sfa = 0;  // lane u: the scale bytes of L's token u
    if (lane < kTokens) {
      const TokenRec tr = f.trec[thread_token<BN>(lane, L % 4)];
      hopper::RowChunk a;
      for (int g = 0; g < 4; ++g) a.mag[g] = tr.mag[g];
      a.lo = tr.lo;
      a.hi = tr.hi;
      a.nan = tr.nan != 0;
      sfa = tr.sf;
      uint32_t wm[4];  // L's rows r0 and r0 + 8: their multiplier words
      pair_multiplier_words(f.wblock, r0, wm);
#pragma unroll
      for (int second = 0; second < 2; ++second) {
        float wmag[4];  // the block bounds: not needed by the per-element test
        const hopper::RowChunk w = weight_row_chunk(wm[2 * second], wm[2 * second + 1], wmag);  // no branches (results v47)
        const float value = __fmul_rn(scr[thread_element<BN>(lane, second)], up);  // exact
        (second ? model1 : model0) = !hopper::step_is_fast(a, w, value);
      }
    }
    const uint32_t m0 = __ballot_sync(0xFFFFFFFFu, model0), m1 = __ballot_sync(0xFFFFFFFFu, model1);
    // The model's elements, one at a time by the whole warp (rare: about one a trip).
    for (int second = 0; second < 2; ++second) {
#pragma unroll 1
      for (uint32_t left = second ? m1 : m0; left; left &= left - 1) {
        const int u = __ffs(left) - 1, i = thread_element<BN>(u, second), mi = thread_token<BN>(u, L % 4);
        const float value = __fmul_rn(scr[i], up);  // exact; every lane reads it
        const float r = __fmul_rn(warp_slow_element(f.a_tile, f.a_pitch, mi, f.wblock, r0 + 8 * second,
                                                     __shfl_sync(0xFFFFFFFFu, sfa, u), value), down);  // exact
        __syncwarp();  // every lane's read of scr[i] before the write
        if (lane == 0) {
          scr[i] = r;
          ++slow;
        }
        __syncwarp();
      }
    }
    if (lane == L) {
#pragma unroll
      for (int u = 0; u < kTokens; ++u)
#pragma unroll
        for (int second = 0; second < 2; ++second) {
          const int i = thread_element<BN>(u, second);
          acc[i] = ((second ? m1 : m0) >> u) & 1u ? scr[i] : __fadd_rz(acc[i], ch[i]);
        }
      if constexpr (kZeroSums) {
#pragma unroll
        for (int i = 0; i < R; ++i) ch[i] = 0.0f;
      }
    }
    __syncwarp();  // L's reads before the next failing lane's writes
  }
  return slow;
}

// Tile index -> (token tile, row tile): groups of kRasterGroup token tiles sweep the row tiles
// together, so the weight rows a wave of CTAs reads serve several token tiles from L2.
// 32-bit arithmetic (the launcher bounds the tile count): a 64-bit division is a subroutine call.
__device__ __forceinline__ void tile_coords(uint32_t tile, uint32_t mtiles, uint32_t ntiles, uint32_t& mt, uint32_t& nt) {
  const uint32_t per_group = kRasterGroup * ntiles;
  const uint32_t group = tile / per_group, first = group * kRasterGroup;
  const uint32_t rows = mtiles - first < kRasterGroup ? mtiles - first : kRasterGroup;
  const uint32_t r = tile - group * per_group;
  mt = first + r % rows;
  nt = r / rows;
}

#pragma nv_diagnostic pop

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) sm90_gemm_nvfp4(const __grid_constant__ CUtensorMap tmap_a, Sm90Gemm p,
                                                                 int stages, const __grid_constant__ CUtensorMap tmap_out,
                                                                 int epi_tma) {
#if defined(__CUDA_ARCH__) && !(__CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL))
  // wgmma and setmaxnreg exist on sm_90a only; the launcher never starts this on other GPUs.
  __trap();
#else
  constexpr int BM = C::BM, RW = C::RW, TW = C::TW, P = C::P, KS = C::KS;
  extern __shared__ __align__(16) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, not by a cast through an integer: the compiler then keeps
  // every access below a shared-memory one (LDS, 32-bit addresses).
  uint8_t* smem = smem_raw + ((kSmemAlign - (smem_addr(smem_raw) & (kSmemAlign - 1))) & (kSmemAlign - 1));
  uint8_t* const epi = smem + stages * C::kBytes;                             // kEpiTma: output buffers [kEpiBufs]
  uint8_t* slots = epi + C::kEpiBytes;                                        // KS > 1: chunk sums [kSlots]
  Verdict* slot_v = reinterpret_cast<Verdict*>(slots + C::kSlots * C::kSlotBytes);  // ... and their verdicts
  float* const scratch = reinterpret_cast<float*>(slot_v + C::kSlots);      // kWarpTrip: [P][4 warps][R]
  uint64_t* const bars = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(scratch) + C::kScratchBytes);
  // The one-chain and K-split tiles keep a stage's three barriers side by side (kBarStride 3), so
  // that each is one multiply-add from the stage index (2-3 fewer instructions per chunk in their
  // loops, results v32 r1); the two-chain tiles keep three arrays of `stages` (side by side,
  // ptxas put a loop value of 128x3x1x2 in local memory).
  constexpr int kBarStride = C::NH == 1 ? 3 : 1;
  // kBarStride 1: the arrays of the copies landed, the verdicts written (KS = 1), the consumers done.
  uint64_t* const full = bars;
  uint64_t* const ready = full + stages;
  uint64_t* const empty = ready + stages;
  uint64_t* sum_full = bars + 3 * stages;                                   // KS > 1: a group's sums and verdicts written
  auto full_at = [&](int s) { return kBarStride == 3 ? bars + 3 * s : &full[s]; };
  auto ready_at = [&](int s) { return kBarStride == 3 ? bars + 3 * s + 1 : &ready[s]; };
  auto empty_at = [&](int s) { return kBarStride == 3 ? bars + 3 * s + 2 : &empty[s]; };
  uint64_t* sum_empty = sum_full + C::kGroups;                              // ... and loaded by the applier
  // The warpgroup index broadcast from lane 0: ptxas then knows it warp-uniform and keeps what
  // derives from it (the stage counter, stage addresses, the four wgmma descriptors of a chain) in
  // uniform registers, with no R2UR between a chain's MMAs: the one-chain and K-split loops 3-24
  // instructions per chunk shorter, 1-9 % faster at M <= 64 (results v27 r4, r5, an H200). Not for
  // the two-chain tiles: 128x3x1x2 (qkv at M = 128) ran 0.2-1.9 % slower so, and again 0.9-5.2 %
  // with its counters in shared memory (results v32 r2, an H100: its loop 2413 -> 2346 instructions).
  const int wg = C::NH == 1 ? __shfl_sync(0xFFFFFFFFu, static_cast<int>(threadIdx.x / 128), 0) : static_cast<int>(threadIdx.x / 128);
  const int tid = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full_at(s), C::kFullArrivals);  // each copy thread's arrive with its bytes
      if (KS == 1) mbar_init(ready_at(s), C::T);  // each verdict lane
      mbar_init(empty_at(s), C::kEmptyArrivals);
    }
    for (int b = 0; b < C::kGroups; ++b) {
      mbar_init(&sum_full[b], C::kSumArrivals);
      mbar_init(&sum_empty[b], kArrivalsPerWarpgroup);
    }
    fence_barrier_init();
  }
  __syncthreads();
#ifdef NVFP4_SM90_CTA_STATS
  if (threadIdx.x == 0 && blockIdx.x < kStatCtas) g_sm90_cta[blockIdx.x][0] = globaltimer();
#endif
  // Sizes the launcher checked to fit 32 bits (tiles, blocks, chunks).
  const uint32_t nblocks = static_cast<uint32_t>((p.n + kRowsWG - 1) / kRowsWG);  // 64-row weight blocks
  const uint32_t mtiles = static_cast<uint32_t>(p.mp / (BM * TW)), ntiles = (nblocks + RW - 1) / RW;
  const uint32_t tiles = mtiles * ntiles, C_ = static_cast<uint32_t>(p.chunks);
  // Work units: the tiles, except that where the last round of tiles is partial and its tiles'
  // row blocks fit one round on their own, each of those tiles becomes RW units of one row block
  // (its other warpgroups sit the unit out, as past the last row block), so that the last round
  // ends sooner: a lone warpgroup runs its chain faster (docs/hopper-exact-path.md, "The end of a
  // launch"). Every role walks the same units; a unit's stages carry its whole tile. On 128x2x1x1:
  // out and fc2 1.7-2.5 % faster at M = 4096 (1344 tiles on 132 SMs), qkv and fc1 1.2-1.3 % at
  // M = 2048 (results v33 r6, an H100). Built for every one-chain tile of two or more row blocks,
  // 96x2x1x1 ran out and fc2 at M = 2048, where nothing splits (924 tiles), 0.7-0.9 % slower (its
  // loop's registers renamed), so the smaller tiles keep their code.
  constexpr bool kSplitTail = Config{BM, RW, TW, C::NH, KS}.splits_last_round();
  const uint32_t tail = kSplitTail ? tiles % gridDim.x : 0;
  const bool split_tail = kSplitTail && tail != 0 && RW * tail <= gridDim.x;
  const uint32_t whole = split_tail ? tiles - tail : tiles, units = split_tail ? whole + RW * tail : tiles;
  auto unit_tile = [&](uint32_t u) { return u < whole ? u : whole + (u - whole) / RW; };
  // The row block (0 .. RW - 1) of its tile that unit u computes alone, or RW for all of them.
  auto unit_part = [&](uint32_t u) { return u < whole ? static_cast<uint32_t>(RW) : (u - whole) % RW; };
  // Chunk c's prepacked weight block b and token-block record tb (the prepack's and the
  // pre-pass's layouts: chunk-major; p.mp / BM token blocks per chunk).
  auto weight_block = [&](uint32_t c, uint32_t b) { return p.wblk + (static_cast<int64_t>(c) * nblocks + b) * kWBlockBytes; };
  // A weight copy into the ring (NVFP4_SM90_WEIGHT_EVICT_FIRST: with the evict-first L2 policy).
  auto weight_g2s = [&](void* dst, const uint8_t* src, uint32_t bytes, uint64_t* bar) {
    if constexpr (NVFP4_SM90_WEIGHT_EVICT_FIRST != 0) bulk_g2s_hint(dst, src, bytes, bar, l2_policy_evict_first());
    else bulk_g2s(dst, src, bytes, bar);
  };
  auto token_record = [&](uint32_t c, uint32_t tb) {
    return p.atile + static_cast<int64_t>(c) * static_cast<uint32_t>(p.mp / BM) + tb;
  };
  // K-split: this CTA's last chunk (ring index; the grid never exceeds the tiles). Its group may be
  // short: whoever writes that chunk's slot arrives also for the group's missing chunks.
  const uint32_t g_last = (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x * C_ - 1;
  auto group_arrivals = [&](uint32_t g) { return 1u + (g == g_last ? C::kGroup - 1 - g % C::kGroup : 0u); };
  // K-split: chunks of the stage that starts at chunk c (c < C_, a multiple of CPS).
  auto stage_chunks = [&](uint32_t c) { return C_ - c < static_cast<uint32_t>(C::CPS) ? C_ - c : static_cast<uint32_t>(C::CPS); };

  if (wg == 0) {
    if constexpr (C::kRealloc) regs_release<C::kProducerRegs>();
    // kStageWarps: warps 0, 2, 3 are stage warps 0, 1, 2.
    const int stage_warp = tid < 32 ? 0 : tid / 32 - 1;
    const bool copy_thread = C::kStageWarps > 0 ? tid / 32 != 1 && stage_warp < C::kStageWarps
                             : C::kLaneCopies     ? tid < 32 || (tid >= 64 && tid < 32 * (C::kCopyThreads + 1))
                                                  : tid % 32 == 0 && (tid == 0 || (C::kCopyThreads > 1 && tid >= 64 && tid < 32 * (C::kCopyThreads + 1)));
    if (copy_thread) {
      const uint32_t lane = static_cast<uint32_t>(tid % 32);
      // The n copies of a K-split stage, issue(k) for k < n: lane k issues copy k
      // (Cfg::kLaneCopies, after lane 0's barrier work), else the thread issues them in turn.
      auto each_copy = [&](uint32_t n, auto&& issue) {
        if constexpr (C::kLaneCopies) {
          __syncwarp();
          if (lane < n) issue(lane);
        } else {
          for (uint32_t k = 0; k < n; ++k) issue(k);
        }
      };
      // The A' bytes of a K-split stage of n chunks: a 3-D box (Cfg::kA3d) counts all CPS chunks',
      // the zeros past the last chunk too. a_box issues that box into stage s, a_tile chunk c + k's
      // 2-D box (the stage's k-th A' tile) otherwise.
      auto stage_a_bytes = [](uint32_t n) { return (C::kA3d ? static_cast<uint32_t>(C::CPS) : n) * C::kATile; };
      auto a_box = [&](int s, uint32_t mt, uint32_t c) {
        tma_load_3d(smem + s * C::kBytes + C::kA, &tmap_a, 0, static_cast<int32_t>(mt * BM * TW), static_cast<int32_t>(c), full_at(s));
      };
      auto a_tile = [&](int s, uint32_t mt, uint32_t c, uint32_t k) {
        uint8_t* st = smem + s * C::kBytes;
        tma_load_2d(st + C::kA + k * C::kATile, &tmap_a, static_cast<int32_t>((c + k) * 64), static_cast<int32_t>(mt * BM * TW),
                    full_at(s));
      };
      // The copy threads: every stage's weight blocks (role 0), A' tile (role 1) and token-block
      // records (role 2); with one copy thread it issues all three. The weight is no output of the
      // pre-pass, so the first ring round's weight copies go out before griddepcontrol.wait: under
      // a programmatic dependent launch (Sm90Gemm::after_prepass) they overlap the pre-pass;
      // otherwise the wait returns at once.
      const int role = tid / 32 == 0 ? 0 : tid / 32 - 1;
      const bool copy_w = role == 0, copy_a = C::kCopyThreads == 1 || role == 1,
                 copy_t = KS == 1 && (C::kCopyThreads == 1 || role == 2);
      if (copy_a || C::kStageWarps > 0) prefetch_tensor_map(&tmap_a);
      if constexpr (C::kStageWarps > 0) {
        // Whole stages in turn (Cfg::kStageWarps): stage g is stage warp g mod kStageWarps's. Its
        // lane 0 arms the full barrier with the stage's bytes of both kinds and issues its A' box (or
        // lane k chunk k's, kA3d off), and lane k issues chunk k's weight copy. The first ring round's
        // weight copies go out before the pre-pass wait and its A' boxes after it (the barrier counts
        // their bytes already).
        const uint32_t first_round = static_cast<uint32_t>(stages);
        auto copies = [&](int s, uint32_t mt, uint32_t nt, uint32_t c, bool w, bool a) {
          const uint32_t n = stage_chunks(c);
          uint8_t* st = smem + s * C::kBytes;
          __syncwarp();
          if (lane < n) {
            if (w) weight_g2s(st + C::kW + lane * kWBlockBytes, weight_block(c + lane, nt), kWBlockBytes, full_at(s));
            if (a && !C::kA3d) a_tile(s, mt, c, lane);
            if (a && C::kA3d && lane == 0) a_box(s, mt, c);
          }
        };
        auto arm = [&](int s, uint32_t c) {
          if (lane == 0) mbar_arrive_expect_tx(full_at(s), stage_chunks(c) * kWBlockBytes + stage_a_bytes(stage_chunks(c)));
        };
        {
          RingPos pos;
          uint32_t g = 0, turn = 0;  // turn = g mod kStageWarps
          for (uint32_t tile = blockIdx.x; tile < tiles && g < first_round; tile += gridDim.x) {
            uint32_t mt, nt;
            tile_coords(tile, mtiles, ntiles, mt, nt);
            for (uint32_t c = 0; c < C_ && g < first_round; c += C::CPS, ++g, pos.advance(stages), turn = turn + 1 == C::kStageWarps ? 0 : turn + 1)
              if (turn == static_cast<uint32_t>(stage_warp)) {
                arm(pos.stage, c);
                copies(pos.stage, mt, nt, c, true, false);
              }
          }
        }
        wait_prerequisites();
        RingPos pos;
        uint32_t g = 0, turn = 0;
        for (uint32_t tile = blockIdx.x, g0 = 0; tile < tiles; tile += gridDim.x, g0 += C_) {  // g0: the tile's first chunk (traces)
          uint32_t mt, nt;
          tile_coords(tile, mtiles, ntiles, mt, nt);
          for (uint32_t c = 0; c < C_; c += C::CPS, ++g, pos.advance(stages), turn = turn + 1 == C::kStageWarps ? 0 : turn + 1) {
            if (turn != static_cast<uint32_t>(stage_warp)) continue;
            const int s = pos.stage;
            trace(8, g0 + c);
            if (g >= first_round) mbar_wait(empty_at(s), pos.phase ^ 1);
#ifdef NVFP4_SM90_RING_CHECK
            if (lane == 0) {
              reinterpret_cast<volatile uint32_t*>(ready_at(s))[0] = g;
              reinterpret_cast<volatile uint32_t*>(ready_at(s))[1] = g;
            }
#endif
            if (g >= first_round) arm(s, c);
            copies(s, mt, nt, c, g >= first_round, true);
            trace(0, g0 + c);
          }
        }
      } else if constexpr (C::CPS == 1) {
        // One chunk per stage. This loop is kept apart from the K-split's below, which shares its
        // structure: in one loop for both, ptxas allocated the one-warpgroup tiles' registers
        // differently and they ran 2-17 % slower (results v13 r6).
        const uint32_t first_round = static_cast<uint32_t>(stages);
        const uint32_t a_bytes = TW * BM * 128, t_bytes = KS == 1 ? TW * static_cast<uint32_t>(sizeof(TileRec)) : 0u;
        auto weight_bytes = [&](uint32_t nt) {
          const uint32_t b0 = nt * RW;
          return (nblocks - b0 < RW ? nblocks - b0 : RW) * kWBlockBytes;
        };
        auto stage_weight = [&](int s, uint32_t nt, uint32_t c) {
          const uint32_t wbytes = weight_bytes(nt);
          mbar_arrive_expect_tx(full_at(s), wbytes + (C::kCopyThreads == 1 ? a_bytes + t_bytes : 0u));
          weight_g2s(smem + s * C::kBytes + C::kW, weight_block(c, nt * RW), wbytes, full_at(s));
        };
        if (copy_w) {
          RingPos pos;
          uint32_t g = 0;
          for (uint32_t u = blockIdx.x; u < units && g < first_round; u += gridDim.x) {
            uint32_t mt, nt;
            tile_coords(unit_tile(u), mtiles, ntiles, mt, nt);
            for (uint32_t c = 0; c < C_ && g < first_round; ++c, ++g, pos.advance(stages)) stage_weight(pos.stage, nt, c);
          }
        }
        if (copy_a || copy_t) wait_prerequisites();
        RingPos pos;
        uint32_t g = 0;
        for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
          uint32_t mt, nt;
          tile_coords(unit_tile(u), mtiles, ntiles, mt, nt);
          for (uint32_t c = 0; c < C_; ++c, ++g, pos.advance(stages)) {
            const int s = pos.stage;
            if (role == 0) trace(8, g);
            if (g >= first_round || !copy_w) {  // the weight thread's first round went out above
              mbar_wait(empty_at(s), pos.phase ^ 1);  // a fresh barrier passes parity 1: the first round
#ifdef NVFP4_SM90_NO_COPY
              // Measurement build: after the first ring round the stages are re-armed without
              // copies (the consumers reuse what the first round loaded; the output is meaningless).
              if (g >= first_round) {
                mbar_arrive(full_at(s));
                continue;
              }
#endif
              if (copy_w) stage_weight(s, nt, c);
            }
            if (role == 0) trace(0, g);
            uint8_t* st = smem + s * C::kBytes;
            if (copy_a) {
              if (C::kCopyThreads > 1) mbar_arrive_expect_tx(full_at(s), a_bytes);
              tma_load_2d(st + C::kA, &tmap_a, static_cast<int32_t>(c * 64), static_cast<int32_t>(mt * BM * TW), full_at(s));
            }
            if (copy_t) {
              if (C::kCopyThreads > 1) mbar_arrive_expect_tx(full_at(s), t_bytes);
              bulk_g2s(st + C::kT, token_record(c, mt * TW), t_bytes, full_at(s));
            }
          }
        }
      } else {
        // The K-split (one row block per tile, no records): ring index g counts stages; the stage of a
        // tile that starts at chunk c holds its chunks c .. c + stage_chunks(c) - 1.
        const uint32_t first_round = static_cast<uint32_t>(stages);
        const uint32_t a_bytes = C::kATile;
        // One copy per chunk's weight block. A layout that made a K-split stage's chunks one copy
        // (blocks by groups of four chunks) was no faster there and made the other tiles 2-29 %
        // slower (results v13 r5).
        // Stage g (the ring index; stamped into the stage by a -DNVFP4_SM90_RING_CHECK build).
        auto stage_weight = [&](int s, uint32_t nt, uint32_t c, uint32_t g) {
          const uint32_t n = stage_chunks(c);
#ifdef NVFP4_SM90_RING_CHECK
          reinterpret_cast<volatile uint32_t*>(ready_at(s))[0] = g;
#else
          (void)g;
#endif
          if (!C::kLaneCopies || lane == 0) mbar_arrive_expect_tx(full_at(s), n * (kWBlockBytes + (C::kCopyThreads == 1 ? a_bytes : 0u)));
          each_copy(n, [&](uint32_t k) {
            weight_g2s(smem + s * C::kBytes + C::kW + k * kWBlockBytes, weight_block(c + k, nt), kWBlockBytes, full_at(s));
          });
        };
        if (copy_w) {
          RingPos pos;
          uint32_t g = 0;
          for (uint32_t tile = blockIdx.x; tile < tiles && g < first_round; tile += gridDim.x) {
            uint32_t mt, nt;
            tile_coords(tile, mtiles, ntiles, mt, nt);
            for (uint32_t c = 0; c < C_ && g < first_round; c += C::CPS, ++g, pos.advance(stages)) stage_weight(pos.stage, nt, c, g);
          }
        }
        if (copy_a) wait_prerequisites();
        RingPos pos;
        uint32_t g = 0;
        for (uint32_t tile = blockIdx.x, g0 = 0; tile < tiles; tile += gridDim.x, g0 += C_) {  // g0: the tile's first chunk (traces)
          uint32_t mt, nt;
          tile_coords(tile, mtiles, ntiles, mt, nt);
          for (uint32_t c = 0; c < C_; c += C::CPS, ++g, pos.advance(stages)) {
            const int s = pos.stage;
            if (role == 0) trace(8, g0 + c);
            if (g >= first_round || !copy_w) {  // the weight thread's first round went out above
              mbar_wait(empty_at(s), pos.phase ^ 1);  // a fresh barrier passes parity 1: the first round
#ifdef NVFP4_SM90_NO_COPY
              // Measurement build: after the first ring round the stages are re-armed without
              // copies (the consumers reuse what the first round loaded; the output is meaningless).
              if (g >= first_round) {
                mbar_arrive(full_at(s));
                continue;
              }
#endif
              if (copy_w) stage_weight(s, nt, c, g);
            }
            if (role == 0) trace(0, g0 + c);
            if (copy_a) {
              const uint32_t n = stage_chunks(c);
#ifdef NVFP4_SM90_RING_CHECK
              reinterpret_cast<volatile uint32_t*>(ready_at(s))[1] = g;
#endif
              if (C::kCopyThreads > 1 && (!C::kLaneCopies || lane == 0)) mbar_arrive_expect_tx(full_at(s), stage_a_bytes(n));
              if constexpr (C::kA3d) {
                if (lane == 0) a_box(s, mt, c);
              } else {
                each_copy(n, [&](uint32_t k) { a_tile(s, mt, c, k); });
              }
            }
          }
        }
      }
    } else if (tid >= 32 && tid < 32 + (KS > 1 ? C::kGroup : P)) {
      if constexpr (KS > 1) {
        // K-split: lane l tests ring index g = r * kGroup + l in round r, so a round is one slot
        // group and the tests keep up with any number of chunk-sum warpgroups (a round costs one
        // chain of dependent instructions whatever its width; rounds of KS chunks held the K-split
        // at one chunk per ~320 ns with KS = 2, 2026-12-03 traces, results v11). The running
        // minimum of La + Lb that each test takes is the minimum over the tile's chunks before it:
        // a prefix minimum across the lanes, restarted where a tile starts, plus a carry.
        // The lanes read the chunk's two tile records (the pre-pass's and the prepacked weight
        // block's) from global memory, a round ahead, and hold no stage: a stage is the chunk-sum
        // warpgroup's alone.
        const int l = tid - 32;
        const uint32_t lanes = (1u << C::kGroup) - 1u;
        wait_prerequisites();  // the pre-pass's records
        // The chunk whose records the lane loads next (fg, its ring index; fc, its chunk; ft, the
        // CTA's tile ordinal; fmt / fnt, that tile's coordinates), stepped by kGroup chunks without
        // a division (three per round took ~120 of the round's ~280 instructions) and held at
        // g_last past it (a lane past the CTA's last chunk reloads that chunk's records and sits
        // its rounds out), so that every load has an address and none sits behind a branch.
        uint32_t fg = static_cast<uint32_t>(l) < g_last ? static_cast<uint32_t>(l) : g_last, fc = fg % C_, ft = fg / C_, fmt, fnt;
        tile_coords(blockIdx.x + ft * gridDim.x, mtiles, ntiles, fmt, fnt);
        auto advance = [&]() {
          if (fg + C::kGroup > g_last) return;
          fg += C::kGroup;
          fc += C::kGroup;
          if (fc >= C_) {
            do {
              fc -= C_;
              ++ft;
            } while (fc >= C_);
            tile_coords(blockIdx.x + ft * gridDim.x, mtiles, ntiles, fmt, fnt);
          }
        };
        // The records as loaded words, taken apart only in the round that uses them: as TileRec, ptxas
        // took their 16-bit fields out right after the loads, and the lane waited for its loads there
        // in every round (the SASS of results v36 r1; 4.7-13 % faster without, r3).
        auto fetch = [&](RecWords& ra, RecWords& rw) {
          ra = load_rec_words(reinterpret_cast<const uint8_t*>(token_record(fc, fmt)));
          rw = load_rec_words(weight_block(fc, fnt) + kWBlockTile);
        };
        RecWords ra, rw;
        fetch(ra, rw);
        int carry = hopper::kNoRunLo;
        for (uint32_t g0 = 0; g0 <= g_last; g0 += C::kGroup) {
          const uint32_t g = g0 + l, c = fc;  // c: the chunk of the records in ra, rw (g's, when active)
          const bool active = g <= g_last;
          hopper::TileChunk a{}, w{};
          int lo = hopper::kNoRunLo;
          if (active) {
            a = tile_chunk(ra);
            w = tile_chunk(rw);
            if (a.lo != hopper::kNoScale && w.lo != hopper::kNoScale) lo = a.lo + w.lo;
          }
          advance();
          fetch(ra, rw);  // the next round's, in flight through this round
          // head: the lane where this lane's tile starts in the round (-1: before the round).
          int head = active && c == 0 ? l : -1;
#pragma unroll
          for (int d = 1; d < C::kGroup; d <<= 1) {
            const int o = __shfl_up_sync(lanes, head, d);
            if (l >= d && o > head) head = o;
          }
          int incl = lo;  // min over lanes head..l (0..l when the tile started before the round)
#pragma unroll
          for (int d = 1; d < C::kGroup; d <<= 1) {
            const int o = __shfl_up_sync(lanes, incl, d);
            if (l - d >= head && l >= d && o < incl) incl = o;
          }
          int before = __shfl_up_sync(lanes, incl, 1);  // min over lanes head..l-1
          if (l == 0 || l - 1 < head) before = hopper::kNoRunLo;
          int run_lo = head < 0 && carry < before ? carry : before;
          const int last_incl = __shfl_sync(lanes, incl, C::kGroup - 1), last_head = __shfl_sync(lanes, head, C::kGroup - 1);
          carry = last_head >= 0 ? last_incl : (last_incl < carry ? last_incl : carry);
          if (active) {
            // Into chunk g's slot, next to its sums: the applier waits for the group, not per chunk.
            const hopper::TileVerdict t = hopper::tile_prepare(a, w, run_lo, kAccShift);
            const uint32_t gi = g / C::kGroup, b = gi % C::kGroups;
            mbar_wait(&sum_empty[b], ((gi / C::kGroups) & 1u) ^ 1u);
            slot_v[g % C::kSlots] = Verdict{t.pre_ok ? 1u : 0u, t.acc_limit, t.inc, run_lo};
            mbar_arrive_n(&sum_full[b], group_arrivals(g));  // releases the verdict to the applier
            if (l == 0) trace(1, g);
          }
        }
      } else {
        // The verdict warp: lane q runs warpgroup q's tile test for every stage as soon as its
        // records land, so the consumers read one 16-byte verdict instead of running the test.
        const int q = tid - 32, rb = q % RW, tb = q / RW;
        RingPos pos;
        uint32_t gt = 0;
        for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
          uint32_t mt, nt;
          tile_coords(unit_tile(u), mtiles, ntiles, mt, nt);
          const bool on = nt * RW + rb < nblocks;
          int run_lo = hopper::kNoRunLo;
          for (uint32_t c = 0; c < C_; ++c, pos.advance(stages)) {
            const int s = pos.stage;
            mbar_wait(full_at(s), pos.phase);
            uint8_t* st = smem + s * C::kBytes;
            Verdict v{0, 0.0f, 0.0f, 0};
            if (on) {
              const hopper::TileVerdict t = hopper::tile_prepare(tile_chunk(load_tile_rec(st + C::kT + tb * sizeof(TileRec))),
                                                                 tile_chunk(load_tile_rec(st + C::kW + rb * kWBlockBytes + kWBlockTile)),
                                                                 run_lo, kAccShift);
              v = Verdict{t.pre_ok ? 1u : 0u, t.acc_limit, t.inc, run_lo};
            }
            *reinterpret_cast<Verdict*>(st + C::kV + 16 * q) = v;
            mbar_arrive(ready_at(s));  // each lane releases its own write
            if (q == 0) trace(1, gt);
            ++gt;
          }
        }
      }
    }
    return;
  }

  // Otherwise the launch bound's share suffices; with KS > 1 only the applier (warpgroup 1) asks.
  if constexpr (C::kRealloc) {
    if (KS == 1 || wg == 1) regs_acquire<C::kConsumerRegs>();
  }
  constexpr int NH = C::NH, BN = C::BN, RH = C::RH;
  // this warpgroup's row block and token block in the tile (K-split: one tile, both 0)
  const int q = KS == 1 ? wg - 1 : 0, rb = q % RW, tb = q / RW;
  const int warp = tid / 32, lane = tid % 32, g8 = lane / 4, t = lane % 4;
  const int r0 = 16 * warp + g8;                   // rows r0 and r0 + 8 of the 64-row block
  float acc[NH][RH], ch[RH];
  // The path counters of the two-chain tiles live in shared memory: in registers, ptxas kept four
  // of them and two loop values in local memory inside 128x3x1x2's loop (six LDL/STL per chunk).
  uint32_t r_counters[4] = {0, 0, 0, 0};
  constexpr int stride = C::NH == 2 ? C::kThreads : 1;  // counter i at counters[i * stride]
  uint32_t* const counters = C::NH == 2 ? shared_counters<C::kThreads>() + threadIdx.x : r_counters;
  uint32_t &slow_steps = counters[0], &tile_misses = counters[stride], &group_misses = counters[2 * stride],
           &chunk_steps = counters[3 * stride];
  slow_steps = tile_misses = group_misses = chunk_steps = 0;
  RingPos pos;
  __shared__ uint32_t wg_max[2][4][4];  // [buffer][consumer warpgroup][warp]: wg_abs_max's exchange
#ifdef NVFP4_SM90_TRIP_PHASES
  __shared__ unsigned long long trip_ph[4][4][6];  // [consumer warpgroup][warp][bound, group test, element steps, failing lanes, record, sink]
#endif
  int wg_max_buf = 0;

  // The fragments of the four K blocks of the chunk in stage st.
  uint32_t frag[4][4];
  // A thread's share of a weight block: its 16 bytes of codes and its two rows' eight multipliers.
  struct WWords {
    uint4 wc, wm;
  };
  auto load_words = [&](const uint8_t* st) {
    const uint8_t* wb = st + C::kW + rb * kWBlockBytes;
    return WWords{*reinterpret_cast<const uint4*>(wb + kWBlockCodes + tid * 16),
                  *reinterpret_cast<const uint4*>(wb + row_multipliers_offset(r0))};  // rows r0, r0 + 8: tid / 4's pair
  };
  auto decode_words = [&](const WWords& w, uint32_t(&f)[4][4]) {
    const __half2 s0_01 = as_h2(w.wm.x), s0_23 = as_h2(w.wm.y), s1_01 = as_h2(w.wm.z), s1_23 = as_h2(w.wm.w);
    const uint32_t words[4] = {w.wc.x, w.wc.y, w.wc.z, w.wc.w};
#pragma unroll
    for (int j2 = 0; j2 < 4; ++j2) {
      const __half2 a0 = j2 < 2 ? s0_01 : s0_23, a1 = j2 < 2 ? s1_01 : s1_23;
      decode_word(words[j2], (j2 & 1) ? __high2half2(a0) : __low2half2(a0), (j2 & 1) ? __high2half2(a1) : __low2half2(a1),
                  f[j2]);
    }
  };
  auto decode_into = [&](const uint8_t* st, uint32_t(&f)[4][4]) { decode_words(load_words(st), f); };
  auto decode_stage = [&](const uint8_t* st) { decode_into(st, frag); };
  // Ring stage p's bytes.
  auto stage_ptr = [&](const RingPos p) { return smem + p.stage * C::kBytes; };
  // The A descriptor of this warpgroup's tokens in stage p (addresses in 16-byte units): stage 0's
  // plus p's offset, a 32-bit add (the start-address field cannot carry, desc_add), not rebuilt
  // from the stage's address with its mask and shift each chunk. With the stage's barriers side by
  // side (kBarStride), 7-12 fewer instructions per warp and chunk in every one-chain hot loop
  // (16x3x1x1 122 -> 110, 128x2x1x1 186 -> 175) and 0.5-4 % faster at M = 16-4096 (results v32 r1,
  // an H100); in the K-split chunk-sum loop (16x1x1x1x2 481 -> 455 per stage) and the two-chain
  // loop (128x3x1x2: qkv at M = 128 2.9 % faster) too (v32 r2).
  static_assert(C::kBytes % 16 == 0, "a stage starts on a 16-byte unit");
  const uint64_t desc_stage0 = desc_k_major_sw128(smem_addr(smem + C::kA + tb * BM * 128));
  auto stage_desc = [&](const RingPos p) { return desc_add(desc_stage0, static_cast<uint32_t>(p.stage) * (C::kBytes / 16)); };
  // This warpgroup's verdict in stage p (one 16-byte load).
  auto verdict_at = [&](const RingPos p) { return *reinterpret_cast<const uint4*>(stage_ptr(p) + C::kV + 16 * q); };
  // One chain (BN tokens of A at desc) into d: four MMAs from a zero accumulator, +32 bytes per k16.
  auto issue_with = [&](uint32_t(&f)[4][4], uint64_t desc, float(&d)[RH]) {
    wgmma_fence();
    Wgmma<BN>::mma_first(d, f[0], desc);
#pragma unroll
    for (int j = 1; j < 4; ++j) Wgmma<BN>::mma(d, f[j], desc_add(desc, 2 * j), true);
    wgmma_commit();
  };
  auto issue = [&](uint64_t desc, float(&d)[RH]) { issue_with(frag, desc, d); };

  if constexpr (KS > 1) {
    if (wg >= 2) {
      // Chunk-sum warpgroup j: the chunks c = j (mod KS) of every tile, each into its slot. Its
      // chunks depend on no other chunk, so the KS warpgroups decode and multiply side by side.
      const uint32_t j = static_cast<uint32_t>(wg - 2);
      // Hands chunk g's sums to the applier (slot g mod kSlots): waits for the slot's group to be
      // free (wait), stores, and arrives on the group's sum_full with count n (arrive).
      // One wait and one arrival per stage serve all its chunks where they share a slot group (the
      // applier takes a group only whole, so a chunk's sums gain nothing by arriving earlier).
      auto store_sums = [&](uint32_t g, const float(&sums)[RH], bool wait, bool arrive, uint32_t n) {
        const uint32_t gi = g / C::kGroup, b = gi % C::kGroups;
        if (wait) mbar_wait(&sum_empty[b], ((gi / C::kGroups) & 1u) ^ 1u);
        float4* dst = reinterpret_cast<float4*>(slots + (g % C::kSlots) * C::kSlotBytes);
#pragma unroll
        for (int i4 = 0; i4 < RH / 4; ++i4) dst[i4 * 128 + tid] = make_float4(sums[4 * i4], sums[4 * i4 + 1], sums[4 * i4 + 2], sums[4 * i4 + 3]);
        if (arrive) mbar_arrive_n(&sum_full[b], n);  // releases this thread's stores to the applier's same thread
        trace(4, g);
      };
      // Stages u = j, j + KS, ... of the CTA's sequence (tile u / spt, its stage u % spt), each
      // of up to CPS chunks: the next chunk of the stage is decoded while this one's MMAs run (two
      // fragment buffers; the last decodes itself again rather than branch while MMAs are in
      // flight, which ptxas would serialise, C7518), and the stage is released after its last.
      // A whole two-chunk stage keeps both chunks' MMAs in flight instead (ch2 its second's sums).
      uint32_t frag2[4][4];
      float ch2[RH];
      const uint32_t spt = (C_ + C::CPS - 1) / C::CPS;  // stages per tile
      const uint32_t total = (g_last + 1) / C_ * spt;
      // Chunk k of the stage at st: MMAs from fa, chunk kn decoded into fb, sums to slot g (store_sums' wait, arrive, n).
      auto chunk = [&](const RingPos pu, const uint8_t* st, uint32_t k, uint32_t kn, uint32_t g, uint32_t(&fa)[4][4], uint32_t(&fb)[4][4],
                       bool wait, bool arrive, uint32_t n) {
        trace(2, g);
        issue_with(fa, desc_add(stage_desc(pu), k * (C::kATile / 16)), ch);
        decode_into(st + kn * kWBlockBytes, fb);
        wgmma_wait_all();
        trace(3, g);
        fence_regs(ch);
#pragma unroll
        for (int j2 = 0; j2 < 4; ++j2) fence_regs(fa[j2]);
        store_sums(g, ch, wait, arrive, n);
      };
      RingPos pos_u;
      for (uint32_t i = 0; i < j; ++i) pos_u.advance(stages);
      // With C_ a multiple of CPS every stage is whole and starts at a multiple of CPS, so its
      // chunks share one slot group (kGroup is a multiple of CPS): the four-chunk stages' loop is
      // built twice, with one slot wait and one arrival per stage (kWhole: the 16-token hot loop
      // 460 -> 374 instructions, out and fc2 at M = 8-16 1.7-2.8 % faster, results v43) and with
      // them per chunk. Two-chunk stages keep them per chunk: built with one per stage, ptxas put
      // the 32-token loop's stage coordinates and slot addresses into vector registers after the
      // slot wait, and out and fc2 at M = 24-32 ran 2.7-3.3 % slower (v43).
      auto stage_loop = [&](auto whole) {
        constexpr bool kWhole = decltype(whole)::value;
        static_assert(!kWhole || C::kGroup % C::CPS == 0, "a whole stage at a multiple of CPS lies in one slot group");
        // Chunk k of a stage of n at g: whether it waits for the slot group, whether it arrives and
        // with what count (kWhole: the stage's last chunk, for all the stage's chunks).
        auto wait_at = [&](uint32_t k) { return !kWhole || k == 0; };
        auto arrive_at = [&](uint32_t k, uint32_t n) { return !kWhole || k + 1 == n; };
        auto arrivals_at = [&](uint32_t g, uint32_t k) { return (kWhole ? k : 0u) + group_arrivals(g + k); };
#pragma unroll 1
        for (uint32_t u = j; u < total; u += KS) {
          const uint32_t it = u / spt, c0 = (u - it * spt) * C::CPS, n = kWhole ? static_cast<uint32_t>(C::CPS) : stage_chunks(c0),
                         g = it * C_ + c0;
          mbar_wait(full_at(pos_u.stage), pos_u.phase);
#ifdef NVFP4_SM90_RING_CHECK
          if constexpr (C::CPS > 1) {  // the stamps come from the K-split's copy loop (CPS > 1)
            const uint32_t sw = reinterpret_cast<volatile uint32_t*>(ready_at(pos_u.stage))[0],
                           sa = reinterpret_cast<volatile uint32_t*>(ready_at(pos_u.stage))[1];
            if (sw != u || sa != u) {
              printf("ring check: block %d wg %d thread %d: stage %u (slot %d phase %u) holds w %u a %u\n", blockIdx.x, wg, tid, u,
                     pos_u.stage, pos_u.phase, sw, sa);
              __trap();
            }
          }
#endif
          const uint8_t* st = stage_ptr(pos_u);
          decode_into(st, frag);
          if (C::CPS == 2 && n == 2) {
            // Chunk 1's weight decoded and its MMAs issued under chunk 0's, and each chunk's sums
            // stored as its own MMAs finish: one MMA latency waited out a stage instead of two.
            // 1.1-2.2 % faster at M = 17-32 on an H100 (results v41, v42); the same for the
            // four-chunk stages (M <= 16) was not faster (v36 r4, v41, v43 r5), so those keep the loop below.
            trace(2, g);
            issue_with(frag, stage_desc(pos_u), ch);
            decode_into(st + kWBlockBytes, frag2);
            trace(2, g + 1);
            issue_with(frag2, desc_add(stage_desc(pos_u), C::kATile / 16), ch2);
            wgmma_wait_all_but_one();  // chunk 0's MMAs done; chunk 1's may still run
            trace(3, g);
            fence_regs(ch);
#pragma unroll
            for (int j2 = 0; j2 < 4; ++j2) fence_regs(frag[j2]);
            store_sums(g, ch, wait_at(0), arrive_at(0, 2), arrivals_at(g, 0));
            wgmma_wait_all();
            trace(3, g + 1);
            fence_regs(ch2);
#pragma unroll
            for (int j2 = 0; j2 < 4; ++j2) fence_regs(frag2[j2]);
            store_sums(g + 1, ch2, wait_at(1), arrive_at(1, 2), arrivals_at(g, 1));
          } else {
#pragma unroll
            for (uint32_t k = 0; k < static_cast<uint32_t>(C::CPS); k += 2) {
              if (k >= n) break;
              chunk(pos_u, st, k, k + 1 < n ? k + 1 : k, g + k, frag, frag2, wait_at(k), arrive_at(k, n), arrivals_at(g, k));
              if (k + 1 >= n) break;
              chunk(pos_u, st, k + 1, k + 2 < n ? k + 2 : k + 1, g + k + 1, frag2, frag, wait_at(k + 1), arrive_at(k + 1, n),
                    arrivals_at(g, k + 1));
            }
          }
          mbar_arrive(empty_at(pos_u.stage));  // this warpgroup's reads of the stage are done
          for (int i = 0; i < KS; ++i) pos_u.advance(stages);
        }
      };
      if constexpr (C::CPS >= 4 && C::kGroup % C::CPS == 0) {
        if (C_ % C::CPS == 0) {
          stage_loop(std::true_type{});
          return;
        }
      }
      stage_loop(std::false_type{});
      return;
    }
  }
  uint32_t g_apply = 0;  // K-split applier: ring index of the next chunk
  wait_prerequisites();  // the fallback and the epilogue read the pre-pass's records and alpha from global memory

  for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
    const uint32_t tile = unit_tile(u);
    uint32_t mt, nt;
    tile_coords(tile, mtiles, ntiles, mt, nt);
    const uint32_t block = nt * RW + rb, tblock = mt * TW + tb;
    // the last row tile may hold fewer blocks than warpgroups (never with KS > 1: one block per
    // tile), and a unit of one row block leaves the tile's other warpgroups out
    if (KS == 1 && (block >= nblocks || (kSplitTail && unit_part(u) != RW && unit_part(u) != static_cast<uint32_t>(rb)))) {
      for (uint32_t c = 0; c < C_; ++c, pos.advance(stages)) {
        mbar_wait(ready_at(pos.stage), pos.phase);
        mbar_arrive(empty_at(pos.stage));
      }
      continue;
    }
#pragma unroll
    for (int h = 0; h < NH; ++h)
#pragma unroll
      for (int i = 0; i < RH; ++i) acc[h][i] = 0.0f;
    float bound = 0.0f;  // >= every |acc| of this thread (scaled units); all are +0 now
    // One-chain tiles (KS = 1): the largest |acc| of the warpgroup, the same in all its threads, so
    // that the running bound stays warpgroup-uniform (it starts at 0 and grows by the verdicts'
    // uniform increments) and the hot loop's test needs no vote. Every thread of the warpgroup calls
    // it (named barrier 1 + q, 128 threads); the two buffers alternate, so a warp can write the next
    // recompute's maximum while another still reads this one's.
    auto wg_abs_max = [&]() {
      uint32_t m = __float_as_uint(abs_max(acc[0]));  // >= 0 or NaN: integer order is float order (NaN above inf)
      m = __reduce_max_sync(0xFFFFFFFFu, m);
      if (lane == 0) wg_max[wg_max_buf][q][warp] = m;
      named_bar_sync(1 + q, 128);
      m = max(max(wg_max[wg_max_buf][q][0], wg_max[wg_max_buf][q][1]), max(wg_max[wg_max_buf][q][2], wg_max[wg_max_buf][q][3]));
      wg_max_buf ^= 1;
      return __uint_as_float(m);
    };

    // Chunk c's verdict vw and, where it fails, the thread-group and per-element tests and the §3
    // model on the chunk's operands (from stage st; the K-split applier, which holds no stage, reads
    // them from global memory); afterwards acc[0] = add.rz(acc[0], cur) is chunk c's §3 step for
    // every element (cur is zeroed where the model applied the step: no accumulator is -0). One chain.
    auto settle = [&](uint32_t c, const uint8_t* st, const uint4 vw, float(&cur)[RH]) {
      const float acc_limit = __uint_as_float(vw.y);
      bool fast = vw.x != 0;
      if (fast && !(bound < acc_limit)) {  // recompute the bound from the accumulators
        if constexpr (KS == 1) bound = wg_abs_max();  // the warpgroup's: the one-chain loop tests it uniformly
        else bound = abs_max(acc[0]);
        fast = bound < acc_limit;
      }
#ifdef NVFP4_SM90_TRIP_PHASES
      if (lane == 0) trip_ph[q][warp][0] = globaltimer();
#endif
      if (!fast) {
        ++tile_misses;
        const int64_t tc = static_cast<int64_t>(tblock) * C_ + c;
        const int64_t a_pitch = p.chunks * 128;
        const Fallback f = KS == 1 ? Fallback{st + C::kA + tb * BM * 128, 0, st + C::kW + rb * kWBlockBytes, p.trec + tc * BM,
                                              p.agroup + tc * 4 + t, static_cast<int>(vw.w), r0, t}
                                   : Fallback{reinterpret_cast<const uint8_t*>(p.a16) + static_cast<int64_t>(tblock) * BM * a_pitch + c * 128,
                                              a_pitch, weight_block(c, block),
                                              p.trec + tc * BM, p.agroup + tc * 4 + t, static_cast<int>(vw.w), r0, t};
        if constexpr (C::kWarpTrip) {
          // fast is warpgroup-uniform: whole warps come here, converged. The token block's records
          // into L1 while the thread-group test waits for its record (warp_element_steps reads them).
          if (lane < BM / 4) prefetch_l1(f.trec + 4 * lane);
#ifdef NVFP4_SM90_TRIP_PHASES
          {
            const uint4 w0 = *reinterpret_cast<const uint4*>(f.group);
            const uint32_t v = __reduce_or_sync(0xFFFFFFFFu, w0.x | w0.y | w0.z | w0.w);  // every lane's load done
            if (lane == 0) {
              trip_ph[q][warp][5] = v;
              trip_ph[q][warp][4] = globaltimer();
            }
          }
#endif
          const bool held = group_holds(f, abs_max(acc[0]));  // if so, the caller's add.rz(acc, cur) is the step
          group_misses += held ? 0u : 1u;
#ifdef NVFP4_SM90_TRIP_PHASES
          {
            const uint32_t failing = __popc(__ballot_sync(0xFFFFFFFFu, !held));
            if (lane == 0) {
              trip_ph[q][warp][1] = globaltimer();
              trip_ph[q][warp][3] = failing;
            }
          }
#endif
          if (__any_sync(0xFFFFFFFFu, !held))
            slow_steps += warp_element_steps<RH, BN, true>(held, f, acc[0], cur, scratch + (q * 4 + warp) * C::R);  // NH = 1: RH = R
#ifdef NVFP4_SM90_TRIP_PHASES
          __syncwarp();
          if (lane == 0) trip_ph[q][warp][2] = globaltimer();
#endif
        } else if (!group_holds(f, abs_max(acc[0]))) {  // else the caller's add.rz(acc, cur) is the step
          ++group_misses;
          float la_mem[C::R], lc_mem[C::R];
          float* const la = opaque(la_mem);
          float* const lc = opaque(lc_mem);
#pragma unroll
          for (int i2 = 0; i2 < RH; ++i2) {
            la[i2] = acc[0][i2];
            lc[i2] = cur[i2];
          }
          slow_steps += element_steps<C::R, BN>(la, lc, f);
#pragma unroll
          for (int i2 = 0; i2 < RH; ++i2) {
            acc[0][i2] = la[i2];
            cur[i2] = 0.0f;
          }
        }
      }
    };

    if constexpr (KS > 1) {
      // The applier: the chunks' verdicts and sums from their slots, applied in chunk order (the
      // sequential contract), a slot group at a time: one barrier wait per group, and where the
      // whole group lies in this tile and every verdict holds with the running bound, its chunks
      // are applied as straight-line loads and adds (no per-chunk branch, address or barrier
      // work: the per-chunk step of one chunk at a time held the K-split at ~300 ns per chunk,
      // traces of 2026-12-03, results v11). Otherwise chunk by chunk, with the fallback.
      const float4* const my_sums = reinterpret_cast<const float4*>(slots) + tid;
      uint32_t c = 0;
#pragma unroll 1
      while (c < C_) {
        const uint32_t g = g_apply, gi = g / C::kGroup, b = gi % C::kGroups, s0 = g % C::kSlots;
        if (g % C::kGroup == 0 || c == 0) {  // a group's first chunk, or a tile that starts inside a group waited for before
          if (g % C::kGroup == 0) mbar_wait(&sum_full[b], (gi / C::kGroups) & 1u);
          trace(5, g);
        }
        const uint32_t left = C::kGroup - g % C::kGroup;  // chunks of this group from g on
        bool done = false;
        if (left == C::kGroup && C_ - c >= static_cast<uint32_t>(C::kGroup)) {
          uint4 vw[C::kGroup];
#pragma unroll
          for (int k = 0; k < C::kGroup; ++k) vw[k] = *reinterpret_cast<const uint4*>(slot_v + s0 + k);
          float bk = bound;  // the running bound before chunk k
          bool fast = true;
#pragma unroll
          for (int k = 0; k < C::kGroup; ++k) {
            fast = fast && vw[k].x != 0 && bk < __uint_as_float(vw[k].y);
            bk = __fadd_ru(bk, __uint_as_float(vw[k].z));
          }
          if (fast) {
#pragma unroll
            for (int k = 0; k < C::kGroup; ++k) {
              const float4* src = my_sums + (s0 + k) * (C::kSlotBytes / 16);
#pragma unroll
              for (int i4 = 0; i4 < RH / 4; ++i4) {
                const float4 v = src[i4 * 128];
                acc[0][4 * i4] = __fadd_rz(acc[0][4 * i4], v.x);
                acc[0][4 * i4 + 1] = __fadd_rz(acc[0][4 * i4 + 1], v.y);
                acc[0][4 * i4 + 2] = __fadd_rz(acc[0][4 * i4 + 2], v.z);
                acc[0][4 * i4 + 3] = __fadd_rz(acc[0][4 * i4 + 3], v.w);
              }
            }
            mbar_arrive(&sum_empty[b]);  // after the loads (release)
            bound = bk;
            trace(7, g + C::kGroup - 1);
            g_apply += C::kGroup;
            c += C::kGroup;
            done = true;
          }
        }
        if (!done) {
          // One chunk: the verdict, the bound, the fallback where they fail.
          const uint4 vw = *reinterpret_cast<const uint4*>(slot_v + s0);
          const float4* src = my_sums + s0 * (C::kSlotBytes / 16);
#pragma unroll
          for (int i4 = 0; i4 < RH / 4; ++i4) {
            const float4 v = src[i4 * 128];
            ch[4 * i4] = v.x;
            ch[4 * i4 + 1] = v.y;
            ch[4 * i4 + 2] = v.z;
            ch[4 * i4 + 3] = v.w;
          }
          if (g % C::kGroup == C::kGroup - 1 || g == g_last) mbar_arrive(&sum_empty[b]);  // the group is loaded
          trace(6, g);
          settle(c, nullptr, vw, ch);
#pragma unroll
          for (int i2 = 0; i2 < RH; ++i2) acc[0][i2] = __fadd_rz(acc[0][i2], ch[i2]);
          bound = __fadd_ru(bound, __uint_as_float(vw.z));
          trace(7, g);
          ++g_apply;
          ++c;
        }
      }
    } else if constexpr (NH == 1) {
      // One chain per chunk:
      //   c + 1's ready wait and weight words | wait MMA(c) | verdict test | [release c] |
      //   apply c (add.rz), decode c + 1, issue MMA(c + 1) | [release c]
      // The hot loop holds no fallback: a chunk whose verdict does not hold with the running bound
      // leaves it for the step below the loop, which recomputes the bound (warpgroup-wide), runs
      // settle's fallback where the verdict still fails, and comes back. The test is
      // warpgroup-uniform (the verdict is the warpgroup's, the bound too), so no vote is needed
      // for the branch that all four warps must take alike (wgmma is warpgroup-collective). With
      // the fallback inlined in the loop (up to 2026-12-04), every step ran slower: ptxas laid its
      // ~3,000 instructions between the hot ones and scheduled around them (results v16: without
      // its code the loop ran 8-15 % faster; this form is 3-6 % faster at M >= 32, bit-identical).
      // One chunk-sum buffer: the adds of chunk c precede the issue of c + 1 into the same
      // registers. ptxas had put most of them there anyway (all 32 at 64x1x2x1, 35 of 64 at
      // 128x2x1x1, results v15), and a second buffer, carried around the loop's exit, made it copy
      // the sums every chunk and, at 128 tokens, spill inside the loop.
      // Chunk c + 1's ready wait and its weight words (two 16-byte shared loads into registers of
      // their own, not the fragments, which chunk c's MMAs still read) come before chunk c's MMA
      // wait, so after it only the decode's arithmetic stands between the adds and the next issue:
      // 0.5-6 % faster on every one-chain tile, 5.4-5.8 % at M = 4096 (results v28 r1, an H100).
      // Decoding the codes' bytes before the wait as well (only the scale multiply after it) was
      // 0-4 % slower (more registers live across the wait; v28 r1).
      // A second fragment buffer, chunk c + 2 decoded right after MMA(c + 1)'s issue, so that only
      // the verdict test and the adds stand between a wait and the next issue: bit-identical, no
      // local memory, and slower on every tile it changed: 7-14 % at 64-128 tokens but 64x3x1x1
      // (4.7 %), 3.9-4.7 % on 16x3x1x1 and 32x3x1x1 (results v45, an H100; the diff is there).
      // The ready wait for chunk c + 2 while chunk c + 1's MMAs run (kEarlyReady), instead of before
      // chunk c's MMA wait. Only 128x1x1x1 gains from it (attn_out_proj and mlp_fc2 at M = 128 7-8 %
      // faster); every other one-chain tile ran 1-5.5 % slower with it (results v21 r10). The lone
      // 96-token warpgroup (96x1x1x1, results v31 r6) was built with it, as 128x1x1x1's counterpart.
      // With three copy threads on the lone 48- and 64-token warpgroups it still made them 3.1-4.5 %
      // slower (results v44 r3).
      constexpr bool kEarlyReady = BM >= NVFP4_SM90_EARLY_READY_BM && RW == 1 && TW == 1;
      // A chunk's stage released as soon as its verdict holds (its MMAs, which read A', are done and
      // the fallback will not read it), before the adds, so the copies refill it sooner. Kept where
      // it measured faster on top of the early loads (results v28 r1): the tiles of up to 32 tokens
      // (1.3-3.5 %) and 128x1x1x1 (1.4-2.9 %); 128x2x1x1 ran 0.6-0.9 % and 64x1x1x1 0.7-0.9 % slower
      // with it, 64x2x1x1 and 64x3x1x1 within 0.7 % (again in results v44 r3: 64x1x1x1 and 48x1x1x1
      // 0.4-2.1 % slower, the tiles of several warpgroups within 0.7 %).
      constexpr bool kEarlyRelease = BM <= NVFP4_SM90_EARLY_RELEASE_BM || kEarlyReady;
      // nx: the stage after pos (chunk c + 1's); nw receives chunk c + 1's weight words.
      auto head = [&](uint32_t c, const RingPos nx, WWords& nw) {  // chunk c's verdict and the wait for its MMAs
        const uint4 vw = verdict_at(pos);
        if (c + 1 < C_) {
          if (!kEarlyReady) mbar_wait(ready_at(nx.stage), nx.phase);
          nw = load_words(stage_ptr(nx));
          trace(5, g_apply + 1);
        }
        wgmma_wait_all();
        trace(3, g_apply);
        trace_wg(q, 0, g_apply);
        return vw;
      };
      // Orders the reads of the sums and the next decode's writes to the fragments after the wait.
      // Not in head: the path that leaves the loop carries ch as the wgmma left it, so that where
      // paths join ptxas finds one value in those registers (a fenced copy on one path and the
      // in-flight one on another made it move registers among the wgmmas and serialise them, C7515).
      auto fence = [&]() {
        fence_regs(ch);
#pragma unroll
        for (int j2 = 0; j2 < 4; ++j2) fence_regs(frag[j2]);
      };
      auto holds = [&](const uint4 vw) { return vw.x != 0 && bound < __uint_as_float(vw.y); };
      auto wait_ready_after = [&](RingPos p) {  // kEarlyReady: the ready wait of the stage after p's
        p.advance(stages);
        mbar_wait(ready_at(p.stage), p.phase);
      };
      // Chunk c applied (its sums in ch are its §3 step), chunk c + 1's MMAs issued from nw, c's stage
      // released (kEarlyRelease: first, its verdict having held or the fallback done with it), pos
      // advanced to nx.
      auto apply_issue = [&](uint32_t c, const uint4 vw, const RingPos nx, const WWords& nw) {
        const int s = pos.stage;
        const bool more = c + 1 < C_;
        if (kEarlyRelease) mbar_arrive(empty_at(s));  // the MMA wait, the verdict and any fallback were its last reads
#pragma unroll
        for (int i2 = 0; i2 < RH; ++i2) acc[0][i2] = __fadd_rz(acc[0][i2], ch[i2]);
        bound = __fadd_ru(bound, __uint_as_float(vw.z));
        if (more) {
          decode_words(nw, frag);
          issue(stage_desc(nx), ch);
          trace_wg(q, 2, g_apply);
        }
        if (!kEarlyRelease) mbar_arrive(empty_at(s));  // every consumer thread (kArrivalsPerWarpgroup)
        trace_wg(q, 3, g_apply);
        trace(7, g_apply++);
        pos = nx;
        if (kEarlyReady && c + 2 < C_) wait_ready_after(pos);
      };
      mbar_wait(ready_at(pos.stage), pos.phase);
      decode_stage(stage_ptr(pos));
      issue(stage_desc(pos), ch);
      if (kEarlyReady && C_ > 1) wait_ready_after(pos);
      uint32_t c = 0;
      // At the top of both loops chunk c's MMAs are in flight into ch, on every path (one pipeline
      // state for ptxas).
#pragma unroll 1
      while (c < C_) {
        uint4 vw;
        WWords nw{};
        RingPos nx;
#pragma unroll 1
        for (; c < C_; ++c) {
          nx = pos;
          nx.advance(stages);
          vw = head(c, nx, nw);
          if (!holds(vw)) break;
          trace_wg(q, 1, g_apply);  // after its MMA wait (event 0), as tools/sm90-trace-summary reads it
          fence();
          apply_issue(c, vw, nx, nw);
        }
        if (c == C_) break;
        wgmma_wait_all();  // nothing is in flight (head waited); says so to ptxas, which does not follow the break
        fence();
#ifdef NVFP4_SM90_CTA_STATS
        const unsigned long long trip_t0 = globaltimer();
        const uint32_t misses0 = tile_misses;
#endif
        settle(c, stage_ptr(pos), vw, ch);
#ifdef NVFP4_SM90_CTA_STATS
        named_bar_sync(1 + q, 128);  // the trip ends with the warpgroup's slowest warp
        if (tid == 0 && tile_misses != misses0) {
          const unsigned int k = atomicAdd(&g_sm90_trip_n, 1u);
          if (k < static_cast<unsigned int>(kStatTrips)) {
            g_sm90_trip[k][0] = blockIdx.x;
            g_sm90_trip[k][1] = q;
            g_sm90_trip[k][2] = tile;
            g_sm90_trip[k][3] = c;
            g_sm90_trip[k][4] = block;
            g_sm90_trip[k][5] = trip_t0;
            g_sm90_trip[k][6] = globaltimer() - trip_t0;
#ifdef NVFP4_SM90_TRIP_PHASES
            unsigned long long g1 = 0, g2 = 0, nf = 0, g4 = 0;
            for (int w = 0; w < 4; ++w) {
              g1 = max(g1, trip_ph[q][w][1]);
              g2 = max(g2, trip_ph[q][w][2]);
              nf += trip_ph[q][w][3];
              g4 = max(g4, trip_ph[q][w][4]);
            }
            const bool stamped = C::kWarpTrip;  // the other tiles' trips (element_steps) stamp nothing: a row of zeros
            g_sm90_trip_ph[k][0] = stamped ? trip_ph[q][0][0] - trip_t0 : 0;
            g_sm90_trip_ph[k][1] = stamped ? g1 - trip_t0 : 0;
            g_sm90_trip_ph[k][2] = stamped ? g2 - trip_t0 : 0;
            g_sm90_trip_ph[k][3] = stamped ? nf : 0;
            g_sm90_trip_ph[k][4] = stamped ? g4 - trip_t0 : 0;
#endif
          }
        }
#endif
        // head waited for the next stage; its words are loaded again rather than carried through settle
        if (c + 1 < C_) nw = load_words(stage_ptr(nx));
        apply_issue(c, vw, nx, nw);
        ++c;
      }
      wgmma_wait_all();  // nothing is in flight here; says so to ptxas before the epilogue reuses registers
    } else {
#pragma unroll 1
      for (uint32_t c = 0; c < C_; ++c, pos.advance(stages)) {
        const int s = pos.stage;
        mbar_wait(ready_at(s), pos.phase);
        const uint8_t* st = stage_ptr(pos);
        const uint8_t* wb = st + C::kW + rb * kWBlockBytes;
        const uint8_t* at = st + C::kA + tb * BM * 128;
        decode_stage(st);
        const uint4 vw = verdict_at(pos);
        const float acc_limit = __uint_as_float(vw.y), inc = __uint_as_float(vw.z);
        bool fast = vw.x != 0;
        if (fast && !(bound < acc_limit)) {  // recompute the bound from the accumulators
          float m = 0.0f;
#pragma unroll
          for (int h = 0; h < NH; ++h) m = max_nan(m, abs_max(acc[h]));
          bound = m;
          fast = bound < acc_limit;
        }
        // Branches on a warp-uniform value only: wgmma.wait_group must run converged.
        const bool warp_fast = __all_sync(0xFFFFFFFFu, fast);
        const uint64_t desc = stage_desc(pos);
        float lc_mem[C::R];  // the chunk sums of a chunk that takes the fallback (local memory)
        float* const lc = opaque(lc_mem);
#pragma unroll
        for (int h = 0; h < NH; ++h) {
          issue(desc_add(desc, h * BN * 128 / 16), ch);  // chain h: tokens h * BN ..
          wgmma_wait_all();
          fence_regs(ch);
          if (warp_fast || fast) {
#pragma unroll
            for (int i = 0; i < RH; ++i) acc[h][i] = __fadd_rz(acc[h][i], ch[i]);
          } else {
#pragma unroll
            for (int i = 0; i < RH; ++i) lc[h * RH + i] = ch[i];
          }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) fence_regs(frag[j]);  // the MMAs read them until the wait
        // A lane whose tile test failed, after every chain: its thread-group test, and where that
        // holds its step, add.rz of its copied sums. Whether it held.
        auto group_step = [&](const Fallback& f) {
          ++tile_misses;
          float amax = 0.0f;
#pragma unroll
          for (int h = 0; h < NH; ++h) amax = max_nan(amax, abs_max(acc[h]));
          const bool held = group_holds(f, amax);
          if (held) {
#pragma unroll
            for (int h = 0; h < NH; ++h)
#pragma unroll
              for (int i = 0; i < RH; ++i) acc[h][i] = __fadd_rz(acc[h][i], lc[h * RH + i]);
          } else {
            ++group_misses;
          }
          return held;
        };
        if constexpr (C::kWarpTrip) {
          if (!warp_fast) {
            // After every chain: only the copies are live across the fallback. The warp's lanes
            // run the failing lanes' elements (warp_element_steps, on all chains' tokens at once).
            const int64_t tc = static_cast<int64_t>(tblock) * C_ + c;
            const Fallback f{at, 0, wb, p.trec + tc * BM, p.agroup + tc * 4 + t, static_cast<int>(vw.w), r0, t};
            if (lane < BM / 4) prefetch_l1(f.trec + 4 * lane);
            const bool held = fast || group_step(f);
            if (__any_sync(0xFFFFFFFFu, !held))
              slow_steps += warp_element_steps<C::R, BN, false>(held, f, *reinterpret_cast<float(*)[C::R]>(&acc[0][0]), lc,
                                                                scratch + (q * 4 + warp) * C::R);
          }
        } else if (!(warp_fast || fast)) {
          // After every chain: only the copies are live across the fallback.
          const int64_t tc = static_cast<int64_t>(tblock) * C_ + c;
          const Fallback f{at, 0, wb, p.trec + tc * BM, p.agroup + tc * 4 + t, static_cast<int>(vw.w), r0, t};
          if (!group_step(f)) {
            float la_mem[C::R];
            float* const la = opaque(la_mem);
#pragma unroll
            for (int h = 0; h < NH; ++h)
#pragma unroll
              for (int i = 0; i < RH; ++i) la[h * RH + i] = acc[h][i];
            slow_steps += element_steps<C::R, BN>(la, lc, f);
#pragma unroll
            for (int h = 0; h < NH; ++h)
#pragma unroll
              for (int i = 0; i < RH; ++i) acc[h][i] = la[h * RH + i];
          }
        }
        bound = __fadd_ru(bound, inc);
        mbar_arrive(empty_at(s));
      }
    }
    chunk_steps += C_;

#ifdef NVFP4_SM90_NO_EPILOGUE
    // Measurement build: no epilogue (what a tile's stores and conversions cost; the output is
    // meaningless). One word per thread keeps the accumulators' adds alive.
    {
      uint32_t x = 0;
#pragma unroll
      for (int h = 0; h < NH; ++h)
#pragma unroll
        for (int i = 0; i < RH; ++i) x ^= __float_as_uint(acc[h][i]);
      if (x == 0x7FC00001u) p.out[tid] = 0;
      if constexpr (KS == 1 && NH == 1) trace_wg(q, 2, g_apply - 1);
      continue;
    }
#endif
    // Epilogue: raw fp32 and bf16_rn(f32_rn(alpha * acc) [+ bias]) (§4, alpha before bf16); the
    // accumulators back to value units (times 2^7, exact).
    const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
    const float up = hopper::pow2f(-kAccShift);
    const int64_t n0 = static_cast<int64_t>(block) * kRowsWG + r0, n1 = n0 + 8;
    const float b0 = (p.bias && n0 < p.n) ? bf16_to_f32(p.bias[n0]) : -0.0f;
    const float b1 = (p.bias && n1 < p.n) ? bf16_to_f32(p.bias[n1]) : -0.0f;
    if (C::kEpiTma && epi_tma) {
      // Through this warpgroup's buffer (Cfg::kEpiTma; the launcher sets epi_tma without raw output,
      // with 8 | n and a 16-byte aligned output): every value converted first, one NaN vote per warp
      // (where a value of the warp is a NaN, bf16_rn for all of them: it keeps NaN payloads, the pair
      // instruction does not), the warp's 16 rows x BM tokens into the buffer by stmatrix (no
      // shuffle, no branch per 8 tokens), one tensor copy. The shuffles' form of the output (below)
      // took ~2 us a tile on an H100 (results v33 r1).
      if constexpr (C::kEpiTma) {
        // [BM tokens][64 rows] bf16, 128 bytes a token; 16-byte unit u of token T at u ^ (T % 8).
        uint8_t* const ebuf = epi + q * (BM * 128);
        if (tid == 0) bulk_wait_read();  // the previous tile's copy has read the buffer
        bool nan = false;
#pragma unroll
        for (int h = 0; h < NH; ++h)
#pragma unroll
          for (int i = 0; i < RH; ++i) {
            acc[h][i] = epilogue_alpha_bias_f32(__fmul_rn(acc[h][i], up), alpha, (i & 2) ? b1 : b0);  // rows n0 / n1
            nan = nan || acc[h][i] != acc[h][i];
          }
        const bool warp_nan = __any_sync(0xFFFFFFFFu, nan);
        named_bar_sync(1 + q, 128);  // the buffer is free
        // Per 16 tokens four 8x8 matrices: tokens 8j.. / 8j + 8.., rows 16 warp + 0..7 / + 8..15. A
        // lane's words are its rows' tokens 2t, 2t + 1 (the wgmma fragment is the stmatrix one), and
        // lane 8k + i gives token row i of matrix k: units 2 warp + (k & 1), swizzled. The two
        // conversions in code of their own (a choice per word left a branch per word).
        const int k = lane / 8, i8 = lane % 8;
        const uint32_t base = smem_addr(ebuf);
        auto put = [&](auto pack) {
#pragma unroll
          for (int h = 0; h < NH; ++h)
#pragma unroll
            for (int j = 0; j < BN / 8; j += 2) {
              const int tok = h * BN + 8 * (j + (k >> 1)) + i8, unit = 2 * warp + (k & 1);
              stmatrix_x4_trans(base + tok * 128 + ((unit ^ i8) << 4), pack(acc[h][4 * j], acc[h][4 * j + 1]),
                                pack(acc[h][4 * j + 2], acc[h][4 * j + 3]), pack(acc[h][4 * j + 4], acc[h][4 * j + 5]),
                                pack(acc[h][4 * j + 6], acc[h][4 * j + 7]));
            }
        };
        if (warp_nan)
          put([](float lo, float hi) { return bf16_rn_pair(lo, hi); });
        else
          put([](float lo, float hi) { return bf16x2_rn_non_nan(lo, hi); });
        fence_proxy_async();         // the stores visible to the tensor copy
        named_bar_sync(1 + q, 128);  // ... of all four warps
        if (tid == 0) {
          tma_store_2d(&tmap_out, ebuf, static_cast<int32_t>(block * kRowsWG), static_cast<int32_t>(tblock * BM));
          bulk_commit();
        }
      }
    } else if (!p.raw && p.n % 4 == 0 && (reinterpret_cast<uintptr_t>(p.out) & 7u) == 0) {
      // Without raw output, with 4 | n and an 8-byte aligned output (warp-uniform), two shuffles per
      // 8 tokens give each lane four consecutive rows of one token: one 8-byte store where there
      // were four 2-byte ones, full 32-byte sectors (a warp writes 16 rows x 8 tokens per j), and
      // bf16_rn by the pair instruction where no value of the warp's j is a NaN.
      const bool odd = (g8 & 1) != 0, upper = (g8 & 2) != 0;
      // This lane's store: token 2t + (g8 & 1) of each 8, rows 16 warp + 8 upper + (g8 & 4) + 0..3.
      const int64_t row = static_cast<int64_t>(block) * kRowsWG + 16 * warp + (upper ? 8 : 0) + (g8 & 4);
      // Lanes g8 and g8 ^ 1 hold rows r and r + 1 (r even): the even lane keeps token 2t, the odd one
      // 2t + 1, and each pairs its row with the partner's, low half the even row (byte selectors).
      const uint32_t sel0 = odd ? 0x1054u : 0x5410u, sel1 = odd ? 0x3276u : 0x7632u;
#pragma unroll
      for (int h = 0; h < NH; ++h)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          float v[2][2];  // [row n0 / n1][token 2t + e], before bf16_rn
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            v[0][e] = epilogue_alpha_bias_f32(__fmul_rn(acc[h][4 * j + e], up), alpha, b0);
            v[1][e] = epilogue_alpha_bias_f32(__fmul_rn(acc[h][4 * j + 2 + e], up), alpha, b1);
          }
          // tok[e]: token 2t + e's rows n0 (low half) and n1, bf16.
          uint32_t tok[2] = {bf16x2_rn_non_nan(v[0][0], v[1][0]), bf16x2_rn_non_nan(v[0][1], v[1][1])};
          const bool nan = v[0][0] != v[0][0] || v[1][0] != v[1][0] || v[0][1] != v[0][1] || v[1][1] != v[1][1];
          if (__any_sync(0xFFFFFFFFu, nan)) {
#pragma unroll
            for (int e = 0; e < 2; ++e) tok[e] = bf16_rn_pair(v[0][e], v[1][e]);
          }
          const uint32_t keep = odd ? tok[1] : tok[0];
          const uint32_t got = __shfl_xor_sync(0xFFFFFFFFu, odd ? tok[0] : tok[1], 4);
          const uint32_t w0 = __byte_perm(keep, got, sel0), w1 = __byte_perm(keep, got, sel1);  // rows r, r + 1 of n0 / n1
          // Lanes g8 and g8 ^ 2 (row pairs p, p + 2): the lower one keeps the n0 half, the upper one n1.
          const uint32_t got2 = __shfl_xor_sync(0xFFFFFFFFu, upper ? w0 : w1, 8);
          const int64_t m = static_cast<int64_t>(tblock) * BM + h * BN + 8 * j + 2 * t + (odd ? 1 : 0);
          if (m < p.m && row < p.n)  // 4 | n and 4 | row: the four rows are all in
            *reinterpret_cast<uint2*>(p.out + m * p.n + row) = upper ? make_uint2(got2, w1) : make_uint2(w0, got2);
        }
    } else {  // element by element: the fp32 copy, or n not a multiple of 4
#pragma unroll
      for (int h = 0; h < NH; ++h)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t m = static_cast<int64_t>(tblock) * BM + h * BN + 8 * j + 2 * t + e;
          if (m >= p.m) continue;
          const float v0 = __fmul_rn(acc[h][4 * j + e], up), v1 = __fmul_rn(acc[h][4 * j + 2 + e], up);
          if (n0 < p.n) {
            if (p.raw) p.raw[m * p.n + n0] = v0;
            p.out[m * p.n + n0] = epilogue_alpha_before_bf16(v0, alpha, b0);
          }
          if (n1 < p.n) {
            if (p.raw) p.raw[m * p.n + n1] = v1;
            p.out[m * p.n + n1] = epilogue_alpha_before_bf16(v1, alpha, b1);
          }
        }
    }
    // The tile's last chunk has no event 2 (nothing issued after it): there the epilogue's end.
    if constexpr (KS == 1 && NH == 1) trace_wg(q, 2, g_apply - 1);
  }
  if (C::kEpiTma && epi_tma && tid == 0) bulk_wait_all();  // the output written before the CTA ends
#ifdef NVFP4_SM90_CTA_STATS
  if (tid == 0 && blockIdx.x < kStatCtas) {
    atomicMax(&g_sm90_cta[blockIdx.x][1], globaltimer());
    atomicAdd(&g_sm90_cta[blockIdx.x][2], static_cast<unsigned long long>(chunk_steps / C_));
  }
#endif
  static_assert(Sm90Gemm::kCounts == 4, "the four path counters below are the ones Sm90Gemm::counts names");
  if (p.counts) {
    atomicAdd(&p.counts[0], static_cast<unsigned long long>(chunk_steps) * C::R);
    atomicAdd(&p.counts[1], static_cast<unsigned long long>(tile_misses));
    atomicAdd(&p.counts[2], static_cast<unsigned long long>(group_misses));
    atomicAdd(&p.counts[3], static_cast<unsigned long long>(slow_steps));
  }
#endif
}

#ifdef NVFP4_SM90_TRACE
// A trace file: the header line, then per chunk g (fewer than `chunks` and kTraceChunks) g and each of
// the `rows` rows' stamp ([rows][kTraceChunks]) in ns since t0, -1 where a row has none (or t0 is
// missing). tools/sm90-trace-summary reads both files this writes.
void write_trace(const std::string& path, const std::string& header, const unsigned long long* stamps, int rows,
                 unsigned long long t0, int64_t chunks) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  std::fprintf(f, "# %s\n", header.c_str());
  for (int g = 0; g < kTraceChunks && g < chunks; ++g) {
    std::fprintf(f, "%d", g);
    for (int r = 0; r < rows; ++r) {
      const unsigned long long v = stamps[static_cast<size_t>(r) * kTraceChunks + g];
      std::fprintf(f, " %lld", v && t0 ? static_cast<long long>(v - t0) : -1LL);
    }
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}
#endif

// The bf16 output [m][n] for the epilogue's tensor copies: boxes of 64 rows x box_tokens tokens,
// the 128-byte swizzle (as the buffers are written); the map clips what lies past m or n.
Result<CUtensorMap> make_out_map(uint16_t* out, int64_t m, int64_t n, int box_tokens) {
  return tensor_map_2d_sw128(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, out, static_cast<uint64_t>(n), static_cast<uint64_t>(m),
                             static_cast<uint64_t>(n * 2), kRowsWG, static_cast<uint32_t>(box_tokens), CU_TENSOR_MAP_L2_PROMOTION_NONE,
                             "", "the output");
}

// A' [rows][k64] fp16: boxes of one chunk (64 values) x box_rows tokens.
Result<CUtensorMap> make_a_map(const uint16_t* a16, int64_t rows, int64_t k64, int box_rows) {
  return tensor_map_2d_sw128(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a16, static_cast<uint64_t>(k64), static_cast<uint64_t>(rows),
                             static_cast<uint64_t>(k64 * 2), 64, static_cast<uint32_t>(box_rows), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                             "", "the A' operand");
}
// The same A' seen as [chunk][rows][64] (tensor_map_planes_sw128): boxes of box_chunks chunks x
// box_rows tokens, a multi-chunk K-split stage's A' tiles in one copy (Cfg::kA3d).
Result<CUtensorMap> make_a_planes_map(const uint16_t* a16, int64_t rows, int64_t chunks, int box_rows, int box_chunks) {
  return tensor_map_planes_sw128(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a16, 64, static_cast<uint64_t>(rows), static_cast<uint64_t>(chunks),
                                 static_cast<uint64_t>(chunks * 128), 2, static_cast<uint32_t>(box_rows), static_cast<uint32_t>(box_chunks),
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "", "the A' operand");
}

// Tiles of configuration c on `tokens` tokens and n weight rows: token tiles of bm x tw tokens times
// row tiles of rw 64-row blocks (the kernel's tile order, tile_coords).
int64_t tile_count(int64_t tokens, int64_t n, const Config& c) {
  const int64_t nb = (n + kRowsWG - 1) / kRowsWG, tt = static_cast<int64_t>(c.bm) * c.tw;
  return (tokens + tt - 1) / tt * ((nb + c.rw - 1) / c.rw);
}

template <class C>
Status launch_cfg(const Sm90Gemm& p, int sm_count, cudaStream_t stream) {
  if (p.mp % (C::BM * C::TW) != 0) return invalid_argument("sm90 kernel: padded rows are not a multiple of the token tile");
  if (!C::kSlotWaitsSafe)
    return unsupported("sm90 kernel: this build's K-split stages (NVFP4_SM90_KS_STAGE_CHUNKS) are too long for " +
                       Config{C::BM, C::RW, C::TW, C::NH, C::KS}.name() + "'s slot groups");
  const int64_t nblocks = (p.n + kRowsWG - 1) / kRowsWG;
  const int64_t tiles = tile_count(p.mp, p.n, Config{C::BM, C::RW, C::TW, C::NH, C::KS});
  if (tiles > 0x7FFFFFFF / kRasterGroup || p.chunks * nblocks > 0x7FFFFFFF || p.mp / C::BM * p.chunks > 0x7FFFFFFF)
    return invalid_argument("sm90 kernel: problem too large for one launch (more than 2^31 tiles or records)");
  NVFP4_ASSIGN_OR_RETURN(CUtensorMap map, C::kA3d ? make_a_planes_map(p.a16, p.mp, p.chunks, C::BM * C::TW, C::CPS)
                                                  : make_a_map(p.a16, p.mp, p.chunks * 64, C::BM * C::TW));
  int optin = 0, dev = 0;
  NVFP4_CUDA_TRY(cudaGetDevice(&dev));
  NVFP4_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  // 256 bytes for the static shared memory (wg_max), the two-chain tiles' path counters, the
  // one-chain tiles' output buffers.
  const int budget = optin - kSmemAlign - 256 - C::kCounterBytes - C::kEpiBytes - C::kSlotArea - C::kScratchBytes;
  const int cap = max_stages(C::kStageCap), fit = budget / (C::kBytes + 24);
  int stages = std::min(cap, fit);
  // For a refusal only (not built on every launch): which bound left too few, the shared memory or
  // a NVFP4_SM90_MAX_STAGES cap (a tuning run's).
  auto why = [&] {
    return fit <= cap ? std::string("not enough shared memory for") : "NVFP4_SM90_MAX_STAGES=" + std::to_string(cap) + " allows fewer than";
  };
  if (stages < 2) return unsupported("sm90 kernel: " + why() + " two pipeline stages");
  // K-split: chunk-sum warpgroup j takes stages u = j (mod KS), in ring slot u mod stages. A whole
  // number of slots per warpgroup makes each slot one warpgroup's, so the slot's previous round is
  // a stage the waiting warpgroup consumed itself, and its parity wait on the slot cannot pass a
  // round early. With slots shared (32x1x1x1x4: 7 slots, 4 warpgroups) a warpgroup reached its
  // next stage while another warpgroup's stage in the same slot, one round older, had not landed
  // yet, passed the wait on the round before and read the slot as its copy landed: wrong bits in
  // one tile in every run (results v14 r7, r8: a -DNVFP4_SM90_RING_CHECK build found it).
  // Two slots per warpgroup at least, so its next stage's copy runs while it works on one. The
  // copy warps that take stages in turn (Cfg::kStageWarps) wait on their slots the same way, so the
  // slots are a whole number per copy warp too (with three copy warps on 16x1x1x1x2's four slots
  // racecheck found a copy written into a slot still being read, results v37 r3).
  if (C::KS > 1) {
    const int per = C::kStageWarps > 1 ? std::lcm(C::KS, C::kStageWarps) : C::KS;
    stages -= stages % per;
    if (stages < 2 * C::KS || stages < per)
      return unsupported("sm90 kernel: " + why() + " two ring stages per K-split warpgroup" +
                         (per > C::KS ? " and a whole number per copy warp" : "") + " (" +
                         Config{C::BM, C::RW, C::TW, C::NH, C::KS}.name() + ")");
  }
  const int smem = stages * C::kBytes + C::kEpiBytes + C::kSlotArea + C::kScratchBytes + 3 * stages * 8 + kSmemAlign;
  // The bf16 output by tensor copies (Cfg::kEpiTma) where no fp32 copy is asked for and the map can
  // describe it: rows of 16-byte multiples (8 | n), a 16-byte aligned start.
  const bool epi_tma = C::kEpiTma && p.out && !p.raw && p.n % 8 == 0 && (reinterpret_cast<uintptr_t>(p.out) & 15u) == 0;
  CUtensorMap omap{};
  if (epi_tma) {
    NVFP4_ASSIGN_OR_RETURN(omap, make_out_map(p.out, p.m, p.n, C::BM));
  }
  NVFP4_CUDA_TRY(cudaFuncSetAttribute(sm90_gemm_nvfp4<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int grid = static_cast<int>(std::min<int64_t>(tiles, sm_count));
#ifdef NVFP4_SM90_TRACE
  void* tr = nullptr;
  NVFP4_CUDA_TRY(cudaGetSymbolAddress(&tr, g_sm90_trace));
  NVFP4_CUDA_TRY(cudaMemsetAsync(tr, 0, sizeof(g_sm90_trace), stream));
  void* trw = nullptr;
  NVFP4_CUDA_TRY(cudaGetSymbolAddress(&trw, g_sm90_wg_trace));
  NVFP4_CUDA_TRY(cudaMemsetAsync(trw, 0, sizeof(g_sm90_wg_trace), stream));
#endif
#ifdef NVFP4_SM90_CTA_STATS
  void *sc = nullptr, *st = nullptr, *sn = nullptr;
  NVFP4_CUDA_TRY(cudaGetSymbolAddress(&sc, g_sm90_cta));
  NVFP4_CUDA_TRY(cudaGetSymbolAddress(&st, g_sm90_trip));
  NVFP4_CUDA_TRY(cudaGetSymbolAddress(&sn, g_sm90_trip_n));
  NVFP4_CUDA_TRY(cudaMemsetAsync(sc, 0, sizeof(g_sm90_cta), stream));
  NVFP4_CUDA_TRY(cudaMemsetAsync(sn, 0, sizeof(g_sm90_trip_n), stream));
#endif
  // Right after the pre-pass (after_prepass), a programmatic dependent launch: the kernel starts while
  // the pre-pass runs and waits for it where it first needs its outputs (griddepcontrol.wait).
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(static_cast<unsigned>(grid));
  lc.blockDim = dim3(C::kThreads);
  lc.dynamicSmemBytes = static_cast<size_t>(smem);
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  lc.attrs = attr;
  lc.numAttrs = p.after_prepass ? 1 : 0;
  NVFP4_CUDA_TRY(cudaLaunchKernelEx(&lc, sm90_gemm_nvfp4<C>, map, p, stages, omap, epi_tma ? 1 : 0));
  NVFP4_CUDA_LAUNCH_TRY("sm90_gemm_nvfp4");
#ifdef NVFP4_SM90_CTA_STATS
  if (const char* path = std::getenv("NVFP4_SM90_CTA_STATS_OUT")) {
    static unsigned long long hc[kStatCtas][3], ht[kStatTrips][kTripFields];
    unsigned int n = 0;
    NVFP4_CUDA_TRY(cudaStreamSynchronize(stream));
    NVFP4_CUDA_TRY(cudaMemcpy(hc, sc, sizeof hc, cudaMemcpyDeviceToHost));
    NVFP4_CUDA_TRY(cudaMemcpy(ht, st, sizeof ht, cudaMemcpyDeviceToHost));
    NVFP4_CUDA_TRY(cudaMemcpy(&n, sn, sizeof n, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < grid && b < kStatCtas; ++b) t0 = std::min(t0, hc[b][0]);
    if (FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "# %s grid %d tiles %lld: cta start_ns end_ns warpgroup_tiles (ns since the first CTA's start)\n",
                   Config{C::BM, C::RW, C::TW, C::NH, C::KS}.name().c_str(), grid, static_cast<long long>(tiles));
      for (int b = 0; b < grid && b < kStatCtas; ++b)
        std::fprintf(f, "%d %lld %lld %llu\n", b, static_cast<long long>(hc[b][0] - t0), static_cast<long long>(hc[b][1] - t0), hc[b][2]);
      std::fclose(f);
    }
    if (FILE* f = std::fopen((std::string(path) + ".trips").c_str(), "w")) {
      std::fprintf(f, "# %u trips: cta warpgroup tile chunk row_block start_ns duration_ns\n", n);
      for (unsigned int k = 0; k < n && k < static_cast<unsigned int>(kStatTrips); ++k)
        std::fprintf(f, "%llu %llu %llu %llu %llu %lld %llu\n", ht[k][0], ht[k][1], ht[k][2], ht[k][3], ht[k][4],
                     static_cast<long long>(ht[k][5] - t0), ht[k][6]);
      std::fclose(f);
    }
#ifdef NVFP4_SM90_TRIP_PHASES
    static unsigned long long hp[kStatTrips][5];
    NVFP4_CUDA_TRY(cudaMemcpyFromSymbol(hp, g_sm90_trip_ph, sizeof hp));
    if (FILE* f = std::fopen((std::string(path) + ".phases").c_str(), "w")) {
      std::fprintf(f, "# %u trips: ns from the trip's start to: bound recomputed (warp 0), thread-group test done, element steps done (slowest warp); lanes failing the thread-group test; record loaded\n", n);
      for (unsigned int k = 0; k < n && k < static_cast<unsigned int>(kStatTrips); ++k)
        std::fprintf(f, "%llu %llu %llu %llu %llu\n", hp[k][0], hp[k][1], hp[k][2], hp[k][3], hp[k][4]);
      std::fclose(f);
    }
#endif
  }
#endif
#ifdef NVFP4_SM90_TRACE
  if (const char* path = std::getenv("NVFP4_SM90_TRACE_OUT")) {
    static unsigned long long h[kTraceEvents][kTraceChunks];
    NVFP4_CUDA_TRY(cudaStreamSynchronize(stream));
    NVFP4_CUDA_TRY(cudaMemcpy(h, tr, sizeof h, cudaMemcpyDeviceToHost));
    const std::string cfg = Config{C::BM, C::RW, C::TW, C::NH, C::KS}.name();
    write_trace(path, cfg + " stages " + std::to_string(stages) + " grid " + std::to_string(grid) +
                          "; ns since the first copy per event (-1 = none)",
                &h[0][0], kTraceEvents, h[0][0], p.chunks * kTraceTiles);
    static unsigned long long hw[kTraceWgs][kTraceWgEvents][kTraceChunks];
    NVFP4_CUDA_TRY(cudaMemcpy(hw, trw, sizeof hw, cudaMemcpyDeviceToHost));
    write_trace(std::string(path) + ".wg",
                cfg + "; per one-chain warpgroup q (columns q0e0 .. q" + std::to_string(kTraceWgs - 1) + "e" +
                    std::to_string(kTraceWgEvents - 1) + "), ns since the first copy (-1 = none)",
                &hw[0][0][0], kTraceWgs * kTraceWgEvents, h[0][0], p.chunks * kTraceTiles);
  }
#endif
  return Status::ok();
}

// The configurations built (sm90::Config: bm x rw x tw x nh); NVFP4_SM90_CONFIG picks one of them.
struct Built {
  Config cfg;
  Status (*launch)(const Sm90Gemm&, int, cudaStream_t);
};
constexpr Built kBuilt[] = {
    {{16, 1, 1, 1}, launch_cfg<Cfg<16, 1, 1, 1>>},    {{16, 2, 1, 1}, launch_cfg<Cfg<16, 2, 1, 1>>},
    {{16, 3, 1, 1}, launch_cfg<Cfg<16, 3, 1, 1>>},    {{16, 4, 1, 1}, launch_cfg<Cfg<16, 4, 1, 1>>},
    {{32, 1, 1, 1}, launch_cfg<Cfg<32, 1, 1, 1>>},    {{32, 2, 1, 1}, launch_cfg<Cfg<32, 2, 1, 1>>},
    {{32, 3, 1, 1}, launch_cfg<Cfg<32, 3, 1, 1>>},    {{32, 4, 1, 1}, launch_cfg<Cfg<32, 4, 1, 1>>},
    {{48, 1, 1, 1}, launch_cfg<Cfg<48, 1, 1, 1>>},    {{48, 4, 1, 1}, launch_cfg<Cfg<48, 4, 1, 1>>},
    {{64, 1, 1, 1}, launch_cfg<Cfg<64, 1, 1, 1>>},
    {{64, 1, 2, 1}, launch_cfg<Cfg<64, 1, 2, 1>>},
    {{64, 2, 1, 1}, launch_cfg<Cfg<64, 2, 1, 1>>},    {{64, 3, 1, 1}, launch_cfg<Cfg<64, 3, 1, 1>>},
    {{128, 1, 1, 1}, launch_cfg<Cfg<128, 1, 1, 1>>},  {{128, 1, 2, 1}, launch_cfg<Cfg<128, 1, 2, 1>>},
    {{128, 2, 1, 1}, launch_cfg<Cfg<128, 2, 1, 1>>},  {{128, 3, 1, 2}, launch_cfg<Cfg<128, 3, 1, 2>>},
    {{96, 2, 1, 1}, launch_cfg<Cfg<96, 2, 1, 1>>},    {{96, 1, 1, 1}, launch_cfg<Cfg<96, 1, 1, 1>>},
    {{96, 3, 1, 1}, launch_cfg<Cfg<96, 3, 1, 1>>},
    {{256, 1, 1, 2}, launch_cfg<Cfg<256, 1, 1, 2>>},  {{256, 2, 1, 2}, launch_cfg<Cfg<256, 2, 1, 2>>},
    {{16, 1, 1, 1, 2}, launch_cfg<Cfg<16, 1, 1, 1, 2>>}, {{16, 1, 1, 1, 3}, launch_cfg<Cfg<16, 1, 1, 1, 3>>},
    {{16, 1, 1, 1, 4}, launch_cfg<Cfg<16, 1, 1, 1, 4>>}, {{32, 1, 1, 1, 2}, launch_cfg<Cfg<32, 1, 1, 1, 2>>},
    {{32, 1, 1, 1, 3}, launch_cfg<Cfg<32, 1, 1, 1, 3>>}, {{64, 1, 1, 1, 2}, launch_cfg<Cfg<64, 1, 1, 1, 2>>},
    {{64, 1, 1, 1, 3}, launch_cfg<Cfg<64, 1, 1, 1, 3>>},
    // No 32x1x1x1x4: beside its 128 KB of slots, 227 KB hold seven stages of 13 KB, which round
    // down to four for its four chunk-sum warpgroups, fewer than launch_cfg's two each.
    // Four warpgroups of 32 and 48 tokens fit their 104 registers without local memory in the hot
    // loop (results v34 r7, r8); 64x4x1x1 put 48 local-memory accesses there, so it is not built.
    // 48x3x1x1 (built in v34 r9) ran qkv at M = 40 and 48 3.9-4 % slower than 64x3x1x1.
};

// The launcher's choice, from the H200 sweeps (benchmarks/results/2026-12-01-h200-sm90-v2, v5, v6;
// at M = 65-128 v18 r7, v19 r10): tokens per warpgroup the smallest built height that holds M (up to
// 128; 256 never won; 48 only where it saves a round or runs a lone warpgroup, below); then the
// warpgroups per CTA that need the fewest rounds of row tiles, because a round costs about the same
// whatever its occupancy (each warpgroup's chunk is a chain of dependent instructions), and of equal
// rounds the fewest warpgroups, which run at more registers per thread and share the SM's MMA pipe
// and issue slots with fewer others.
Config choose(int64_t m, int64_t n, int sm_count) {
  sm_count = std::max(sm_count, 1);  // sm90_config_for is public: a zero count must not divide
  const int64_t nb = (n + kRowsWG - 1) / kRowsWG;  // 64-row blocks
  auto rounds = [&](int p) { return ((nb + p - 1) / p + sm_count - 1) / sm_count; };  // of row tiles
  // What a round of tiles costs, relative, for the configurations compared by it below (above 128
  // tokens all four, at M = 97-128 the first two): 128x2x1x1 12, 128x3x1x2 21, 64x2x1x1 10
  // (results v21 r1, r6, on the H200) and 96x2x1x1 10 (results v31 r3, an H100).
  constexpr int64_t kRound128x2 = 12, kRound128x3x2 = 21, kRound64x2 = 10, kRound96x2 = 10;
  // What configuration c's tiles cost at `weight` a round, in quarters of a round: a partial last
  // round that the kernel splits into one-row-block units (split_tail: Config::splits_last_round,
  // where a round precedes it and rw units per tile fit one round) counts three quarters. Fitted to
  // results v34 r1 (an H100, 128x2x1x1 against the pick of the rule before, which counted whole
  // rounds): the split round cost 0.68 of a round on qkv at M = 128, 0.72-0.73 on qkv and out at
  // M = 448, ~0.8 on out and fc2 at M = 2048; v34 r2 checked the picks it changes (qkv at M = 100,
  // 112 and 400 1.6-4.2 % faster, fc1 at 320 and 1040, out and fc2 at 1984 within the noise).
  auto round_cost = [&](const Config& c, int64_t weight) {
    const int64_t tiles = tile_count(m, n, c), whole = tiles / sm_count, tail = tiles % sm_count;
    const bool split = c.splits_last_round() && whole > 0 && tail != 0 && c.rw * tail <= sm_count;
    return 4 * weight * whole + (tail == 0 ? 0 : split ? 3 * weight : 4 * weight);
  };
  auto one_round = [&](int p) { return rounds(p) == 1; };
  // Of equal rounds the fewest warpgroups: on mlp_fc1's 448 row blocks (two rounds either way)
  // 32x2x1x1 was 18 % faster than 32x3x1x1, which spills, and 64x2x1x1 as fast as 64x3x1x1
  // (results v6 r8).
  auto fewest_rounds = [&](int pmin, int pmax) {
    int best = pmin;
    for (int p = pmin + 1; p <= pmax; ++p)
      if (rounds(p) < rounds(best)) best = p;
    return best;
  };
  if (m <= 32) {
    // Up to four warpgroups: mlp_fc1 (448 row blocks) at M = 17-32 in one round of 32x4x1x1 is
    // 17 % faster than two of 32x2x1x1 (45.2-45.7 against 54.6-55.2 us; results v34 r7, an H100).
    const int bm = m <= 16 ? 16 : 32, pmax = 4;
    // Row blocks for at most one round: chunk-sum warpgroups split each tile's chunks (K-split; 4-12 %
    // faster than one warpgroup on 84 row blocks at M = 16 and 32, 2026-12-02). Since the applier
    // takes slot groups (2026-12-03, results v11) four were 5 % faster than two at M = 16 (attn_out_proj
    // 33.7 against 35.4 us, mlp_fc2 58.3 against 61.4); with stages of four chunks (results v13 r8)
    // three are 1-2 % faster than four and two there (out 27.4-27.7 against 28.0-28.3 and 27.8-28.4
    // us, fc2 47.0-47.3 against 48.0-48.1 and 47.5-47.9, two runs each); at M = 32, with stages of
    // two chunks, three are as fast as two or up to 1 % faster (results v14: r12, both in one
    // process, out 34.4 against 34.6-34.8 us, fc2 59.8-59.9 against 60.2-60.3; r13, the launcher's
    // pick before and after, equal), where two had won with one-chunk stages (results v5).
    // At M <= 16 two chunk-sum warpgroups with a four-stage ring (Cfg::kStageCap) were faster again
    // (mlp_fc2 1.5-2.3 %, attn_out_proj 0-0.7 %: results v22 r9, v24 r1) until each lane of the copy
    // warps issued one copy of a four-chunk stage: since then three are 6-7 % faster than two (results
    // v36 r5, an H100: out 22.0 against 23.5 us, fc2 36.2 against 39.0; four 22.3 / 37.3). At M = 32
    // two were 5-7 % slower (v22 r9) and 4-7 % in v36 r4.
    if (one_round(1)) return Config{bm, 1, 1, 1, 3};
    return Config{bm, fewest_rounds(2, pmax), 1, 1};
  }
  if (m <= 64) {
    // 48-token warpgroups at M = 33-48 (results v34 r8, r9, an H100), where they save something:
    // one per CTA where the row blocks fit one round (attn_out_proj and mlp_fc2: 48x1x1x1 4.7-6.3 %
    // faster than 64x1x1x1, a lone warpgroup's chain being shorter), four where that takes one round
    // instead of two (mlp_fc1: 48x4x1x1 8-18 % faster than 64x2x1x1). Where 64-token tiles take one
    // round of two or three warpgroups they stay (attn_qkv_proj: 48x3x1x1 3.9-4 % slower than
    // 64x3x1x1 at M = 40 and 48).
    const int p = fewest_rounds(1, 3);
    if (m <= 48 && one_round(1)) return Config{48, 1, 1, 1};
    if (m <= 48 && !one_round(p) && one_round(4)) return Config{48, 4, 1, 1};
    return Config{64, p, 1, 1};
  }
  if (m <= 96) {
    // 96-token warpgroups (results v31 r6, an H100, M = 72, 80 and 96, every applicable
    // configuration timed twice in one call): one per CTA where the row blocks fit one round
    // (attn_out_proj and mlp_fc2: 6.7-8.5 % faster than 128x1x1x1), else two (mlp_fc1: 13.3-13.6 %
    // faster than 128x2x1x1; attn_qkv_proj: 3.9-4.4 % faster than 128x3x1x2, in two rounds against one).
    if (one_round(1)) return Config{96, 1, 1, 1};
    // Three where that takes one round instead of two (attn_qkv_proj, 336 row blocks: 112 tiles of
    // 96x3x1x1 against 168 of 96x2x1x1): 58.7-59.6 against 74.1-75.0 us at M = 65, 72, 80 and 96,
    // 20-21 % less time (results v35 r1, an H100). Where both take two rounds three lose (mlp_fc1 at
    // M = 96: 104 against 74 us).
    if (!one_round(2) && one_round(3)) return Config{96, 3, 1, 1};
    return Config{96, 2, 1, 1};
  }
  if (m <= 128) {
    // Few row blocks (84): one round with one warpgroup per CTA. One 128-token warpgroup per CTA
    // (84 CTAs) is 0-1.5 % faster than 64x2x1x1 (84 CTAs of two) on attn_out_proj and 2-2.6 % on
    // mlp_fc2 at M = 96 and 128 since the trips run on the warp's lanes (results v19 r10, r11; v18
    // r7 had found 64x2x1x1 3-4 % faster than 64x1x2x1); 32x3x1x1, one round on 112 SMs, 10 % slower.
    if (one_round(1)) return Config{128, 1, 1, 1};
    // More row blocks: 128x2x1x1, unless one round of three warpgroups in two chains costs less by
    // the round weights (of equal costs 128x2x1x1). 336 row blocks (attn_qkv_proj: 168 tiles,
    // a round and a split one, equal to one round of 128x3x1x2 by the weights) take 128x2x1x1:
    // 3.5-3.9 % faster at M = 128, 3.4-4.2 % at 100 and 112 (results v34 r1, r2, an H100).
    // Many row blocks (448): a round of 64x1x2x1 tiles costs ~38 us, one of 128x2x1x1 ~60, but the
    // 128-token tiles take two rounds where the 64-token ones take four (the last a partial one):
    // fc1 154.0 -> 119.8 us (r7).
    return round_cost(Config{128, 3, 1, 2}, kRound128x3x2) < round_cost(Config{128, 2, 1, 1}, kRound128x2)
               ? Config{128, 3, 1, 2}
               : Config{128, 2, 1, 1};
  }
  // Above 128 tokens the fewest rounds of tiles weighted by what a round costs (the kRound weights;
  // round_cost: a split last round three quarters of one since results v34). A 96-token round costs
  // 0.83-0.90 of a 128-token one and covers 3/4 of its tokens (results v31 r3), so it wins only where
  // it needs no more rounds or the 128-token tiles' last round is a sliver. Of equal costs the
  // earlier candidate. In v31 r3's sweep (the four MiniMax H3 linears at M = 192, 256, 384, 448, 512,
  // 640, 768, 1536, 2048, 2304, 3072; r2 adds 1024 and 4096; each configuration timed twice in one
  // process) this rule picks the fastest of the configurations timed at all 52 points (v31 r4: faster
  // on seven other M wherever its pick changed); the rule before it (without 96x2x1x1) was up to 17 %
  // slower: qkv and fc1 at M = 192, out and fc2 at M = 256 (12-15 %), 448-512 (5-8.5 %) and 2048
  // (3 %), fc1 at M = 384 (5 %). 128x3x1x2, picked for out and fc2 at M = 385-512 until then, loses to
  // 96x2x1x1 there; above 128 tokens the rule no longer picks it for these linears.
  struct Candidate {
    Config cfg;
    int64_t weight;
  };
  const Candidate candidates[] = {
      {Config{128, 2, 1, 1}, kRound128x2},
      {Config{128, 3, 1, 2}, kRound128x3x2},
      {Config{64, 2, 1, 1}, kRound64x2},
      {Config{96, 2, 1, 1}, kRound96x2}};
  Config best = candidates[0].cfg;
  int64_t best_cost = -1;
  for (const Candidate& c : candidates) {
    const int64_t cost = round_cost(c.cfg, c.weight);
    if (best_cost < 0 || cost < best_cost) best = c.cfg, best_cost = cost;
  }
  return best;
}

bool built(const Config& c) {
  for (const Built& b : kBuilt)
    if (b.cfg == c) return true;
  return false;
}


}  // namespace

void sm90_pick_config(int64_t m, int64_t n, int sm_count, int& bm, int& rw, int& tw, int& nh, int& ks) {
  Config best = choose(m, n, sm_count);
  Config forced;
  if (const char* env = std::getenv("NVFP4_SM90_CONFIG"); env && Config::parse(env, forced) && built(forced)) best = forced;
  bm = best.bm;
  rw = best.rw;
  tw = best.tw;
  nh = best.nh;
  ks = best.ks;
}

std::string sm90_config_name_for(int64_t m, int64_t n, int sm_count) {
  Config c;
  sm90_pick_config(m, n, sm_count, c.bm, c.rw, c.tw, c.nh, c.ks);
  return c.name();
}

std::vector<std::string> sm90_config_names() {
  std::vector<std::string> v;
  for (const Built& b : kBuilt)
    v.push_back(b.cfg.name());
  return v;
}

Status launch_sm90_gemm(const Sm90Gemm& p, int sm_count, cudaStream_t stream) {
  if (p.m <= 0 || p.n <= 0 || p.chunks <= 0) return invalid_argument("sm90 kernel: empty problem");
  if (p.chunks > (int64_t{1} << 24) / 64) return invalid_argument("sm90 kernel: K too large");
  const Config want{p.bm, p.rw, p.tw, p.nh, p.ks};
  for (const Built& b : kBuilt)
    if (b.cfg == want) return b.launch(p, sm_count, stream);
  return invalid_argument("sm90 kernel: tile configuration " + want.name() + " is not built");
}

}  // namespace nvfp4::cuda
