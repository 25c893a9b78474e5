// GPU benchmarks: every NVFP4 kernel against cuBLAS bf16 of the same shape in the same process
// (median of many CUDA-event-timed runs after warm-up, weights rotated over copies larger than L2).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4 {

struct BenchOptions {
  int64_t rows = 128;
  std::vector<LinearShape> linears = minimax_h3_linears();
  // sm90 / sm90-stream: the exact Hopper kernel (packed A / bf16 x quantized inside); comfy-hopper:
  // ComfyUI's Hopper path (dequantize the weight, then cuBLAS bf16); cublas-fp8: an FP8 cuBLASLt
  // linear with per-tensor scales (not exact; the fastest format Hopper has). sm120p-proxy: the
  // pipelined SM120 kernel with a register-only stand-in for the MMA (any GPU): its time is the
  // data path's, reported as weight GB/s against a device copy of the weights.
  std::vector<std::string> backends = {"sm90",           "sm90-stream",     "comfy-hopper",  "cublas-fp8",
                                       "gpu-model",      "sm120-emulated",  "sm120-native",  "sm120p-emulated",
                                       "sm120p-native",  "sm120p-proxy",    "cublaslt"};
  // sm90 tile configurations to time, "BMxRWxTWxNH[xKS]" (empty: the launcher's choice per shape).
  std::vector<std::string> sm90_configs;
  // The reduction contract the contract-aware GEMM rows run (gpu-model, sm120-*, sm120p-*, the
  // proxy): split-K times the kernel's partials and the ordered merge together, as a forward pass
  // under that contract runs them. The sm90 rows are sequential only.
  ReductionContract contract = ReductionContract::sequential();
  // Activations of the GEMM rows: outliers (heavy tails, ~1 channel in 700 x30..60, as LLM/DiT
  // activations), normal, or minimax (validate's synthetic data: per-channel magnitudes 2^-3..2^3).
  std::string activations = "outliers";
  // Backends named by the user must run: one this GPU cannot run is an error, not a skipped row.
  bool backends_explicit = false;
  int iters = 30;
  int warmup = 5;
  // Every timing of the run (baselines included): true, the runs enqueued back to back, as a
  // forward pass enqueues its layers (GPU time); false, each run alone after a synchronize (its host
  // work before the GPU starts counted: on the H200 that made cuBLAS bf16 5-10 us slower at
  // M <= 128 and the sm90 path 1-4 us; src/cuda/common/timing.hpp). Results before 2026-12-03 were
  // timed alone.
  bool queued_timing = true;
  bool quantizer = true;
  int64_t quant_rows = 16384, quant_cols = 5376;
  std::string command;  // recorded in the JSON
  std::string commit;
};

// Rows of `shape | us | TFLOP/s | GB/s | x cuBLAS-bf16` go to `print`; the JSON holds them all with
// the device, driver, commit, date and command.
Result<Json> run_bench(const BenchOptions& opt, const std::function<void(const std::string&)>& print);

// Self-check of the CPU emulation of rcp.approx.ftz.f32: runs the real instruction on every
// mantissa of [1, 2) and counts disagreements with rcp_approx_ftz (0 expected).
Result<int64_t> gpu_rcp_mismatches();

// Self-check of the bf16 pair conversion the sm90 epilogue uses (cvt.rn.bf16x2.f32): runs it on
// every float pattern that is not a NaN and counts disagreements with bf16_rn (0 expected).
Result<int64_t> gpu_bf16_pair_mismatches();

}  // namespace nvfp4
