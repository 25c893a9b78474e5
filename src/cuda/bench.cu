// GPU benchmarks (include/nvfp4/bench.hpp) and the on-GPU checks of the rcp.approx emulation and the bf16 pair conversion.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>

#include "common/check.cuh"
#include "common/kernels.hpp"
#include "common/numerics.cuh"
#include "common/operands.hpp"
#include "common/timing.hpp"
#include "sm90/sm90_host.hpp"
#include "split_plan.hpp"
#include "nvfp4/bench.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"

namespace nvfp4 {

namespace {

__global__ void rcp_all_mantissas(uint32_t* out) {
  const uint32_t m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m < (1u << 23)) out[m] = __float_as_uint(cuda::rcp_approx_ftz(__uint_as_float(0x3F800000u | m)));
}

// Every float pattern x as the low value and x rotated by 16 bits as the high one: mismatches of
// bf16x2_rn_non_nan against bf16_rn where neither is a NaN, added per warp.
__global__ void bf16_pair_all_patterns(unsigned long long* bad) {
  unsigned int n = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < (uint64_t{1} << 32);
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint32_t lo = static_cast<uint32_t>(i), hi = lo << 16 | lo >> 16;
    const float a = __uint_as_float(lo), b = __uint_as_float(hi);
    if (a != a || b != b) continue;
    n += cuda::bf16x2_rn_non_nan(a, b) != cuda::bf16_rn_pair(a, b);
  }
  n = __reduce_add_sync(0xFFFFFFFFu, n);
  if (threadIdx.x % 32 == 0 && n) atomicAdd(bad, static_cast<unsigned long long>(n));
}

std::string fmt_row(const std::string& shape, const std::string& what, double us, double flops, double bytes, double base_us) {
  char b[256];
  std::snprintf(b, sizeof b, "%-34s %-16s | %10.1f us | %8.2f TFLOP/s | %8.1f GB/s | %6.3f x cuBLAS-bf16", shape.c_str(),
                what.c_str(), us, flops / us * 1e-6, bytes / us * 1e-3, base_us / us);
  return b;
}

std::string utc_now() {
  char b[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return b;
}

}  // namespace

Result<int64_t> gpu_rcp_mismatches() {
  NVFP4_TRY(cuda_device().status());
  cuda::DeviceBuffer<uint32_t> d;
  NVFP4_TRY(d.alloc(1u << 23));
  rcp_all_mantissas<<<(1u << 23) / 256, 256>>>(d.get());
  NVFP4_CUDA_LAUNCH_TRY("rcp_all_mantissas");
  NVFP4_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<uint32_t> h(1u << 23);
  NVFP4_CUDA_TRY(cudaMemcpy(h.data(), d.get(), h.size() * 4, cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (uint32_t m = 0; m < (1u << 23); ++m) bad += f32_bits(rcp_approx_ftz(f32_from_bits(0x3F800000u | m))) != h[m];
  return bad;
}

Result<int64_t> gpu_bf16_pair_mismatches() {
  NVFP4_TRY(cuda_device().status());
  cuda::DeviceBuffer<unsigned long long> d;
  NVFP4_TRY(d.alloc(1));
  NVFP4_CUDA_TRY(cudaMemset(d.get(), 0, sizeof(unsigned long long)));
  bf16_pair_all_patterns<<<4096, 256>>>(d.get());
  NVFP4_CUDA_LAUNCH_TRY("bf16_pair_all_patterns");
  unsigned long long bad = 0;
  NVFP4_CUDA_TRY(cudaMemcpy(&bad, d.get(), sizeof bad, cudaMemcpyDeviceToHost));
  return static_cast<int64_t>(bad);
}

Result<Json> run_bench(const BenchOptions& opt, const std::function<void(const std::string&)>& print) {
  // Sizes first: a one-line refusal instead of a failed allocation halfway through the run.
  if (opt.iters < 1 || opt.warmup < 0) return invalid_argument("bench: iters must be >= 1 and warmup >= 0");
  for (const LinearShape& l : opt.linears) NVFP4_TRY(check_gemm_problem(opt.rows, l.n, l.k, 2, "bench " + l.name));
  if (opt.quantizer) NVFP4_TRY(check_gemm_problem(opt.quant_rows, 1, opt.quant_cols, 1, "bench quantizer"));
  for (const LinearShape& l : opt.linears) NVFP4_TRY(cuda::plan_slices(opt.contract, l.k).status());  // S <= chunks
  NVFP4_ASSIGN_OR_RETURN(DeviceInfo dev, cuda_device());
  const CudaInfo ci = cuda_info();
  const bool blackwell = dev.cc_major == 12;  // cuBLASLt's NVFP4 GPUs, with cc 10
  const std::string here = dev.name + " (compute capability " + std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) + ")";
  const Status sm90_here = cuda::check_kernel_runs_on(GpuGemmKernel::kSm90, dev.cc_major, dev.cc_minor, here);
  const Status native_here = cuda::check_kernel_runs_on(GpuGemmKernel::kSm120Native, dev.cc_major, dev.cc_minor, here);
  // Both sm90 rows (sm90-stream is the same kernel behind the streaming pre-pass) run what the sm90
  // kernel runs.
  const bool sm90_runs_contract = gpu_kernel_runs(GpuGemmKernel::kSm90, opt.contract);
  // A backend the user named must be runnable here: say so before measuring anything.
  if (opt.backends_explicit)
    for (const std::string& b : opt.backends) {
      if ((b == "sm120-native" || b == "sm120p-native") && !native_here.is_ok())
        return unsupported("bench: " + b + ": " + native_here.message());
      if ((b == "sm90" || b == "sm90-stream") && !sm90_here.is_ok()) return unsupported("bench: " + b + ": " + sm90_here.message());
      if ((b == "sm90" || b == "sm90-stream") && !sm90_runs_contract)
        return unsupported("bench: " + b + " runs the sequential contract only, not " + opt.contract.to_string());
      if (b == "cublaslt" && !blackwell && dev.cc_major != 10) {
        NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
        NVFP4_TRY(cublaslt_nvfp4_supported(env));
      }
    }
  // One timing method for every row of the run, restored on the way out.
  struct TimingScope {
    cuda::Timing saved = cuda::timing_mode();
    explicit TimingScope(bool queued) { cuda::timing_mode() = queued ? cuda::Timing::kQueued : cuda::Timing::kSync; }
    ~TimingScope() { cuda::timing_mode() = saved; }
  } timing_scope(opt.queued_timing);
  Json j = Json::object();
  j.set("device", dev.name).set("compute_capability", std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor));
  j.set("sm_count", dev.sm_count).set("driver", ci.driver_version).set("cuda_runtime", ci.runtime_version);
  j.set("commit", opt.commit).set("date", utc_now()).set("command", opt.command).set("activations", opt.activations);
  j.set("timing", opt.queued_timing ? "queued" : "sync").set("contract", opt.contract.to_string());
  j.set("method", "median of " + std::to_string(opt.iters) + " CUDA-event timings after " + std::to_string(opt.warmup) +
                      (opt.queued_timing ? " warm-up runs, the runs enqueued back to back (GPU time)"
                                         : " warm-up runs, each run alone after a synchronize (host launch work included)") +
                      "; weights rotated over copies totalling > 3x L2; baseline cuBLASLt bf16 (F.linear's call) "
                      "of the same shape in the same process");
  Json rows = Json::array();
  print(std::string("shape                              backend          |         us |      TFLOP/s |         GB/s | ratio"));

  // ---------------------------------------------------------------------------------------------
  // Quantizer vs device-to-device copy of the same input.
  if (opt.quantizer) {
    const int64_t R = opt.quant_rows, C = opt.quant_cols;
    const size_t in_bytes = static_cast<size_t>(R * C * 2), out_bytes = static_cast<size_t>(R * C / 2 + R * C / 16);
    std::vector<uint16_t> hx = synthetic_activation(R, C, 7);
    cuda::DeviceBuffer<uint16_t> dx, dcopy;
    cuda::DeviceBuffer<uint8_t> dd, ds;
    NVFP4_TRY(dx.alloc(hx.size()));
    NVFP4_TRY(dcopy.alloc(hx.size()));
    NVFP4_TRY(dd.alloc(R * C / 2));
    NVFP4_TRY(ds.alloc(roundup(R, 128) * roundup(C / 16, 4)));
    NVFP4_CUDA_TRY(cudaMemcpy(dx.get(), hx.data(), in_bytes, cudaMemcpyHostToDevice));
    const float s = global_scale_dynamic(hx.data(), R * C);
    NVFP4_ASSIGN_OR_RETURN(double copy_us, cuda::median_us(opt.iters, opt.warmup, [&](int) {
      NVFP4_CUDA_TRY(cudaMemcpyAsync(dcopy.get(), dx.get(), in_bytes, cudaMemcpyDeviceToDevice));
      return Status::ok();
    }));
    NVFP4_ASSIGN_OR_RETURN(double q_us, cuda::median_us(opt.iters, opt.warmup, [&](int) {
      return cuda::launch_quantize_comfy(dx.get(), R, C, s, dd.get(), ds.get(), true, true, nullptr);
    }));
    const double copy_gbs = 2.0 * in_bytes / copy_us * 1e-3, q_gbs = static_cast<double>(in_bytes + out_bytes) / q_us * 1e-3;
    char line[256];
    std::snprintf(line, sizeof line, "quantize %lldx%lld bf16 (comfy-cuda)   | %10.1f us | %8.1f GB/s moved | copy %.1f GB/s | %.1f%% of copy",
                  static_cast<long long>(R), static_cast<long long>(C), q_us, q_gbs, copy_gbs, 100.0 * q_gbs / copy_gbs);
    print(line);
    Json q = Json::object();
    q.set("shape", Json::array().push(R).push(C)).set("us", q_us).set("gb_per_s", q_gbs);
    q.set("bf16_input_gb_per_s", in_bytes / q_us * 1e-3);
    q.set("d2d_copy_us", copy_us).set("d2d_copy_gb_per_s", copy_gbs).set("fraction_of_copy", q_gbs / copy_gbs);
    j.set("quantizer", q);
  }

  // ---------------------------------------------------------------------------------------------
  // GEMMs
  for (const auto& l : opt.linears) {
    const int64_t M = opt.rows, N = l.n, K = l.k, k64 = roundup(K, 64), lda = k64 / 2;
    const double flops = 2.0 * M * N * K;
    const std::string shape = l.name + " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    const int64_t bf16_w = N * K * 2;
    const int copies_bf16 = static_cast<int>(std::max<int64_t>(2, ceil_div(3 * dev.l2_bytes, bf16_w)));
    NVFP4_ASSIGN_OR_RETURN(double base_us, cublaslt_bf16_linear_us(M, N, K, opt.iters, opt.warmup, copies_bf16));
    print(fmt_row(shape, "cublas-bf16", base_us, flops, static_cast<double>(bf16_w + M * K * 2 + M * N * 2), base_us));
    Json sj = Json::object();
    sj.set("linear", l.name).set("mnk", Json::array().push(M).push(N).push(K));
    sj.set("cublas_bf16_us", base_us).set("cublas_bf16_weight_copies", copies_bf16);
    Json kernels = Json::array();

    // NVFP4 operands: quantized synthetic tensors, weights replicated for rotation.
    auto prob = prepare_layer(l, M, 1234, "");
    if (!prob.is_ok()) return prob.status();
    NVFP4_ASSIGN_OR_RETURN(ActivationKind akind, parse_activation_kind(opt.activations));
    if (akind != ActivationKind::kMiniMax) {  // the same weight, other activations (ComfyUI's dynamic scale)
      prob->x = synthetic_activation(M, K, 4321, akind);
      prob->s_x = global_scale_dynamic(prob->x.data(), prob->x.size());
      QuantizeOptions qo;
      qo.pad = true;
      NVFP4_ASSIGN_OR_RETURN(prob->a, quantize(prob->x.data(), M, K, prob->s_x, qo));
      prob->alpha = prob->s_x * prob->s_w;
    }
    std::vector<uint8_t> ha, hsa, hw, hsw;
    cuda::prepare_operand(prob->a, lda, ha, hsa);
    cuda::prepare_operand(prob->w, lda, hw, hsw);
    const int64_t nvfp4_w = static_cast<int64_t>(hw.size() + hsw.size());
    const int copies = static_cast<int>(std::max<int64_t>(2, ceil_div(3 * dev.l2_bytes, nvfp4_w)));
    cuda::DeviceBuffer<uint8_t> da, dsa;
    std::vector<std::unique_ptr<cuda::DeviceBuffer<uint8_t>>> dw, dsw;
    NVFP4_TRY(cuda::upload(da, ha.data(), ha.size()));
    NVFP4_TRY(cuda::upload(dsa, hsa.data(), hsa.size()));
    for (int c = 0; c < copies; ++c) {
      dw.push_back(std::make_unique<cuda::DeviceBuffer<uint8_t>>());
      dsw.push_back(std::make_unique<cuda::DeviceBuffer<uint8_t>>());
      NVFP4_TRY(cuda::upload(*dw.back(), hw.data(), hw.size()));
      NVFP4_TRY(cuda::upload(*dsw.back(), hsw.data(), hsw.size()));
    }
    cuda::DeviceBuffer<float> draw;
    cuda::DeviceBuffer<uint16_t> dout;
    NVFP4_TRY(draw.alloc(M * N));
    NVFP4_TRY(dout.alloc(M * N));
    const double bytes = static_cast<double>(nvfp4_w + ha.size() + hsa.size() + M * N * 2);
    auto row = [&](const std::string& name, double us, double row_bytes, int weight_copies, Json extra) {
      print(fmt_row(shape, name, us, flops, row_bytes, base_us));
      extra.set("backend", name).set("us", us).set("tflops", flops / us * 1e-6).set("gb_per_s", row_bytes / us * 1e-3);
      extra.set("x_cublas_bf16", base_us / us).set("weight_copies", weight_copies);
      kernels.push(extra);
    };
    // The memory-path proxy's yardstick: a device-to-device copy of the weight bytes, same process.
    double copy_gbs = 0;
    for (const std::string& b : opt.backends)
      if (b == "sm120p-proxy" && copy_gbs == 0) {
        cuda::DeviceBuffer<uint8_t> dst;
        NVFP4_TRY(dst.alloc(static_cast<size_t>(nvfp4_w)));
        NVFP4_ASSIGN_OR_RETURN(double copy_us, cuda::median_us(opt.iters, opt.warmup, [&](int i) {
          NVFP4_CUDA_TRY(cudaMemcpyAsync(dst.get(), dw[i % copies]->get(), hw.size(), cudaMemcpyDeviceToDevice));
          NVFP4_CUDA_TRY(cudaMemcpyAsync(dst.get() + hw.size(), dsw[i % copies]->get(), hsw.size(), cudaMemcpyDeviceToDevice));
          return Status::ok();
        }));
        copy_gbs = 2.0 * static_cast<double>(nvfp4_w) / copy_us * 1e-3;  // read + write
        sj.set("weight_copy_us", copy_us).set("weight_copy_gb_per_s", copy_gbs);
      }
    for (const std::string& b : opt.backends) {
      if ((b == "sm120-native" || b == "sm120p-native") && !native_here.is_ok()) continue;  // default list: rows this GPU has
      if ((b == "sm90" || b == "sm90-stream") && (!sm90_here.is_ok() || !sm90_runs_contract)) continue;
      if (b == "cublaslt") {
        if (!blackwell && dev.cc_major != 10) continue;
        CublasLtPlanRequest req;
        NVFP4_ASSIGN_OR_RETURN(auto r, cublaslt_gemm(prob->a, prob->w, prob->alpha, nullptr, req));
        row(b, r.kernel_ms * 1000.0, bytes, 1, Json::object().set("note", "single timed run (the call re-plans each time)"));
      } else if (b == "cublas-fp8") {
        const int copies_fp8 = static_cast<int>(std::max<int64_t>(2, ceil_div(3 * dev.l2_bytes, N * K)));
        NVFP4_ASSIGN_OR_RETURN(double us, cublaslt_fp8_linear_us(M, N, K, opt.iters, opt.warmup, copies_fp8));
        row(b, us, static_cast<double>(N * K + M * K + M * N * 2), copies_fp8,
            Json::object().set("note", "E4M3 x E4M3, per-tensor scales, bf16 out, fp32 compute (not exact)"));
      } else if (b == "comfy-hopper") {
        // ComfyUI on Hopper: the checkpoint's NVFP4 weight dequantized (comfy-cuda) every call, then bf16.
        const Tensor& w = prob->w;
        if (w.geom.cols != w.geom.cols16 || w.nibbles != NibbleOrder::kHiFirst || w.scale_layout != ScaleLayout::kSwizzled128x4)
          return invalid_argument("bench: comfy-hopper needs K % 16 == 0 and a checkpoint-layout weight");
        std::vector<std::unique_ptr<cuda::DeviceBuffer<uint8_t>>> cd, cs;
        for (int c = 0; c < copies; ++c) {
          cd.push_back(std::make_unique<cuda::DeviceBuffer<uint8_t>>());
          cs.push_back(std::make_unique<cuda::DeviceBuffer<uint8_t>>());
          NVFP4_TRY(cuda::upload(*cd.back(), w.data.data(), w.data.size()));
          NVFP4_TRY(cuda::upload(*cs.back(), w.scales.data(), w.scales.size()));
        }
        cuda::DeviceBuffer<uint16_t> wb;
        NVFP4_TRY(wb.alloc(static_cast<size_t>(N * K)));
        auto dequant = [&](int i) -> Result<const void*> {
          NVFP4_TRY(cuda::launch_dequantize_comfy(cd[i % copies]->get(), cs[i % copies]->get(), N, K, w.global_scale, true, wb.get(), nullptr));
          return static_cast<const void*>(wb.get());
        };
        NVFP4_TRY(dequant(0).status());
        std::vector<uint16_t> got(static_cast<size_t>(N * K));
        NVFP4_CUDA_TRY(cudaMemcpy(got.data(), wb.get(), got.size() * 2, cudaMemcpyDeviceToHost));
        const bool exact = got == dequantize(w, DequantRecipe::kComfyCuda);
        NVFP4_ASSIGN_OR_RETURN(double us, cublaslt_bf16_linear_us_with(M, N, K, opt.iters, opt.warmup, dequant));
        row(b, us, static_cast<double>(nvfp4_w + N * K * 4 + M * K * 2 + M * N * 2), copies,
            Json::object().set("note", "comfy-cuda dequantization of the weight + cuBLASLt bf16, every call").set("dequant_bit_exact_vs_cpu", exact));
      } else if (b == "sm90" || b == "sm90-stream") {
        const bool stream = b == "sm90-stream";
        const cuda::sm90::HostWeights hwp = cuda::sm90::HostWeights::from_operand(hw, hsw, N, k64 / 64);
        std::vector<std::unique_ptr<cuda::sm90::DeviceWeights>> sw;
        for (int c = 0; c < copies; ++c) {
          sw.push_back(std::make_unique<cuda::sm90::DeviceWeights>());
          NVFP4_TRY(sw.back()->upload(hwp));
        }
        cuda::DeviceBuffer<uint16_t> dx;
        cuda::DeviceBuffer<uint32_t> dpartials;
        cuda::DeviceBuffer<float> dalpha;
        cuda::DeviceBuffer<unsigned long long> counts;
        NVFP4_TRY(cuda::upload(dx, prob->x.data(), prob->x.size()));
        NVFP4_TRY(dpartials.alloc(static_cast<size_t>(cuda::amax_partial_count(M * K))));
        NVFP4_TRY(dalpha.alloc(1));
        NVFP4_TRY(counts.alloc(cuda::Sm90Gemm::kCounts));
        std::vector<cuda::sm90::Config> cfgs;
        for (const std::string& cs : opt.sm90_configs) {
          cuda::sm90::Config c;
          if (!cuda::sm90::Config::parse(cs.c_str(), c))
            return invalid_argument("bench: sm90 configuration '" + cs + "' is not BMxRWxTWxNH or BMxRWxTWxNHxKS");
          cfgs.push_back(c);
        }
        if (cfgs.empty()) cfgs.push_back(cuda::sm90::pick_config(M, N, dev.sm_count));
        for (const cuda::sm90::Config& cfg : cfgs) {
          cuda::sm90::DeviceActivations act;
          NVFP4_TRY(act.alloc(M, k64 / 64, cfg));
          cuda::Sm90Prep prep = act.prep_args();
          if (stream) {
            prep.x = dx.get();
            prep.k = K;
            prep.x_amax_partials = dpartials.get();  // the pre-pass runs the amax first
            prep.s_w = prob->w.global_scale;
            prep.alpha_out = dalpha.get();
          } else {
            prep.a = da.get();
            prep.sfa = dsa.get();
          }
          // The pre-pass (its amax pass first when streaming): timed alone below, and as part of every run.
          auto prepass = [&](int) -> Status { return cuda::launch_sm90_prep(prep, nullptr); };
          // Run i's GEMM arguments (i < 0: the counted run, on the first weight copy).
          auto gemm_for = [&](int i) {
            cuda::Sm90Gemm g = act.gemm_args(*sw[(i < 0 ? 0 : i) % copies]);
            g.alpha = prob->alpha;
            if (stream) g.alpha_dev = dalpha.get();
            g.out = dout.get();
            return g;
          };
          auto run = [&](int i) -> Status {
            cuda::Sm90Gemm g = gemm_for(i);
            if (i < 0) g.counts = counts.get();
            NVFP4_TRY(prepass(i));
            g.after_prepass = true;
            return cuda::launch_sm90_gemm(g, dev.sm_count, nullptr);
          };
          NVFP4_CUDA_TRY(cudaMemset(counts.get(), 0, cuda::Sm90Gemm::kCounts * sizeof(unsigned long long)));
          NVFP4_TRY(run(-1));  // once with the path counters
          NVFP4_CUDA_TRY(cudaDeviceSynchronize());
          unsigned long long c[cuda::Sm90Gemm::kCounts];
          NVFP4_CUDA_TRY(cudaMemcpy(c, counts.get(), sizeof c, cudaMemcpyDeviceToHost));
          NVFP4_ASSIGN_OR_RETURN(double us, cuda::median_us(opt.iters, opt.warmup, run));
          // The host's share: the mean wall time to enqueue one run (pre-pass and GEMM launches,
          // argument set-up, tensor map), the GPU left to catch up afterwards.
          NVFP4_CUDA_TRY(cudaDeviceSynchronize());
          const auto h0 = std::chrono::steady_clock::now();
          for (int i = 0; i < opt.iters; ++i) NVFP4_TRY(run(i));
          const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / opt.iters;
          NVFP4_CUDA_TRY(cudaDeviceSynchronize());
          // What of `us` is not the kernel.
          NVFP4_ASSIGN_OR_RETURN(double prepass_us, cuda::median_us(opt.iters, opt.warmup, prepass));
          // The GEMM alone on the last pre-pass's outputs (a plain launch: nothing to wait for), so
          // that us - gemm_alone_us is what the pre-pass adds to a run, launch and latency included
          // (up to 128 tokens; at 4096 the GEMMs back to back find less of A' in L2 than after its
          // pre-pass, and the difference is not the pre-pass's alone: results v20 r5).
          auto gemm_alone = [&](int i) -> Status { return cuda::launch_sm90_gemm(gemm_for(i), dev.sm_count, nullptr); };
          NVFP4_ASSIGN_OR_RETURN(double gemm_us, cuda::median_us(opt.iters, opt.warmup, gemm_alone));
          const std::string cfg_name = cfg.name();
          const std::string name = cfgs.size() > 1 ? b + "@" + cfg_name : b;
          // Thread-chunks: each consumer thread holds bm / 2 elements of a chunk.
          const double thread_chunks = static_cast<double>(c[0]) / (cfg.bm / 2);
          Json extra = Json::object();
          extra.set("config", cfg_name).set("element_steps", static_cast<int64_t>(c[0]));
          extra.set("tile_test_misses", static_cast<int64_t>(c[1])).set("group_test_misses", static_cast<int64_t>(c[2]));
          extra.set("slow_steps", static_cast<int64_t>(c[3]));
          extra.set("tile_test_pass_fraction", thread_chunks > 0 ? 1.0 - static_cast<double>(c[1]) / thread_chunks : 1.0);
          extra.set("fast_fraction", c[0] ? 1.0 - static_cast<double>(c[3]) / static_cast<double>(c[0]) : 1.0);
          extra.set("includes", stream ? "amax + quantize pre-pass + GEMM" : "dequantize-A pre-pass + GEMM");
          extra.set("prepass_us", prepass_us).set("gemm_alone_us", gemm_us).set("host_enqueue_us", host_us);
          row(name, us, stream ? bytes - static_cast<double>(ha.size() + hsa.size()) + M * K * 2 : bytes, copies, extra);
          char line[200];
          std::snprintf(line, sizeof line, "%-34s %-16s |   pre-pass alone %.1f us, GEMM alone %.1f us; host enqueue %.1f us", shape.c_str(),
                        name.c_str(), prepass_us, gemm_us, host_us);
          print(line);
        }
      } else {
        const bool proxy = b == "sm120p-proxy";
        auto k = proxy ? Result<GpuGemmKernel>(GpuGemmKernel::kSm120pNative) : parse_gpu_kernel(b);
        if (!k.is_ok()) return k.status();
        // Under a split-K contract a run is the kernel's K-slice partials, then their merge in slice
        // order (the validated path of src/cuda/runtime.cu), timed together.
        NVFP4_ASSIGN_OR_RETURN(const cuda::SlicePlan plan, cuda::plan_slices(opt.contract, K));
        cuda::DeviceBuffer<float> dpartials;
        NVFP4_TRY(dpartials.alloc(plan.workspace_floats_per_output() * M * N));
        auto run = [&](int i) -> Status {
          cuda::GemmOperands op{da.get(), dw[i % copies]->get(), dsa.get(), dsw[i % copies]->get(), M, N, k64, prob->alpha,
                                nullptr, draw.get(), dout.get()};
          // The proxy times the production data path, which skips the fp32 copy of the accumulators
          // (docs/gb10-performance.md: raw = nullptr); the other rows keep it, as they always have.
          if (proxy) op.raw = nullptr;
          cuda::set_slices(op, plan, dpartials.get());
          if (!proxy) return cuda::launch_gemm_kernel(op, k.value(), dev.sm_count, nullptr);  // kernel and merge
          NVFP4_TRY(cuda::launch_sm120p_gemm(op, cuda::Sm120pMode::kProxy, dev.sm_count, nullptr));
          return op.splits > 1 ? cuda::launch_merge_splitk(op, nullptr) : Status::ok();
        };
        NVFP4_ASSIGN_OR_RETURN(double us, cuda::median_us(opt.iters, opt.warmup, run));
        Json extra = Json::object();
        extra.set("contract", opt.contract.to_string());
        if (b.rfind("sm120p", 0) == 0) {  // the pipelined kernel's tile width for this shape
          NVFP4_ASSIGN_OR_RETURN(const int tile_n, cuda::sm120p_tile_n(M, N, plan.splits, dev.sm_count));
          extra.set("tile_n", static_cast<int64_t>(tile_n));
        }
        if (proxy) {  // the data path alone: weight bytes streamed vs the copy's bandwidth
          const double w_gbs = static_cast<double>(nvfp4_w) / us * 1e-3;
          extra.set("weight_gb_per_s", w_gbs).set("fraction_of_copy", w_gbs / copy_gbs);
          char line[200];
          std::snprintf(line, sizeof line, "%-34s %-16s | weight stream %8.1f GB/s = %5.1f%% of the %.1f GB/s weight copy",
                        shape.c_str(), "sm120p-proxy", w_gbs, 100.0 * w_gbs / copy_gbs, copy_gbs);
          print(line);
        }
        row(opt.contract.is_sequential() ? b : b + "@" + opt.contract.to_string(), us, bytes, copies, extra);
      }
    }
    sj.set("kernels", kernels);
    rows.push(sj);
  }
  j.set("gemm", rows);
  return j;
}

}  // namespace nvfp4
