// The P0 validation harness (the GB10 status report, docs/numerics.md §10), the synthetic inputs it
// runs on, and the contract search behind `nvfp4 explain`.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

// ---------------------------------------------------------------------------------------------
// The MiniMax H3 linears (§8).
struct LinearShape {
  std::string name;
  int64_t n = 0, k = 0;
};
const std::vector<LinearShape>& minimax_h3_linears();
Result<LinearShape> find_linear(const std::string& name);  // full name or qkv/out/fc1/fc2
Result<std::vector<LinearShape>> parse_shapes(const std::string& spec);  // "name:N:K,..." or "NxK,..."

// Seeded synthetic bf16 tensors, bit-reproducible on every machine (integer RNG, no libm):
// activations: products of two normals with per-channel magnitudes 2^-3..2^3 and ~1% outlier
// channels x32 (like silu(gate) * up); weights: N(0, 0.02) with per-row magnitudes 2^-2..2^2.
std::vector<uint16_t> synthetic_activation(int64_t rows, int64_t cols, uint64_t seed);
std::vector<uint16_t> synthetic_weight(int64_t rows, int64_t cols, uint64_t seed);
// Other activation families, for the Hopper fast-path statistics and tests:
//   kNormal: N(0, 1);
//   kOutlierChannels: heavy-tailed normals (n1 * (0.6 + 0.8 |n2|)) with about one channel in 700
//   scaled by 30..60, as LLM and DiT activations have.
enum class ActivationKind { kMiniMax, kNormal, kOutlierChannels };
std::vector<uint16_t> synthetic_activation(int64_t rows, int64_t cols, uint64_t seed, ActivationKind kind);
Result<ActivationKind> parse_activation_kind(const std::string& s);

// One linear layer's NVFP4 operands, made exactly as ComfyUI makes them: comfy-cuda recipe, the
// activation's dynamic global scale and the weight's f32(bf16(amax/2688)), alpha = f32_rn(s_x * s_w).
struct LayerProblem {
  LinearShape shape;
  int64_t m = 0;
  std::vector<uint16_t> x;  // [m][k] bf16 activation, what a streaming-A kernel reads
  Tensor a, w;
  float s_x = 0, s_w = 0, alpha = 0;
  // The layer's static input_scale (s_x then equals it), 0 when s_x is the dynamic scale: the
  // streaming backends quantize x themselves and must be given it.
  float s_static = 0;
  Json inputs;  // where the bf16 tensors came from (seeds or files) and the scales' bits
};
// Synthetic inputs are seeded per linear name, so one linear gets the same tensors whether it is
// validated alone or with the others. inputs_dir: read <dir>/<name>.x.npy and <dir>/<name>.w.npy.
Result<LayerProblem> prepare_layer(const LinearShape& l, int64_t rows, uint64_t seed, const std::string& inputs_dir);
// A real layer: the NVFP4 weight of `layer` in a ComfyUI checkpoint (docs/numerics.md §7) as stored,
// its input_scale as the static activation scale when it has one (else the dynamic one), and the
// activation from `x_npy` (a bf16 [M][K] .npy, or a directory holding <layer>.x.npy) or, when
// empty, synthetic [rows][K] seeded by the layer name.
Result<LayerProblem> prepare_checkpoint_layer(const std::string& checkpoint, const std::string& layer, int64_t rows,
                                              uint64_t seed, const std::string& x_npy);

// ---------------------------------------------------------------------------------------------
// A side of the comparison: where the GEMM runs and under which contract.
struct Backend {
  // cpu-oracle | cpu-reference | gpu-model | sm120-emulated | sm120-native | sm120-stream-emulated |
  // sm120-stream-native | sm120p-emulated | sm120p-native | sm120p-stream-emulated | sm120p-stream-native
  // (*-stream: A quantized inside the GEMM from the bf16 activation) | cublaslt
  std::string name;
  ReductionContract contract = ReductionContract::sequential();
  bool contract_given = false;  // "name@contract": ValidateOptions::contract does not apply
  std::string describe() const;
};
// "name" or "name@contract"; a contract on cpu-reference or cublaslt (which run their own) is refused.
Result<Backend> parse_backend(const std::string& s);

struct DeviceInfo;
// Whether backend `backend` (a parse_backend name) runs on GPU `dev`: a native kernel needs its
// architecture (a compute capability major), the others run anywhere. kUnsupported otherwise, in
// one line naming the capability the check asks for and the device's.
Status check_backend_device(const std::string& backend, const DeviceInfo& dev);

struct ValidateOptions {
  int64_t rows = 128;
  std::vector<LinearShape> linears = minimax_h3_linears();
  uint64_t seed = 1234;
  std::vector<Backend> candidates;   // empty = default (every GPU backend, else the CPU oracle)
  Backend reference;                 // default: cpu-oracle sequential (cpu-reference when the candidate is the oracle)
  bool reference_given = false;
  int64_t sample = 4096;             // outputs checked when a side is sampled
  std::string out_dir = "validate-out";
  std::string inputs_dir;            // <linear>.x.npy / <linear>.w.npy bf16 instead of synthetic
  std::string checkpoint, layer;     // validate this checkpoint layer (then inputs_dir may name the x .npy)
  ReductionContract sensitivity = ReductionContract::split_k(2, 256, PartitionRule::kCublas, MergeMode::kFp32);
  // The contract of every side without its own "@contract" (cpu-reference and cublaslt excepted):
  // empty (sequential), a contract, or "cublaslt[:grain=G][:cublas|cutlass]": per linear, the plan
  // cuBLASLt's heuristic picks for ComfyUI's call at that shape, mapped as the probe maps it
  // (cublaslt_plan_contract; a split-K plan needs the grain).
  std::string contract;
  std::function<void(const std::string&)> progress;  // human progress lines
};

struct Comparison {
  int64_t compared = 0;
  bool raw_available = true;  // false when a side has no fp32 output (cuBLASLt without an fp32-D plan)
  bool raw_equal = false, fused_equal = false;
  double raw_max_abs = 0, raw_mean_abs = 0, fused_max_abs = 0, fused_mean_abs = 0;
  int64_t raw_diff_count = 0, fused_diff_count = 0;
  Json first_diffs = Json::array();   // [{m, n, candidate_raw, reference_raw, candidate_bf16, reference_bf16}]
  Json ulp_histogram = Json::object();  // bf16 output differences in units in the last place
};

struct LinearReport {
  std::string linear;
  int64_t m = 0, n = 0, k = 0;
  Comparison cmp;
  Json sensitivity;  // sequential vs the sensitivity contract, on the reference oracle's outputs
  Json json;         // the full per-linear report
};

struct ValidateReport {
  std::vector<LinearReport> linears;
  Json summary;
  bool pass = false;
};

// Runs every candidate against the reference; writes <out_dir>/<linear>[-<candidate>].json and
// <out_dir>/summary.json, all of them (differing bits included) or, when the run fails, none.
Result<ValidateReport> run_validate(const ValidateOptions& opt);

// ---------------------------------------------------------------------------------------------
// Contract search (`nvfp4 explain`).
struct ExplainOptions {
  std::vector<int> splits = {2, 3, 4, 5, 6, 7, 8};
  std::vector<int> grains = {64, 128, 256, 512, 1024};
  int64_t sample = 2048;   // outputs used to screen every candidate
  int top = 8;             // closest candidates reported
  uint64_t seed = 99;
};
struct ExplainCandidate {
  ReductionContract contract;
  Epilogue epilogue = Epilogue::kAlphaBeforeBf16;
  int64_t sample_diffs = 0;
  int64_t full_diffs = -1;  // -1: not evaluated on every output
};
struct ExplainResult {
  bool bf16_dump = true;
  int64_t candidates = 0;
  std::vector<ExplainCandidate> exact;    // reproduce the dump bit for bit on every output
  std::vector<ExplainCandidate> closest;  // best by differing-element count
  Json to_json() const;
};
// dump: [M][N] bf16 patterns (bf16_dump) or f32 bit patterns (raw accumulators, no alpha).
Result<ExplainResult> explain_contract(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias,
                                       const std::vector<uint32_t>& dump, bool bf16_dump, const ExplainOptions& opt);

}  // namespace nvfp4
