// The bit-exact CPU model of the SM120/SM121 block-scaled MMA (docs/numerics.md §3) and the GEMM
// oracle with explicit reduction contracts and epilogues (§4).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/format.hpp"

namespace nvfp4 {

// ---------------------------------------------------------------------------------------------
// Single MMA, m16n8k64, codes one per byte in logical K order, scales linear [row][4].
//   a [16][64] u8 e2m1 · b [8][64] u8 e2m1 · sfa [16][4] ue4m3 · sfb [8][4] ue4m3 · c, d [16][8] f32
void mma_m16n8k64(const uint8_t* a, const uint8_t* b, const uint8_t* sfa, const uint8_t* sfb,
                  const float* c, float* d);
// One output element of that MMA: a 64-code row of A, a 64-code column of B, 4 scales each.
float mma_element(const uint8_t* a64, const uint8_t* b64, const uint8_t* sfa4, const uint8_t* sfb4, float c);
// An independent evaluation of §3 in long double arithmetic, written from the spec text and
// sharing no code with the fast model: the second opinion every fast path is checked against.
float reference_mma_element(const uint8_t* a64, const uint8_t* b64, const uint8_t* sfa4,
                            const uint8_t* sfb4, float c);

// ---------------------------------------------------------------------------------------------
// Reduction contracts (§4).
enum class PartitionRule : uint8_t {
  kCublas,   // chunk = ceil(ceil(K/G)/S) * G, remainder in the last slice
  kCutlass,  // whole K tiles of G, the remainder tiles going to the first slices
};
enum class MergeMode : uint8_t {
  kFp32,         // fp32 partials, forward fp32 sum ((p0 + p1) + p2) + ...      (COMPUTE_TYPE)
  kBf16Partials, // each partial through the epilogue to bf16 first, then summed (OUTPUT_TYPE)
  kBf16Serial,   // a serial chain in the output type: out = bf16(out + alpha*p_j) (INPLACE)
};

struct ReductionContract {
  int splits = 1;       // 1 = sequential K
  int grain = 64;       // K unit of the partition, a multiple of 64
  PartitionRule rule = PartitionRule::kCublas;
  MergeMode merge = MergeMode::kFp32;

  static ReductionContract sequential() { return {}; }
  static ReductionContract split_k(int s, int grain, PartitionRule r, MergeMode m) { return {s, grain, r, m}; }
  bool is_sequential() const { return splits == 1; }
  // Stable text form: "sequential" or "split_k:S:grain=G:cublas|cutlass:fp32|bf16_partials|bf16_serial".
  std::string to_string() const;
  static Result<ReductionContract> parse(std::string_view s);
  // The K ranges [begin, end) of each slice, in elements; K is padded to 64 first. Empty slices
  // (possible under the cuBLAS rule) are kept: they contribute +0 partials.
  std::vector<std::pair<int64_t, int64_t>> slices(int64_t k) const;
  bool same_partition(const ReductionContract& o, int64_t k) const { return slices(k) == o.slices(k); }
};

enum class Epilogue : uint8_t {
  kAlphaBeforeBf16,  // D = bf16_rn(f32_rn(alpha * acc) [+ bias])  — CUTLASS/cuBLASLt default
  kAlphaAfterBf16,   // D = bf16_rn(f32(bf16_rn(acc)) * alpha)      — alpha not fused
};
const char* to_string(Epilogue e);
Result<Epilogue> parse_epilogue(std::string_view s);

// Finishes one output from its K-slice partials under a contract and epilogue.
//   raw:   the fp32 block-scaled product without alpha (bf16 merges: with alpha = 1)
//   bf16:  the layer output
struct MergedOutput {
  float raw;
  uint16_t bf16;
};
// bias: the output column's bias as f32, or -0.0f for none (x + -0 == x keeps signed zeros).
MergedOutput merge_partials(const float* partials, int n, MergeMode m, Epilogue e, float alpha,
                            float bias);

// ---------------------------------------------------------------------------------------------
// GEMM oracle: D[M][N] = A[M][K] · W[N][K]^T, A and W NVFP4 tensors in any nibble order / layout.
struct GemmSpec {
  std::vector<ReductionContract> contracts = {ReductionContract::sequential()};
  std::vector<Epilogue> epilogues = {Epilogue::kAlphaBeforeBf16};
  float alpha = 1.0f;                 // usually s_a * s_w (f32_rn), §2.4
  const uint16_t* bias = nullptr;     // optional [N] bf16
  int threads = 0;
};
struct GemmResult {
  ReductionContract contract;
  Epilogue epilogue = Epilogue::kAlphaBeforeBf16;
  std::vector<float> raw;      // [M][N] f32
  std::vector<uint16_t> out;   // [M][N] bf16
};
// All contracts and epilogues are evaluated in one pass: group sums are computed once per chunk
// and slices shared between contracts are accumulated once. Results are ordered contract-major:
// index = contract * epilogues.size() + epilogue.
Result<std::vector<GemmResult>> gemm_oracle(const Tensor& a, const Tensor& w, const GemmSpec& spec);

// The same, on a list of output coordinates only (sampling for huge shapes, explain's search).
struct Coord {
  int64_t m, n;
};
Result<std::vector<GemmResult>> gemm_oracle_at(const Tensor& a, const Tensor& w, const GemmSpec& spec,
                                                const std::vector<Coord>& at);

// Sequential-K through reference_mma_element: slow, independent; for sampled checks.
Result<std::vector<float>> gemm_reference_at(const Tensor& a, const Tensor& w, const std::vector<Coord>& at);

// Deterministic sample of output coordinates: the four corners, the edges' midpoints, then
// pseudo-random ones (seeded), without repeats; at most M*N.
std::vector<Coord> sample_coords(int64_t m, int64_t n, int64_t count, uint64_t seed);

}  // namespace nvfp4

namespace nvfp4 {

// ---------------------------------------------------------------------------------------------
// The exact Hopper path (docs/hopper-exact-path.md, src/model/hopper_exact.hpp). The sm90 kernel
// adds a tensor-core chunk sum with add.rz.f32 where per-row tests prove that equals the §3 step,
// and runs the model elsewhere. This is its CPU counterpart and the statistics of its tests.
struct FastPathStats {
  int64_t steps = 0;             // (output, chunk) steps examined
  int64_t fast = 0;              // the per-element test passes: the tensor-core path applies
  int64_t fast_mismatches = 0;   // add.rz(acc, exact chunk sum) != model where fast (must be 0)
  int64_t chain_checked = 0;     // fast steps replayed on an emulated Hopper chain (23 and 25 bits)
  int64_t chain_mismatches = 0;  // emulated chain != exact chunk sum there (must be 0)
  int64_t exact_sum_fp32 = 0;    // steps whose exact chunk sum is an fp32 number (a bound for any test)
  int64_t tile_steps = 0;        // the kernel's tile test: tile_rows weight rows x tile_tokens tokens x chunk
  int64_t tile_fast = 0;         // ... passes for the whole tile (its elements skip every other test)
  int64_t tile_unsound = 0;      // an element the tile test accepts whose tensor-core step (emulated, 23
                                 // and 25 bits) or add.rz differs from the model (must be 0)
  FastPathStats& operator+=(const FastPathStats& o) {
    steps += o.steps;
    fast += o.fast;
    fast_mismatches += o.fast_mismatches;
    chain_checked += o.chain_checked;
    chain_mismatches += o.chain_mismatches;
    exact_sum_fp32 += o.exact_sum_fp32;
    tile_steps += o.tile_steps;
    tile_fast += o.tile_fast;
    tile_unsound += o.tile_unsound;
    return *this;
  }
};
// add.rz.f32 of two finite floats (integer arithmetic; RZ overflow gives +-FLT_MAX).
float add_rz_f32(float x, float y);
// One Hopper tensor-core step as MMA-Sim models it: inputs aligned to the largest exponent, each
// truncated to frac_bits bits below it, summed exactly, rounded toward zero to fp32.
float hopper_chain_step(float c, const double* prod, int n, int frac_bits);
// The sm90 kernel's arithmetic and decisions on the CPU (tile test per tile_rows weight rows x
// tile_tokens tokens, then per element): raw fp32 [M][N], sequential K (equals gemm_oracle's).
Result<std::vector<float>> gemm_hopper_cpu(const Tensor& a, const Tensor& w, FastPathStats* stats = nullptr,
                                           int tile_tokens = 128, int tile_rows = 16);
// Every token against the given weight rows (whole tiles of tile_rows consecutive entries), tiled
// as the kernel tiles them, with the soundness checks of both tests.
Result<FastPathStats> hopper_fastpath_stats(const Tensor& a, const Tensor& w, const std::vector<int64_t>& weight_rows,
                                            int tile_tokens = 128, int tile_rows = 16);

}  // namespace nvfp4
