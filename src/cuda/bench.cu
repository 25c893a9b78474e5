// GPU benchmarks (include/nvfp4/bench.hpp) and the on-GPU check of the rcp.approx emulation.
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

Result<Json> run_bench(const BenchOptions& opt, const std::function<void(const std::string&)>& print) {
  // Sizes first: a one-line refusal instead of a failed allocation halfway through the run.
  if (opt.iters < 1 || opt.warmup < 0) return invalid_argument("bench: iters must be >= 1 and warmup >= 0");
  for (const LinearShape& l : opt.linears) NVFP4_TRY(check_gemm_problem(opt.rows, l.n, l.k, 2, "bench " + l.name));
  if (opt.quantizer) NVFP4_TRY(check_gemm_problem(opt.quant_rows, 1, opt.quant_cols, 1, "bench quantizer"));
  NVFP4_ASSIGN_OR_RETURN(DeviceInfo dev, cuda_device());
  const CudaInfo ci = cuda_info();
  const bool blackwell = dev.cc_major == 12;
  // A backend the user named must be runnable here: say so before measuring anything.
  if (opt.backends_explicit)
    for (const std::string& b : opt.backends) {
      if (b == "sm120-native" && !blackwell)
        return unsupported("bench: sm120-native needs an SM120/SM121 GPU; this is " + dev.name);
      if (b == "cublaslt" && !blackwell && dev.cc_major != 10) {
        NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
        NVFP4_TRY(cublaslt_nvfp4_supported(env));
      }
    }
  Json j = Json::object();
  j.set("device", dev.name).set("compute_capability", std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor));
  j.set("sm_count", dev.sm_count).set("driver", ci.driver_version).set("cuda_runtime", ci.runtime_version);
  j.set("commit", opt.commit).set("date", utc_now()).set("command", opt.command);
  j.set("method", "median of " + std::to_string(opt.iters) + " CUDA-event timings after " + std::to_string(opt.warmup) +
                      " warm-up runs; weights rotated over copies totalling > 3x L2; baseline cuBLASLt bf16 (F.linear's call) "
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
    for (const std::string& b : opt.backends) {
      if (b == "sm120-native" && !blackwell) continue;  // default list: rows this GPU has
      double us = 0;
      if (b == "cublaslt") {
        if (!blackwell && dev.cc_major != 10) continue;
        CublasLtPlanRequest req;
        NVFP4_ASSIGN_OR_RETURN(auto r, cublaslt_gemm(prob->a, prob->w, prob->alpha, nullptr, req));
        us = r.kernel_ms * 1000.0;  // single timed run (the call re-plans each time)
      } else {
        auto k = parse_gpu_kernel(b);
        if (!k.is_ok()) return k.status();
        auto run = [&](int i) {
          cuda::GemmOperands op{da.get(), dw[i % copies]->get(), dsa.get(), dsw[i % copies]->get(), M, N, k64, prob->alpha,
                                nullptr, draw.get(), dout.get()};
          return k.value() == GpuGemmKernel::kModel ? cuda::launch_gemm_model(op, nullptr)
                                                    : cuda::launch_sm120_gemm(op, k.value() == GpuGemmKernel::kSm120Emulated,
                                                                              dev.sm_count, nullptr);
        };
        NVFP4_ASSIGN_OR_RETURN(us, cuda::median_us(opt.iters, opt.warmup, run));
      }
      print(fmt_row(shape, b, us, flops, bytes, base_us));
      Json kj = Json::object();
      kj.set("backend", b).set("us", us).set("tflops", flops / us * 1e-6).set("gb_per_s", bytes / us * 1e-3);
      kj.set("x_cublas_bf16", base_us / us).set("weight_copies", copies);
      kernels.push(kj);
    }
    sj.set("kernels", kernels);
    rows.push(sj);
  }
  j.set("gemm", rows);
  return j;
}

}  // namespace nvfp4
