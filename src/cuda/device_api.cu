// Device-pointer entry points (include/nvfp4/cuda.hpp): the kernels' launchers driven on memory the
// caller owns and on the caller's stream. Nothing here synchronizes except amax_bf16_device (whose
// value the host asks for); workspaces are stream-ordered allocations, freed on the same stream, so
// a later call reuses them only after this call's kernels are done.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <memory>

#include "common/check.cuh"
#include "common/kernels.hpp"
#include "common/operands.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/limits.hpp"
#include "sm90/sm90_host.hpp"
#include "split_plan.hpp"

namespace nvfp4 {

namespace {

// Makes `device` current for the scope (the caller's tensors live there) and restores the previous one.
class DeviceScope {
 public:
  Status enter(int device) {
    // Without a usable driver or GPU every call fails here first: that is "unsupported here"
    // (cuda.hpp's promise), not a CUDA failure.
    if (const cudaError_t e = cudaGetDevice(&prev_); e != cudaSuccess) {
      prev_ = -1;
      cudaGetLastError();
      if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return unsupported(std::string("no CUDA device: ") + cudaGetErrorString(e));
      return cuda_error(std::string("cudaGetDevice failed: ") + cudaGetErrorString(e));
    }
    dev_ = device < 0 ? prev_ : device;
    if (dev_ != prev_) NVFP4_CUDA_TRY(cudaSetDevice(dev_));
    return Status::ok();
  }
  ~DeviceScope() {
    if (prev_ >= 0 && dev_ != prev_) cudaSetDevice(prev_);
  }
  int device() const { return dev_; }

 private:
  int prev_ = -1, dev_ = -1;
};

struct DeviceProps {
  int cc_major = 0, cc_minor = 0, sm_count = 0;
};
Result<DeviceProps> props_of(int device) {
  DeviceProps p;
  NVFP4_CUDA_TRY(cudaDeviceGetAttribute(&p.cc_major, cudaDevAttrComputeCapabilityMajor, device));
  NVFP4_CUDA_TRY(cudaDeviceGetAttribute(&p.cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  NVFP4_CUDA_TRY(cudaDeviceGetAttribute(&p.sm_count, cudaDevAttrMultiProcessorCount, device));
  return p;
}

Status check_kernel_on(GpuGemmKernel kernel, const DeviceProps& p, int device) {
  return cuda::check_kernel_runs_on(kernel, p.cc_major, p.cc_minor,
                                    "CUDA device " + std::to_string(device) + " (compute capability " +
                                        std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor) + "), the tensors' GPU");
}

// The kernels with a device-pointer path: sm90 (its own weight blocks) and the SM120 kernels, the
// first and the pipelined one, which read the same lo_first operand.
bool has_device_path(GpuGemmKernel k) {
  return k == GpuGemmKernel::kSm90 || k == GpuGemmKernel::kSm120Native || k == GpuGemmKernel::kSm120Emulated ||
         k == GpuGemmKernel::kSm120pNative || k == GpuGemmKernel::kSm120pEmulated;
}
constexpr const char* kDevicePathKernels = "sm90, sm120-native, sm120-emulated, sm120p-native and sm120p-emulated have";

// The kernels vectorize their loads and stores: every operand must start on a 16-byte boundary.
Status check_aligned(const void* p, const char* name, unsigned bytes = 16) {
  if (reinterpret_cast<uintptr_t>(p) % bytes != 0)
    return invalid_argument(std::string(name) + " is not " + std::to_string(bytes) +
                            "-byte aligned (a view at an offset): pass a fresh copy");
  return Status::ok();
}

// A global scale the kernel will read (device-scale entry points): device memory of `device`, or
// managed memory. A host pointer, or one on another GPU, would fault inside the kernel and end the
// process's CUDA context; this asks the driver instead (no stream wait).
Status check_device_scalar(const float* p, int device, const char* name) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return invalid_argument(std::string(name) + ": not a pointer the CUDA driver knows");
  }
  if (at.type == cudaMemoryTypeManaged || (at.type == cudaMemoryTypeDevice && at.device == device)) return Status::ok();
  return invalid_argument(std::string(name) + " is not in the memory of CUDA device " + std::to_string(device) +
                          (at.type == cudaMemoryTypeDevice ? " (it is on device " + std::to_string(at.device) + ")"
                                                           : " (it is host memory)"));
}

// The device entry points' size check: check_gemm_problem's dimensions and products, but nothing
// charged against the host's memory, which these calls do not use (a problem that fits the GPU
// must not be refused for the host's RAM, nor by NVFP4_MEMORY_LIMIT).
Status check_device_problem(int64_t m, int64_t n, int64_t k, const char* what) {
  return gemm_problem_bytes(m, n, k, 1, what).status();
}

// A stream-ordered workspace: allocated and freed on the stream, so freeing never waits for the GPU.
template <typename T>
class StreamBuffer {
 public:
  explicit StreamBuffer(cudaStream_t s) : s_(s) {}
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  ~StreamBuffer() {
    if (p_) cudaFreeAsync(p_, s_);
  }
  Status alloc(size_t n) {
    NVFP4_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&p_), (n ? n : 1) * sizeof(T), s_));
    return Status::ok();
  }
  T* get() const { return p_; }

 private:
  cudaStream_t s_;
  T* p_ = nullptr;
};

// An SM120-side kernel on op under contract c, enqueued on stream: sequential with the fused
// epilogue, or split-K (the kernel's K-slice partials in a stream-ordered workspace, then the merge
// in slice order, both in launch_gemm_kernel).
Status launch_sm120_side(cuda::GemmOperands op, GpuGemmKernel kernel, const ReductionContract& c, int64_t k, int sm_count,
                         cudaStream_t stream) {
  NVFP4_ASSIGN_OR_RETURN(const cuda::SlicePlan plan, cuda::plan_slices(c, k));
  StreamBuffer<float> partials(stream);
  if (plan.splits > 1) NVFP4_TRY(partials.alloc(static_cast<size_t>(plan.workspace_floats_per_output() * op.m * op.n)));
  cuda::set_slices(op, plan, partials.get());
  return cuda::launch_gemm_kernel(op, kernel, sm_count, stream);
}

struct Sm90Weight final : PreparedWeight {
  cuda::sm90::DeviceWeights dw;
};
// The streaming SM120 kernel's weight operand: lo_first rows at pitch K64/2 and 128x4 scales.
struct Sm120Weight final : PreparedWeight {
  cuda::DeviceBuffer<uint8_t> w, sfw;
  int64_t k64 = 0;
};

// The SM120 kernels' operands common to both entry points (the A side is the caller's).
cuda::GemmOperands sm120_operands(const Sm120Weight& sw, int64_t m, const uint16_t* bias, float* raw, uint16_t* out) {
  cuda::GemmOperands op{};
  op.w = sw.w.get();
  op.sfw = sw.sfw.get();
  op.m = m;
  op.n = sw.n;
  op.k64 = sw.k64;
  op.bias = bias;
  op.raw = raw;
  op.out = out;
  return op;
}

// The sm90 pre-pass (prep: its input side, from packed A or from bf16 x) and the GEMM on w, enqueued
// on stream with stream-ordered workspaces (sm90::ActivationSpace). alpha_dev: the device alpha
// (streaming), else alpha.
Status run_sm90_device(const Sm90Weight& sw, cuda::Sm90Prep prep, int64_t m, const DeviceProps& props, float alpha,
                       const float* alpha_dev, const uint16_t* bias, float* raw, uint16_t* out, cudaStream_t stream) {
  const cuda::sm90::ActivationSpace space{m, sw.dw.chunks, cuda::sm90::pick_config(m, sw.n, props.sm_count)};
  StreamBuffer<uint16_t> a16(stream);
  StreamBuffer<cuda::sm90::TokenRec> trec(stream);
  StreamBuffer<cuda::sm90::TileRec> atile(stream), agroup(stream);
  NVFP4_TRY(a16.alloc(space.a16_count()));
  NVFP4_TRY(trec.alloc(space.trec_count()));
  NVFP4_TRY(atile.alloc(space.atile_count()));
  NVFP4_TRY(agroup.alloc(space.agroup_count()));
  space.set_outputs(prep, a16.get(), trec.get(), atile.get(), agroup.get());
  NVFP4_TRY(cuda::launch_sm90_prep(prep, stream));
  cuda::Sm90Gemm g = space.gemm_args(sw.dw, a16.get(), trec.get(), atile.get(), agroup.get());
  g.alpha = alpha;
  g.alpha_dev = alpha_dev;
  g.bias = bias;
  g.raw = raw;
  g.out = out;
  g.after_prepass = true;
  return cuda::launch_sm90_gemm(g, props.sm_count, stream);
}

}  // namespace

Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu(const Tensor& w, GpuGemmKernel kernel, int device) {
  NVFP4_TRY(w.check());
  if (!has_device_path(kernel))
    return unsupported(std::string("kernel ") + to_string(kernel) + " has no device-pointer path (" + kDevicePathKernels + ")");
  NVFP4_TRY(check_gemm_problem(1, w.geom.rows, w.geom.cols, 1, "prepare_weight_gpu"));
  DeviceScope scope;
  NVFP4_TRY(scope.enter(device));
  NVFP4_ASSIGN_OR_RETURN(DeviceProps props, props_of(scope.device()));
  NVFP4_TRY(check_kernel_on(kernel, props, scope.device()));
  std::shared_ptr<PreparedWeight> out;
  if (kernel == GpuGemmKernel::kSm90) {
    auto p = std::make_shared<Sm90Weight>();
    NVFP4_TRY(p->dw.upload(w));
    out = p;
  } else {
    auto p = std::make_shared<Sm120Weight>();
    p->k64 = roundup(w.geom.cols16, 64);
    std::vector<uint8_t> hw, hsw;
    cuda::prepare_operand(w, p->k64 / 2, hw, hsw);
    NVFP4_TRY(cuda::upload(p->w, hw.data(), hw.size()));
    NVFP4_TRY(cuda::upload(p->sfw, hsw.data(), hsw.size()));
    out = p;
  }
  // The uploads are cudaMemcpy calls from pageable memory, which may return before their last DMA
  // has landed; the caller's kernels may run on a non-blocking stream, which does not wait for the
  // legacy stream the copies went to. Wait for them here, once per weight.
  NVFP4_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  out->n = w.geom.rows;
  out->k = w.geom.cols;
  out->s_w = w.global_scale;
  out->kernel = kernel;
  out->device = scope.device();
  return std::shared_ptr<const PreparedWeight>(std::move(out));
}

Status linear_gpu_device(const PreparedWeight& w, const DeviceLinear& a) {
  if (a.x == nullptr || a.out == nullptr) return invalid_argument("linear_gpu_device: x and out must be device pointers");
  NVFP4_TRY(check_dim(a.m, "linear_gpu_device: m"));
  if (a.k != w.k)
    return invalid_argument("K mismatch: activation has K = " + std::to_string(a.k) + ", weight has K = " + std::to_string(w.k));
  NVFP4_TRY(check_device_problem(a.m, w.n, a.k, "linear_gpu_device"));
  if (!(a.s_static >= 0.0f) || !std::isfinite(a.s_static))
    return invalid_argument("static input scale must be finite and >= 0 (0 = dynamic)");
  const bool device_scale = a.s_static_dev != nullptr;  // the static input scale in device memory
  if (device_scale && a.s_static != 0.0f)
    return invalid_argument("linear_gpu_device: give the static input scale on the host (s_static) or in device memory "
                            "(s_static_dev), not both");
  if (a.s_static > 0.0f && w.kernel != GpuGemmKernel::kSm90)
    return unsupported("a static input_scale is implemented by the sm90 kernel only");
  if (device_scale && w.kernel != GpuGemmKernel::kSm90)
    return unsupported(std::string("a static input_scale (here in device memory) is implemented by the sm90 kernel only; "
                                   "this weight is prepared for ") + to_string(w.kernel));
  if (device_scale) NVFP4_TRY(check_aligned(a.s_static_dev, "s_static_dev", 4));
  NVFP4_TRY(check_gpu_contract(w.kernel, a.contract, a.k));
  for (auto [p, name] : {std::pair<const void*, const char*>{a.x, "x"}, {a.out, "out"}}) NVFP4_TRY(check_aligned(p, name));
  if (a.raw) NVFP4_TRY(check_aligned(a.raw, "raw"));
  DeviceScope scope;
  NVFP4_TRY(scope.enter(w.device));
  if (device_scale) NVFP4_TRY(check_device_scalar(a.s_static_dev, w.device, "s_static_dev"));
  NVFP4_ASSIGN_OR_RETURN(DeviceProps props, props_of(w.device));
  const auto stream = static_cast<cudaStream_t>(a.stream);
  if (w.kernel == GpuGemmKernel::kSm90) {
    StreamBuffer<uint32_t> dpartials(stream);
    cuda::Sm90Prep prep;  // the pre-pass runs the amax itself (x_amax_partials), unless the scale is static
    prep.x = a.x;
    prep.k = a.k;
    if (device_scale) {
      prep.alpha_a = a.s_static_dev;  // read by the pre-pass: x's quantization and alpha, on the GPU
    } else {
      NVFP4_TRY(dpartials.alloc(static_cast<size_t>(cuda::amax_partial_count(a.m * a.k))));
      prep.x_amax_partials = dpartials.get();
    }
    prep.s_static = a.s_static;
    prep.s_w = w.s_w;
    StreamBuffer<float> dalpha(stream);
    NVFP4_TRY(dalpha.alloc(1));
    prep.alpha_out = dalpha.get();
    return run_sm90_device(static_cast<const Sm90Weight&>(w), prep, a.m, props, 0.0f, dalpha.get(), a.bias, a.raw, a.out,
                           stream);
  }

  StreamBuffer<uint32_t> damax(stream);
  NVFP4_TRY(damax.alloc(1));
  NVFP4_CUDA_TRY(cudaMemsetAsync(damax.get(), 0, 4, stream));
  NVFP4_TRY(cuda::launch_amax_bf16(a.x, a.m * a.k, damax.get(), stream));  // a static input scale is sm90's alone (checked above)
  const auto& sw = static_cast<const Sm120Weight&>(w);
  // raw is optional in every kernel and the merge: without it only the bf16 output is written.
  cuda::GemmOperands op = sm120_operands(sw, a.m, a.bias, a.raw, a.out);
  op.x = a.x;
  op.k = a.k;
  op.x_amax = damax.get();
  op.s_w = w.s_w;
  return launch_sm120_side(op, w.kernel, a.contract, a.k, props.sm_count, stream);
}

namespace {
// quantize_gpu_device with the global scale on the host (s) or in device memory (s_dev).
Status quantize_device(const uint16_t* x, int64_t rows, int64_t cols, float s, const float* s_dev, const QuantizeOptions& opt,
                       uint8_t* data, uint8_t* scales, void* stream_v, int device) {
  if (x == nullptr || data == nullptr || scales == nullptr) return invalid_argument("quantize_gpu_device: null pointer");
  NVFP4_TRY(check_aligned(data, "data", 8));  // one 8-byte store per block of 16 codes
  DeviceScope scope;
  NVFP4_TRY(scope.enter(device));
  if (s_dev) NVFP4_TRY(check_device_scalar(s_dev, scope.device(), "global scale"));
  const auto stream = static_cast<cudaStream_t>(stream_v);
  const Geometry g = Geometry::of(rows, cols);
  // The kernel writes only the logical blocks; the padding bytes of both buffers are zero, as quantize()'s.
  NVFP4_CUDA_TRY(cudaMemsetAsync(data, 0, static_cast<size_t>(g.data_bytes()), stream));
  NVFP4_CUDA_TRY(cudaMemsetAsync(scales, 0, static_cast<size_t>(g.scale_bytes(opt.scale_layout)), stream));
  return cuda::launch_quantize_comfy(x, rows, cols, s, data, scales, opt.nibbles == NibbleOrder::kHiFirst,
                                     opt.scale_layout == ScaleLayout::kSwizzled128x4, stream, s_dev);
}
}  // namespace

Status quantize_gpu_device(const uint16_t* x, int64_t rows, int64_t cols, float global_scale, const QuantizeOptions& opt,
                           uint8_t* data, uint8_t* scales, void* stream, int device) {
  NVFP4_TRY(cuda::check_quantize_gpu_args(rows, cols, global_scale, opt));
  return quantize_device(x, rows, cols, global_scale, nullptr, opt, data, scales, stream, device);
}

Status quantize_gpu_device_with_device_scale(const uint16_t* x, int64_t rows, int64_t cols, const float* global_scale,
                                             const QuantizeOptions& opt, uint8_t* data, uint8_t* scales, void* stream,
                                             int device) {
  NVFP4_TRY(cuda::check_quantize_gpu_shape(rows, cols, opt));
  if (global_scale == nullptr) return invalid_argument("quantize_gpu_device: the global scale pointer is null");
  NVFP4_TRY(check_aligned(global_scale, "global scale", 4));
  return quantize_device(x, rows, cols, 0.0f, global_scale, opt, data, scales, stream, device);
}

Result<uint16_t> amax_bf16_device(const uint16_t* x, int64_t n, void* stream_v, int device) {
  if (x == nullptr || n <= 0) return invalid_argument("amax_bf16_device: empty input");
  DeviceScope scope;
  NVFP4_TRY(scope.enter(device));
  const auto stream = static_cast<cudaStream_t>(stream_v);
  StreamBuffer<uint32_t> d(stream);
  NVFP4_TRY(d.alloc(1));
  NVFP4_CUDA_TRY(cudaMemsetAsync(d.get(), 0, 4, stream));
  NVFP4_TRY(cuda::launch_amax_bf16(x, n, d.get(), stream));
  uint32_t bits = 0;
  NVFP4_CUDA_TRY(cudaMemcpyAsync(&bits, d.get(), 4, cudaMemcpyDeviceToHost, stream));
  NVFP4_CUDA_TRY(cudaStreamSynchronize(stream));
  return static_cast<uint16_t>(bits);
}

namespace {
// dequantize_gpu_device with the global scale on the host (s) or in device memory (s_dev).
Status dequantize_device(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float s, const float* s_dev,
                         NibbleOrder nibbles, uint16_t* out, void* stream_v, int device) {
  if (data == nullptr || scales == nullptr || out == nullptr) return invalid_argument("dequantize_gpu_device: null pointer");
  NVFP4_TRY(check_dim(rows, "dequantize_gpu: rows"));
  NVFP4_TRY(check_dim(cols, "dequantize_gpu: cols"));
  NVFP4_TRY(check_aligned(data, "data"));
  NVFP4_TRY(check_aligned(out, "out"));
  DeviceScope scope;
  NVFP4_TRY(scope.enter(device));
  if (s_dev) NVFP4_TRY(check_device_scalar(s_dev, scope.device(), "global scale"));
  const Geometry g = Geometry::of(rows, cols);
  return cuda::launch_dequantize_comfy(data, scales, g.rows16, g.cols16, s, nibbles == NibbleOrder::kHiFirst, out,
                                       static_cast<cudaStream_t>(stream_v), s_dev);
}
}  // namespace

Status dequantize_gpu_device(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float global_scale,
                             NibbleOrder nibbles, uint16_t* out, void* stream, int device) {
  return dequantize_device(data, scales, rows, cols, global_scale, nullptr, nibbles, out, stream, device);
}

Status dequantize_gpu_device_with_device_scale(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols,
                                               const float* global_scale, NibbleOrder nibbles, uint16_t* out, void* stream,
                                               int device) {
  if (global_scale == nullptr) return invalid_argument("dequantize_gpu_device: the global scale pointer is null");
  NVFP4_TRY(check_aligned(global_scale, "global scale", 4));
  return dequantize_device(data, scales, rows, cols, 0.0f, global_scale, nibbles, out, stream, device);
}


Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu_device(const DeviceWeightSource& src, GpuGemmKernel kernel) {
  if (!has_device_path(kernel))
    return unsupported(std::string("kernel ") + to_string(kernel) + " has no device-pointer path (" + kDevicePathKernels + ")");
  if (src.data == nullptr || src.scales == nullptr) return invalid_argument("prepare_weight_gpu_device: null pointer");
  NVFP4_TRY(check_dim(src.n, "prepare_weight_gpu_device: n"));
  NVFP4_TRY(check_dim(src.k, "prepare_weight_gpu_device: k"));
  NVFP4_TRY(check_device_problem(1, src.n, src.k, "prepare_weight_gpu_device"));
  if (!std::isfinite(src.global_scale)) return invalid_argument("weight global scale must be finite");
  if (src.pitch < 0) return invalid_argument("prepare_weight_gpu_device: negative row pitch " + std::to_string(src.pitch));
  const Geometry geom = Geometry::of(src.n, src.k);
  const int64_t pitch = src.pitch > 0 ? src.pitch : geom.row_bytes();
  if (pitch < geom.row_bytes())
    return invalid_argument("prepare_weight_gpu_device: row pitch " + std::to_string(pitch) + " < " +
                            std::to_string(geom.row_bytes()) + " bytes of a row");
  DeviceScope scope;
  NVFP4_TRY(scope.enter(src.device));
  NVFP4_ASSIGN_OR_RETURN(DeviceProps props, props_of(scope.device()));
  NVFP4_TRY(check_kernel_on(kernel, props, scope.device()));
  const auto stream = static_cast<cudaStream_t>(src.stream);
  const int64_t k64 = roundup(geom.cols16, 64), chunks = k64 / 64;
  const size_t sf_bytes = static_cast<size_t>(geom.scale_bytes(ScaleLayout::kSwizzled128x4));  // = roundup(n,128) x chunks*4
  const bool hi_first = src.nibbles == NibbleOrder::kHiFirst;
  std::shared_ptr<PreparedWeight> out;
  if (kernel == GpuGemmKernel::kSm90) {
    auto p = std::make_shared<Sm90Weight>();
    p->dw.n = src.n;
    p->dw.chunks = chunks;
    NVFP4_TRY(p->dw.blocks.alloc(cuda::sm90::weight_block_bytes(src.n, chunks)));
    cuda::Sm90WeightSource ws;
    ws.data = src.data;
    ws.pitch = pitch;
    ws.row_bytes = geom.row_bytes();
    ws.n = src.n;
    ws.chunks = chunks;
    ws.hi_first = hi_first;
    ws.sf = src.scales;
    NVFP4_TRY(cuda::launch_sm90_prepack_weight(ws, p->dw.blocks.get(), stream));
    out = p;
  } else {
    auto p = std::make_shared<Sm120Weight>();
    p->k64 = k64;
    NVFP4_TRY(p->w.alloc(static_cast<size_t>(src.n * k64 / 2)));
    NVFP4_TRY(p->sfw.alloc(sf_bytes));
    NVFP4_CUDA_TRY(cudaMemcpyAsync(p->sfw.get(), src.scales, sf_bytes, cudaMemcpyDeviceToDevice, stream));
    NVFP4_TRY(cuda::launch_pack_lo_first(src.data, pitch, geom.row_bytes(), src.n, hi_first, k64 / 2, p->w.get(), stream));
    out = p;
  }
  // The buffers are plain allocations, usable from any stream: wait for the prepack once.
  NVFP4_CUDA_TRY(cudaStreamSynchronize(stream));
  out->n = src.n;
  out->k = src.k;
  out->s_w = src.global_scale;
  out->kernel = kernel;
  out->device = scope.device();
  return std::shared_ptr<const PreparedWeight>(std::move(out));
}

Status matmul_gpu_device(const PreparedWeight& w, const DeviceMatmul& a) {
  if (a.a == nullptr || a.a_scales == nullptr || a.out == nullptr)
    return invalid_argument("matmul_gpu_device: a, a_scales and out must be device pointers");
  NVFP4_TRY(check_dim(a.m, "matmul_gpu_device: m"));
  if (a.k != w.k)
    return invalid_argument("K mismatch: a has K = " + std::to_string(a.k) + ", the weight has K = " + std::to_string(w.k));
  NVFP4_TRY(check_device_problem(a.m, w.n, a.k, "matmul_gpu_device"));
  if ((a.scale_a == nullptr) != (a.scale_w == nullptr))
    return invalid_argument("matmul_gpu_device: give both global scale pointers (scale_a, scale_w) or neither");
  const bool device_alpha = a.scale_a != nullptr;
  if (device_alpha) {
    NVFP4_TRY(check_aligned(a.scale_a, "scale_a", 4));
    NVFP4_TRY(check_aligned(a.scale_w, "scale_w", 4));
  } else if (!std::isfinite(a.alpha)) {
    return invalid_argument("alpha must be finite");
  }
  NVFP4_TRY(check_gpu_contract(w.kernel, a.contract, a.k));
  if (a.a_pitch < 0) return invalid_argument("matmul_gpu_device: negative row pitch " + std::to_string(a.a_pitch));
  const Geometry geom = Geometry::of(a.m, a.k);
  const int64_t pitch = a.a_pitch > 0 ? a.a_pitch : geom.row_bytes();
  if (pitch < geom.row_bytes())
    return invalid_argument("matmul_gpu_device: row pitch " + std::to_string(pitch) + " < " + std::to_string(geom.row_bytes()) +
                            " bytes of a row");
  NVFP4_TRY(check_aligned(a.out, "out"));
  if (a.raw) NVFP4_TRY(check_aligned(a.raw, "raw"));
  // The pipelined kernel moves A's scale blocks with bulk copies (16-byte aligned addresses); the
  // first SM120 kernel reads them four bytes at a time; sm90's pre-pass reads single bytes.
  if (w.kernel == GpuGemmKernel::kSm120pNative || w.kernel == GpuGemmKernel::kSm120pEmulated)
    NVFP4_TRY(check_aligned(a.a_scales, "a_scales"));
  else if (w.kernel != GpuGemmKernel::kSm90)
    NVFP4_TRY(check_aligned(a.a_scales, "a_scales", 4));
  DeviceScope scope;
  NVFP4_TRY(scope.enter(w.device));
  if (device_alpha) {
    NVFP4_TRY(check_device_scalar(a.scale_a, w.device, "scale_a"));
    NVFP4_TRY(check_device_scalar(a.scale_w, w.device, "scale_w"));
  }
  NVFP4_ASSIGN_OR_RETURN(DeviceProps props, props_of(w.device));
  const auto stream = static_cast<cudaStream_t>(a.stream);
  // Packed A as the kernels read it: lo_first rows at pitch K64/2. An A that already is one (lo_first,
  // K16 a multiple of 64, aligned) is read in place; otherwise it is repacked on the device.
  const int64_t lda = roundup(geom.cols16, 64) / 2;
  const bool in_place = a.nibbles == NibbleOrder::kLoFirst && pitch == lda && reinterpret_cast<uintptr_t>(a.a) % 16 == 0;
  StreamBuffer<uint8_t> packed(stream);
  const uint8_t* pa = a.a;
  if (!in_place) {
    NVFP4_TRY(packed.alloc(static_cast<size_t>(a.m * lda)));
    NVFP4_TRY(cuda::launch_pack_lo_first(a.a, pitch, geom.row_bytes(), a.m, a.nibbles == NibbleOrder::kHiFirst, lda,
                                         packed.get(), stream));
    pa = packed.get();
  }
  if (w.kernel == GpuGemmKernel::kSm90) {
    cuda::Sm90Prep prep;
    prep.a = pa;
    prep.sfa = a.a_scales;  // 128x4 swizzled, K64/16 columns: comfy-kitchen's layout as it is
    StreamBuffer<float> dalpha(stream);  // device alpha: formed by the pre-pass, read by the GEMM
    if (device_alpha) {
      NVFP4_TRY(dalpha.alloc(1));
      prep.alpha_a = a.scale_a;
      prep.alpha_w = a.scale_w;
      prep.alpha_out = dalpha.get();
    }
    return run_sm90_device(static_cast<const Sm90Weight&>(w), prep, a.m, props, a.alpha, dalpha.get(), a.bias, a.raw,
                           a.out, stream);
  }
  const auto& sw = static_cast<const Sm120Weight&>(w);
  // raw is optional in every kernel and the merge: without it only the bf16 output is written.
  cuda::GemmOperands op = sm120_operands(sw, a.m, a.bias, a.raw, a.out);
  op.a = pa;
  op.sfa = a.a_scales;
  op.alpha = a.alpha;
  op.alpha_a = a.scale_a;  // null: op.alpha
  op.alpha_w = a.scale_w;
  return launch_sm120_side(op, w.kernel, a.contract, a.k, props.sm_count, stream);
}


namespace {
template <typename T>
Status download(const cuda::DeviceBuffer<T>& d, std::vector<uint8_t>& h) {
  h.resize(d.bytes());
  NVFP4_CUDA_TRY(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return Status::ok();
}
}  // namespace

Result<PreparedWeightBytes> prepared_weight_bytes(const PreparedWeight& w) {
  DeviceScope scope;
  NVFP4_TRY(scope.enter(w.device));
  NVFP4_CUDA_TRY(cudaDeviceSynchronize());
  PreparedWeightBytes b;
  if (w.kernel == GpuGemmKernel::kSm90) {
    const auto& sw = static_cast<const Sm90Weight&>(w);
    NVFP4_TRY(download(sw.dw.blocks, b.codes));  // codes, scales and tile records, block by block
  } else {
    const auto& sw = static_cast<const Sm120Weight&>(w);
    NVFP4_TRY(download(sw.w, b.codes));
    NVFP4_TRY(download(sw.sfw, b.scales));
  }
  return b;
}

}  // namespace nvfp4
