// Host side of the GPU paths: device discovery, buffers, layout preparation, launches, timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "common/check.cuh"
#include "common/kernels.hpp"
#include "common/operands.hpp"
#include "nvfp4/cuda.hpp"
#include "sm90/sm90_host.hpp"
#include "nvfp4/limits.hpp"

namespace nvfp4 {

namespace {
bool is_blackwell_consumer(const DeviceInfo& d) { return d.cc_major == 12 && (d.cc_minor == 0 || d.cc_minor == 1); }
bool is_hopper(const DeviceInfo& d) { return d.cc_major == 9 && d.cc_minor == 0; }
std::string describe(const DeviceInfo& d) {
  return d.name + " (compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
}
}  // namespace

Status cuda::check_kernel_runs_on(GpuGemmKernel kernel, int major, int minor, const std::string& where) {
  const bool native = kernel == GpuGemmKernel::kSm120Native || kernel == GpuGemmKernel::kSm120pNative;
  if (kernel == GpuGemmKernel::kSm90 && !(major == 9 && minor == 0))
    return unsupported("kernel sm90 needs a Hopper GPU (compute capability 9.0); this is " + where);
  if (native && !(major == 12 && (minor == 0 || minor == 1)))
    return unsupported(std::string("kernel ") + to_string(kernel) + " needs an SM120/SM121 GPU; this is " + where);
  const KernelCode code = kernels_cover(built_cuda_targets(), major, minor);
  const std::string built(built_cuda_targets());
  if (code == KernelCode::kNone)
    return unsupported(std::string("kernel ") + to_string(kernel) + ": this build has no code for " + where +
                       " (it is built for " + built + ")");
  // wgmma and the block-scaled MMA are compiled only into architecture-specific images; in any other
  // image these kernels are a trap.
  if ((kernel == GpuGemmKernel::kSm90 || native) && code != KernelCode::kArchSpecific)
    return unsupported(std::string("kernel ") + to_string(kernel) + " needs machine code for sm_" + std::to_string(major) +
                       std::to_string(minor) + "a, which this build (" + built + ") does not have for " + where);
  return Status::ok();
}

CudaInfo cuda_info() {
  CudaInfo info;
  info.built_with_cuda = true;
  info.built_targets = built_cuda_targets();
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    info.error = std::string("no CUDA device: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return info;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    d.l2_bytes = p.l2CacheSize;
    d.smem_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
    info.devices.push_back(d);
  }
  if (info.devices.empty()) info.error = "no CUDA device found";
  return info;
}

Result<DeviceInfo> cuda_device() {
  const CudaInfo info = cuda_info();
  if (info.devices.empty()) return unsupported(info.error.empty() ? "no CUDA device" : info.error);
  // The host-memory entry points allocate and launch on the thread's current device: that is the
  // one to check and to size grids for, not device 0.
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    current = info.devices.front().index;
  }
  const DeviceInfo* found = &info.devices.front();
  for (const DeviceInfo& x : info.devices)
    if (x.index == current) found = &x;
  const DeviceInfo& d = *found;
  if (kernels_cover(built_cuda_targets(), d.cc_major, d.cc_minor) == KernelCode::kNone)
    return unsupported("GPU " + d.name + " (compute capability " + std::to_string(d.cc_major) + "." +
                       std::to_string(d.cc_minor) + ") is not supported: kernels are built for " + info.built_targets);
  return d;
}

Result<Tensor> quantize_gpu(const uint16_t* x, int64_t rows, int64_t cols, float global_scale, const QuantizeOptions& opt) {
  NVFP4_TRY(cuda::check_quantize_gpu_args(rows, cols, global_scale, opt));
  if (x == nullptr) return invalid_argument("quantize_gpu: input pointer is null");
  NVFP4_TRY(cuda_device().status());  // a usable GPU, or why not
  Tensor t;
  t.geom = Geometry::of(rows, cols);
  t.nibbles = opt.nibbles;
  t.scale_layout = opt.scale_layout;
  t.global_scale = global_scale;
  t.data.resize(t.geom.data_bytes());
  t.scales.resize(t.geom.scale_bytes(opt.scale_layout));
  cuda::DeviceBuffer<uint16_t> dx;
  cuda::DeviceBuffer<uint8_t> dd, ds;
  NVFP4_TRY(cuda::upload(dx, x, static_cast<size_t>(rows * cols)));
  NVFP4_TRY(dd.alloc(t.data.size()));
  NVFP4_TRY(ds.alloc(t.scales.size()));
  NVFP4_CUDA_TRY(cudaMemset(ds.get(), 0, ds.bytes()));  // padding bytes of the swizzled layout
  NVFP4_TRY(cuda::launch_quantize_comfy(dx.get(), rows, cols, global_scale, dd.get(), ds.get(),
                                        opt.nibbles == NibbleOrder::kHiFirst,
                                        opt.scale_layout == ScaleLayout::kSwizzled128x4, nullptr));
  NVFP4_CUDA_TRY(cudaDeviceSynchronize());
  NVFP4_CUDA_TRY(cudaMemcpy(t.data.data(), dd.get(), dd.bytes(), cudaMemcpyDeviceToHost));
  NVFP4_CUDA_TRY(cudaMemcpy(t.scales.data(), ds.get(), ds.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

namespace {
// The pipelined SM120 kernel: emulated everywhere (validated bit for bit on the H200,
// benchmarks/results/2026-12-01-h200-sm120p/), native on SM120/SM121.
// On an SM120/SM121 GPU the pipelined kernel comes first: it is the production kernel there (a
// shared-memory pipeline, each weight byte read once at M <= 128; docs/gb10-performance.md), so
// "auto" (the list's first entry) picks it over the first SM120 kernel (direct global loads).
void add_pipelined_kernels(const DeviceInfo& d, std::vector<GpuGemmKernel>& k) {
  if (is_blackwell_consumer(d)) k.insert(k.begin(), GpuGemmKernel::kSm120pNative);
  k.push_back(GpuGemmKernel::kSm120pEmulated);
}
}  // namespace

std::vector<GpuGemmKernel> available_gpu_kernels() {
  auto d = cuda_device();
  if (!d.is_ok()) return {};
  std::vector<GpuGemmKernel> k = {GpuGemmKernel::kModel, GpuGemmKernel::kSm120Emulated};
  if (is_blackwell_consumer(d.value())) k.insert(k.begin(), GpuGemmKernel::kSm120Native);
  add_pipelined_kernels(d.value(), k);
  if (is_hopper(d.value())) k.insert(k.begin(), GpuGemmKernel::kSm90);
  k.erase(std::remove_if(k.begin(), k.end(),
                         [&](GpuGemmKernel x) {
                           return !cuda::check_kernel_runs_on(x, d->cc_major, d->cc_minor, describe(d.value())).is_ok();
                         }),
          k.end());
  return k;
}

namespace {
using cuda::prepare_operand;
using cuda::upload;

Status check_kernel_runs_here(GpuGemmKernel kernel, const DeviceInfo& dev) {
  if (kernel == GpuGemmKernel::kSm120Native && !is_blackwell_consumer(dev))
    return unsupported("kernel sm120-native needs an SM120/SM121 GPU (compute capability 12.0/12.1); this is " + dev.name +
                       " (" + std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) +
                       "): use sm120-emulated to run the same kernel with the MMA emulated");
  if (kernel == GpuGemmKernel::kSm90 && !is_hopper(dev))
    return unsupported("kernel sm90 needs a Hopper GPU (compute capability 9.0: wgmma, TMA); this is " + dev.name + " (" +
                       std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) + ")");
  if (kernel == GpuGemmKernel::kSm120pNative && !is_blackwell_consumer(dev))
    return unsupported("kernel sm120p-native needs an SM120/SM121 GPU; this is " + dev.name +
                       ": use sm120p-emulated to run the same kernel with the MMA emulated");
  return cuda::check_kernel_runs_on(kernel, dev.cc_major, dev.cc_minor, describe(dev));
}

// Times `launch` with CUDA events, then brings the [m][n] outputs (and, when given, the device s_x)
// back: the common tail of every GEMM entry point.
Result<GpuGemmOutput> timed_launch(const std::function<Status()>& launch, const char* what, const float* draw,
                                   const uint16_t* dout, int64_t m, int64_t n, const float* s_x_dev) {
  cudaEvent_t ev0, ev1;
  NVFP4_CUDA_TRY(cudaEventCreate(&ev0));
  NVFP4_CUDA_TRY(cudaEventCreate(&ev1));
  cudaEventRecord(ev0);
  Status st = launch();
  cudaEventRecord(ev1);
  const cudaError_t sync = cudaEventSynchronize(ev1);
  float ms = 0;
  cudaEventElapsedTime(&ms, ev0, ev1);
  cudaEventDestroy(ev0);
  cudaEventDestroy(ev1);
  NVFP4_TRY(st);
  if (sync != cudaSuccess) return cuda_error(std::string(what) + " failed: " + cudaGetErrorString(sync));
  GpuGemmOutput out;
  out.kernel_ms = ms;
  out.raw.resize(m * n);
  out.out.resize(m * n);
  NVFP4_CUDA_TRY(cudaMemcpy(out.raw.data(), draw, m * n * sizeof(float), cudaMemcpyDeviceToHost));
  NVFP4_CUDA_TRY(cudaMemcpy(out.out.data(), dout, m * n * 2, cudaMemcpyDeviceToHost));
  if (s_x_dev) NVFP4_CUDA_TRY(cudaMemcpy(&out.s_x, s_x_dev, 4, cudaMemcpyDeviceToHost));
  return out;
}

// Launches one GEMM on prepared device operands (op's output pointers are filled here) under the
// planned contract and brings the outputs back.
Result<GpuGemmOutput> run_gemm(cuda::GemmOperands op, GpuGemmKernel kernel, const DeviceInfo& dev,
                               const cuda::SlicePlan& plan) {
  const int64_t M = op.m, N = op.n;
  cuda::DeviceBuffer<uint16_t> dout;
  cuda::DeviceBuffer<float> draw, dsx, dpartials;
  NVFP4_TRY(draw.alloc(M * N));
  NVFP4_TRY(dout.alloc(M * N));
  NVFP4_TRY(dsx.alloc(1));
  op.raw = draw.get();
  op.out = dout.get();
  if (op.x) op.s_x_out = dsx.get();
  NVFP4_TRY(dpartials.alloc(plan.workspace_floats_per_output() * M * N));
  cuda::set_slices(op, plan, dpartials.get());
  return timed_launch([&] { return cuda::launch_gemm_kernel(op, kernel, dev.sm_count, nullptr); }, "GEMM kernel", draw.get(),
                      dout.get(), M, N, op.x ? dsx.get() : nullptr);
}

// The sm90 path: pre-pass (from packed A, or from bf16 x) then the GEMM, timed together, in the
// launcher's tile configuration (NVFP4_SM90_CONFIG names another, for tuning runs).
Result<GpuGemmOutput> run_sm90(cuda::Sm90Prep prep, const Tensor& w, int64_t m, float alpha, const float* alpha_dev,
                               const uint16_t* bias_dev, const DeviceInfo& dev) {
  cuda::sm90::DeviceWeights dw;
  NVFP4_TRY(dw.upload(w));
  cuda::sm90::DeviceActivations act;
  NVFP4_TRY(act.alloc(m, dw.chunks, cuda::sm90::pick_config(m, w.geom.rows, dev.sm_count)));
  act.set_outputs(prep);
  cuda::Sm90Gemm g = act.gemm_args(dw);
  g.alpha = alpha;
  g.alpha_dev = alpha_dev;
  g.bias = bias_dev;
  const int64_t N = w.geom.rows;
  cuda::DeviceBuffer<uint16_t> dout;
  cuda::DeviceBuffer<float> draw;
  NVFP4_TRY(draw.alloc(m * N));
  NVFP4_TRY(dout.alloc(m * N));
  g.raw = draw.get();
  g.out = dout.get();
  cuda::DeviceBuffer<unsigned long long> dcounts;
  NVFP4_TRY(dcounts.alloc(cuda::Sm90Gemm::kCounts));
  NVFP4_CUDA_TRY(cudaMemset(dcounts.get(), 0, cuda::Sm90Gemm::kCounts * sizeof(unsigned long long)));
  g.counts = dcounts.get();
  NVFP4_ASSIGN_OR_RETURN(
      GpuGemmOutput out,
      timed_launch(
          [&]() -> Status {
            NVFP4_TRY(cuda::launch_sm90_prep(prep, nullptr));
            g.after_prepass = true;
            return cuda::launch_sm90_gemm(g, dev.sm_count, nullptr);
          },
          "sm90 kernel", draw.get(), dout.get(), m, N, prep.s_x_out));
  unsigned long long counts[cuda::Sm90Gemm::kCounts];
  NVFP4_CUDA_TRY(cudaMemcpy(counts, dcounts.get(), sizeof counts, cudaMemcpyDeviceToHost));
  out.steps = static_cast<int64_t>(counts[0]);
  out.tile_misses = static_cast<int64_t>(counts[1]);
  out.group_misses = static_cast<int64_t>(counts[2]);
  out.slow_steps = static_cast<int64_t>(counts[3]);
  return out;
}
}  // namespace

std::vector<std::string> sm90_configs() { return cuda::sm90_config_names(); }
std::string sm90_config_for(int64_t m, int64_t n, int sm_count) { return cuda::sm90_config_name_for(m, n, sm_count); }

Result<GpuGemmOutput> gemm_gpu(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias, GpuGemmKernel kernel,
                               const ReductionContract& contract) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols)
    return invalid_argument("K mismatch: activation has K = " + std::to_string(a.geom.cols) + ", weight has K = " +
                            std::to_string(w.geom.cols));
  NVFP4_TRY(check_gemm_problem(a.geom.rows, w.geom.rows, a.geom.cols, 1, "gemm_gpu"));
  NVFP4_TRY(check_gpu_contract(kernel, contract, a.geom.cols));
  NVFP4_ASSIGN_OR_RETURN(cuda::SlicePlan plan, cuda::plan_slices(contract, a.geom.cols));
  NVFP4_ASSIGN_OR_RETURN(DeviceInfo dev, cuda_device());
  NVFP4_TRY(check_kernel_runs_here(kernel, dev));
  const int64_t k64 = roundup(a.geom.cols16, 64), lda = k64 / 2;
  std::vector<uint8_t> ha, hw, hsa, hsw;
  prepare_operand(a, lda, ha, hsa);
  cuda::DeviceBuffer<uint8_t> da, dw, dsa, dsw;
  cuda::DeviceBuffer<uint16_t> dbias;
  if (kernel == GpuGemmKernel::kSm90) {  // prepacks the weight its own way (run_sm90)
    NVFP4_TRY(upload(da, ha.data(), ha.size()));
    NVFP4_TRY(upload(dsa, hsa.data(), hsa.size()));
    if (bias) NVFP4_TRY(upload(dbias, bias, static_cast<size_t>(w.geom.rows)));
    cuda::Sm90Prep prep;
    prep.a = da.get();
    prep.sfa = dsa.get();
    return run_sm90(prep, w, a.geom.rows, alpha, nullptr, bias ? dbias.get() : nullptr, dev);
  }
  prepare_operand(w, lda, hw, hsw);
  NVFP4_TRY(upload(da, ha.data(), ha.size()));
  NVFP4_TRY(upload(dw, hw.data(), hw.size()));
  NVFP4_TRY(upload(dsa, hsa.data(), hsa.size()));
  NVFP4_TRY(upload(dsw, hsw.data(), hsw.size()));
  if (bias) NVFP4_TRY(upload(dbias, bias, static_cast<size_t>(w.geom.rows)));
  cuda::GemmOperands op{};
  op.a = da.get();
  op.w = dw.get();
  op.sfa = dsa.get();
  op.sfw = dsw.get();
  op.m = a.geom.rows;
  op.n = w.geom.rows;
  op.k64 = k64;
  op.alpha = alpha;
  op.bias = bias ? dbias.get() : nullptr;
  return run_gemm(op, kernel, dev, plan);
}

Result<GpuGemmOutput> gemm_gpu_stream_a(const uint16_t* x, int64_t m, int64_t k, const Tensor& w, const uint16_t* bias,
                                        GpuGemmKernel kernel, const ReductionContract& contract, float s_static) {
  NVFP4_TRY(w.check());
  if (x == nullptr || m <= 0) return invalid_argument("gemm_gpu_stream_a: activation must be non-empty");
  if (k != w.geom.cols)
    return invalid_argument("K mismatch: activation has K = " + std::to_string(k) + ", weight has K = " + std::to_string(w.geom.cols));
  NVFP4_TRY(check_gemm_problem(m, w.geom.rows, k, 1, "gemm_gpu_stream_a"));
  if (kernel != GpuGemmKernel::kSm120Native && kernel != GpuGemmKernel::kSm120Emulated && kernel != GpuGemmKernel::kSm90 &&
      kernel != GpuGemmKernel::kSm120pNative && kernel != GpuGemmKernel::kSm120pEmulated)
    return unsupported(
        "the streaming A producer lives in the SM120 and sm90 kernels: use sm90, sm120-native, sm120-emulated, sm120p-native "
        "or sm120p-emulated");
  if (!(s_static >= 0.0f) || !std::isfinite(s_static))
    return invalid_argument("static input scale must be finite and >= 0 (0 = dynamic)");
  if (s_static > 0.0f && kernel != GpuGemmKernel::kSm90)
    return unsupported("a static input_scale is implemented by the sm90 kernel only");
  NVFP4_TRY(check_gpu_contract(kernel, contract, k));
  NVFP4_ASSIGN_OR_RETURN(cuda::SlicePlan plan, cuda::plan_slices(contract, k));
  NVFP4_ASSIGN_OR_RETURN(DeviceInfo dev, cuda_device());
  NVFP4_TRY(check_kernel_runs_here(kernel, dev));
  if (kernel == GpuGemmKernel::kSm90) {
    cuda::DeviceBuffer<uint16_t> dx, dbias;
    cuda::DeviceBuffer<uint32_t> dpartials;
    cuda::DeviceBuffer<float> dalpha, dsx;
    NVFP4_TRY(upload(dx, x, static_cast<size_t>(m * k)));
    if (bias) NVFP4_TRY(upload(dbias, bias, static_cast<size_t>(w.geom.rows)));
    NVFP4_TRY(dpartials.alloc(static_cast<size_t>(cuda::amax_partial_count(m * k))));
    NVFP4_TRY(dalpha.alloc(1));
    NVFP4_TRY(dsx.alloc(1));
    cuda::Sm90Prep prep;  // the pre-pass runs the amax itself (x_amax_partials)
    prep.x = dx.get();
    prep.k = k;
    prep.x_amax_partials = dpartials.get();
    prep.s_static = s_static;
    prep.s_w = w.global_scale;
    prep.alpha_out = dalpha.get();
    prep.s_x_out = dsx.get();
    return run_sm90(prep, w, m, 0.0f, dalpha.get(), bias ? dbias.get() : nullptr, dev);
  }
  const int64_t k64 = roundup(w.geom.cols16, 64), lda = k64 / 2;
  std::vector<uint8_t> hw, hsw;
  prepare_operand(w, lda, hw, hsw);
  cuda::DeviceBuffer<uint8_t> dw, dsw;
  cuda::DeviceBuffer<uint16_t> dx, dbias;
  cuda::DeviceBuffer<uint32_t> damax;
  NVFP4_TRY(upload(dw, hw.data(), hw.size()));
  NVFP4_TRY(upload(dsw, hsw.data(), hsw.size()));
  NVFP4_TRY(upload(dx, x, static_cast<size_t>(m * k)));
  if (bias) NVFP4_TRY(upload(dbias, bias, static_cast<size_t>(w.geom.rows)));
  NVFP4_TRY(damax.alloc(1));
  NVFP4_CUDA_TRY(cudaMemset(damax.get(), 0, 4));
  NVFP4_TRY(cuda::launch_amax_bf16(dx.get(), m * k, damax.get(), nullptr));
  cuda::GemmOperands op{};
  op.w = dw.get();
  op.sfw = dsw.get();
  op.m = m;
  op.n = w.geom.rows;
  op.k64 = k64;
  op.bias = bias ? dbias.get() : nullptr;
  op.x = dx.get();
  op.k = k;
  op.x_amax = damax.get();
  op.s_w = w.global_scale;
  return run_gemm(op, kernel, dev, plan);
}

namespace cuda {
namespace {
Status launch_kernel_only(const GemmOperands& op, GpuGemmKernel kernel, int sm_count, cudaStream_t stream) {
  switch (kernel) {
    case GpuGemmKernel::kModel:
      // The model kernel has no device-pointer entry point and does not read a device alpha.
      if (op.alpha_a) return invalid_argument("kernel gpu-model takes a host alpha, not device global scales");
      return launch_gemm_model(op, stream);
    case GpuGemmKernel::kSm120Native: return launch_sm120_gemm(op, false, sm_count, stream);
    case GpuGemmKernel::kSm120Emulated: return launch_sm120_gemm(op, true, sm_count, stream);
    case GpuGemmKernel::kSm120pNative: return launch_sm120p_gemm(op, Sm120pMode::kNative, sm_count, stream);
    case GpuGemmKernel::kSm120pEmulated: return launch_sm120p_gemm(op, Sm120pMode::kEmulated, sm_count, stream);
  }
  return invalid_argument(std::string("no launcher for kernel ") + to_string(kernel));
}
}  // namespace

Status launch_gemm_kernel(const GemmOperands& op, GpuGemmKernel kernel, int sm_count, cudaStream_t stream) {
  NVFP4_TRY(launch_kernel_only(op, kernel, sm_count, stream));
  return op.splits > 1 ? launch_merge_splitk(op, stream) : Status::ok();
}
}  // namespace cuda

}  // namespace nvfp4
