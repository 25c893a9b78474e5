// The cuBLASLt reference path: the NVFP4 GEMM issued exactly as comfy-kitchen issues it
// (docs/numerics.md §6), a probe that reads back the plan cuBLASLt chose, and plan forcing.
// cuBLASLt is loaded at run time (dlopen): the library and CLI start and report clearly where it
// is absent or where the GPU has no NVFP4 cuBLASLt kernels (anything but compute capability 10.x/12.x).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/format.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

struct CublasLtPlanRequest {
  int64_t workspace_bytes = 32ll << 20;  // comfy-kitchen's MAX_WORKSPACE_BYTES
  int heuristic_index = 0;               // comfy-kitchen runs heuristic result 0
  int requested = 1;                     // heuristic results asked for
  int force_splitk = -1;                 // >= 1: SPLITK_NUM set on the algo, checked with AlgoCheck
  int force_reduction_scheme = -1;       // >= 0: REDUCTION_SCHEME (0 none, 1 inplace, 2 compute, 4 output)
  bool forbid_splitk = false;            // PREF_REDUCTION_SCHEME_MASK = NONE
  bool bias = false;                     // EPILOGUE_BIAS (bf16 bias of length N) instead of DEFAULT
};

// One heuristic result and its algo configuration, as read back from cuBLASLt.
struct CublasLtPlan {
  int index = 0;
  int status = 0;  // cublasStatus_t of the heuristic result / AlgoCheck
  int64_t algo_id = 0, tile_id = 0, stages_id = 0, splitk_num = 0, reduction_scheme = 0, cta_swizzling = 0,
          custom_option = 0, inner_shape_id = 0, cluster_shape_id = 0;
  int64_t workspace_bytes = 0;
  double waves_count = 0;
  // The reduction contract this plan maps to: "sequential" with one K split; with S > 1 the
  // family "split_k:S:?:<merge>" (the K grain is the kernel's K tile, which the algo config does
  // not state: `--compare` pins it down by bit-exact search).
  std::string contract;
  Json to_json() const;
};

// The reduction contract a plan runs, mapped as the probe maps it (CublasLtPlan::contract): one K
// split is sequential; S > 1 takes S and the merge from SPLITK_NUM and REDUCTION_SCHEME, and the K
// grain and partition rule from the caller, since the algo config does not state them. A split-K
// plan without a grain (grain <= 0) does not map: unsupported, with one line saying why.
Result<ReductionContract> cublaslt_plan_contract(const CublasLtPlan& plan, int grain, PartitionRule rule);

struct CublasLtEnv {
  std::string library;        // the loaded file
  int64_t cublaslt_version = 0;
  int runtime_version = 0, driver_version = 0;
  std::string device;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  Json to_json() const;
};

// Loads cuBLASLt and describes the machine; fails with one line when either is unusable.
Result<CublasLtEnv> cublaslt_env();
// Status unless the GPU can run NVFP4 cuBLASLt at all (compute capability 10.x / 12.x).
Status cublaslt_nvfp4_supported(const CublasLtEnv& env);

// y[M][N] = x[M][K] · w[N][K]^T as comfy-kitchen's scaled_mm_nvfp4: cuBLAS A = weight (TRANSA = T),
// B = activation, column-major D (N x M) = row-major y. Returns the plans the heuristic offered.
Result<std::vector<CublasLtPlan>> cublaslt_probe(int64_t m, int64_t n, int64_t k, const CublasLtPlanRequest& req);

struct CublasLtOutput {
  std::vector<float> raw;     // [M][N] fp32 D with alpha = 1 (empty if cuBLASLt refuses fp32 D)
  std::vector<uint16_t> out;  // [M][N] bf16 D with device alpha, beta = 0
  CublasLtPlan plan;
  double kernel_ms = 0;
};
Result<CublasLtOutput> cublaslt_gemm(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias,
                                     const CublasLtPlanRequest& req);

// The baseline of every benchmark: y[M][N] = x[M][K] · W[N][K]^T in bf16 with fp32 compute, the
// cuBLASLt call PyTorch's F.linear makes, on random data with `copies` rotated weight copies.
// Returns the median of `iters` CUDA-event timings in microseconds, after `warmup` runs.
Result<double> cublaslt_bf16_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, int copies);
// The same bf16 call with run i's weight from weight(i) (device pointer), which may first enqueue
// the work that produces it (ComfyUI's Hopper path: dequantize the NVFP4 weight, then bf16).
Result<double> cublaslt_bf16_linear_us_with(int64_t m, int64_t n, int64_t k, int iters, int warmup,
                                            const std::function<Result<const void*>(int)>& weight);
// FP8 E4M3 x E4M3 with per-tensor scales, bf16 out, fp32 compute (what FP8 checkpoints run on Hopper).
Result<double> cublaslt_fp8_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, int copies);

// Builds the descriptors of the call and reads every attribute back through cuBLASLt's own getters
// (needs only the library, no GPU): what the unit tests check.
Result<Json> cublaslt_describe_call(int64_t m, int64_t n, int64_t k, const CublasLtPlanRequest& req);

}  // namespace nvfp4
