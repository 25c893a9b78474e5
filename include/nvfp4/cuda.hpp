// GPU entry points. Every call works in a binary built without CUDA or on a machine without a GPU:
// it then returns an kUnsupported status with a one-line reason.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/format.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"

namespace nvfp4 {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin = 0;
};
struct CudaInfo {
  bool built_with_cuda = false;
  std::string built_targets;   // e.g. "sm_90a sm_120a sm_121a"
  int runtime_version = 0;     // e.g. 13000
  int driver_version = 0;
  std::vector<DeviceInfo> devices;
  std::string error;           // why no device is usable, when there is none
};
CudaInfo cuda_info();

// What a build for `targets` (CudaInfo::built_targets' form, "sm_90a sm_120a sm_121a"; compute_XX
// stands for embedded PTX) gives a GPU of compute capability major.minor, by the driver's rules:
// none of its code loads there; code loads there; or code built for exactly that architecture with
// its architecture-specific features (sm_XXa, or compute_XXa JIT-compiled there), which the sm90
// kernel (wgmma, setmaxnreg) and the native SM120 MMA need: every other build of them is a trap.
enum class KernelCode { kNone, kPortable, kArchSpecific };
KernelCode kernels_cover(std::string_view targets, int major, int minor);
// This build's targets, the list every check of a GPU against the build reads (empty without CUDA).
std::string_view built_cuda_targets();
// The calling thread's current GPU (device 0 unless the caller chose another with cudaSetDevice),
// where the host-memory entry points below run, or an error saying why there is none.
Result<DeviceInfo> cuda_device();

// ---------------------------------------------------------------------------------------------
// GPU quantizer, recipe comfy-cuda (docs/numerics.md §2.1) with the real PTX instructions.
Result<Tensor> quantize_gpu(const uint16_t* x, int64_t rows, int64_t cols, float global_scale,
                            const QuantizeOptions& opt);

// ---------------------------------------------------------------------------------------------
// GPU GEMM backends, alpha-before-bf16 epilogue. Every backend runs every reduction contract the
// CPU oracle knows (docs/numerics.md §4): sequential K, or split-K with the slices of
// ReductionContract::slices, each slice's fp32 partial kept in a workspace and merged in slice
// order by a separate pass (bit-identical to gemm_oracle under the same contract). A contract with
// more slices than K has k64 chunks is refused (invalid argument).
enum class GpuGemmKernel {
  kModel,           // any GPU: integer group sums + the §3 model step, one thread per output
  kSm120Native,     // SM120/SM121: mma.sync kind::mxf4nvf4 block_scale (needs a Blackwell GPU)
  kSm120Emulated,   // the same SM120 kernel source with the MMA replaced by its exact emulation
  kSm120pNative,    // the pipelined SM120 kernel (shared-memory stages filled by TMA, producer warp)
  kSm120pEmulated,  // the pipelined SM120 kernel with the MMA emulated (validates it on any GPU)
  kSm90,            // Hopper (sm_90a): wgmma on scale-folded fp16 with proven-exact fast steps, §3 elsewhere
};
const char* to_string(GpuGemmKernel k);
Result<GpuGemmKernel> parse_gpu_kernel(std::string_view s);
// The kernels this machine can run, fastest first (empty without a GPU).
std::vector<GpuGemmKernel> available_gpu_kernels();

struct GpuGemmOutput {
  std::vector<float> raw;      // [M][N] fp32 accumulators (split-K: the merge's raw, as gemm_oracle's)
  std::vector<uint16_t> out;   // [M][N] bf16 = bf16_rn(f32_rn(alpha * acc) [+ bias])
  double kernel_ms = 0;        // one launch (split-K: GEMM and merge), CUDA events
  float s_x = 0;               // streaming: the activation scale the GPU derived
  // sm90 only: element steps (output x k64 chunk), thread-chunks whose tile test failed, of those
  // the ones whose thread-group test failed too (per-element tests ran), and element steps that took
  // the exact slow path (the §3 model) instead of the tensor-core sum.
  int64_t steps = 0, tile_misses = 0, group_misses = 0, slow_steps = 0;
};
// The sm90 kernel's tile configurations ("BMxRWxTWxNH[xKS]"; NVFP4_SM90_CONFIG picks one for tuning),
// and the one the launcher picks for an m x n linear on sm_count SMs (empty without CUDA).
std::vector<std::string> sm90_configs();
std::string sm90_config_for(int64_t m, int64_t n, int sm_count);

Result<GpuGemmOutput> gemm_gpu(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias,
                               GpuGemmKernel kernel,
                               const ReductionContract& contract = ReductionContract::sequential());

// The SM120 kernel with the streaming A producer: the activation arrives as bf16 x [m][k]; the GPU
// reduces amax, forms ComfyUI's dynamic scale s_x = f32(bf16(amax/2688)) and alpha = s_x * s_w, and
// quantizes A inside the GEMM (comfy-cuda recipe). Bit-identical to quantize() followed by gemm().
// kernel: kSm120pNative, kSm120pEmulated (the pipelined kernel's producer warps quantize each stage's
// activation slice into shared memory), kSm120Native, kSm120Emulated, or kSm90
// (Hopper: A is quantized in the sm90 pre-pass into the kernel's fp16 operand, never into an NVFP4
// copy). s_static > 0: a static input_scale instead of the dynamic one (kSm90 only).
Result<GpuGemmOutput> gemm_gpu_stream_a(const uint16_t* x, int64_t m, int64_t k, const Tensor& w, const uint16_t* bias,
                                        GpuGemmKernel kernel,
                                        const ReductionContract& contract = ReductionContract::sequential(),
                                        float s_static = 0.0f);

// Whether `kernel` implements the form of `contract` at all (sm90: the sequential one only; the
// others every one), whatever K.
bool gpu_kernel_runs(GpuGemmKernel kernel, const ReductionContract& contract);
// Whether `kernel` runs `contract` for K = k: the one-line reason (invalid argument) when not.
Status check_gpu_contract(GpuGemmKernel kernel, const ReductionContract& contract, int64_t k);

// ---------------------------------------------------------------------------------------------
// Device-pointer entry points (src/cuda/device_api.cu): operands already in GPU memory (a torch CUDA
// tensor, a framework's buffer), work enqueued on the caller's stream, nothing copied through the
// host and nothing synchronized. Workspaces are stream-ordered (cudaMallocAsync / cudaFreeAsync).

// A weight prepacked on one GPU for one kernel, made once and reused by every linear_gpu_device /
// matmul_gpu_device call: by prepare_weight_gpu from a host Tensor (the prepack runs on the host), or
// by prepare_weight_gpu_device from device memory (the prepack runs on the GPU, same bytes). Kernels: kSm90 (the
// Hopper path's weight blocks: codes in fragment order, scales, tile records), kSm120pNative / kSm120pEmulated
// (the pipelined SM120 kernel, the production kernel on SM12x) and kSm120Native / kSm120Emulated (the
// first SM120 kernel), which read the same lo_first operand. Freeing it (cudaFree) waits for the device to be idle.
class PreparedWeight {
 public:
  virtual ~PreparedWeight() = default;
  int64_t n = 0, k = 0;        // logical [n][k]
  float s_w = 0;               // the weight's global scale
  GpuGemmKernel kernel = GpuGemmKernel::kSm90;
  int device = 0;              // the CUDA device it lives on
};
// w: hi_first or lo_first, any scale layout; device: a CUDA device index (-1: the current device).
Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu(const Tensor& w, GpuGemmKernel kernel, int device = -1);

// y = bf16(f32(s_x * s_w) * acc + bias) for bf16 x [m][k] quantized on the GPU with the comfy-cuda
// recipe (s_x: ComfyUI's dynamic f32(bf16(amax(x)/2688)), or the static input scale, s_static when
// > 0 or *s_static_dev, sm90 only), the sequential contract; bit-identical to quantize() +
// gemm_oracle(). Every pointer is device memory on w's device; stream is a cudaStream_t (null: the
// legacy default stream).
struct DeviceLinear {
  const uint16_t* x = nullptr;  // [m][k] bf16, row pitch k
  int64_t m = 0, k = 0;
  const uint16_t* bias = nullptr;  // [n] bf16, or null
  float s_static = 0.0f;
  uint16_t* out = nullptr;      // [m][n] bf16
  float* raw = nullptr;         // [m][n] fp32 accumulators (no alpha), or null
  void* stream = nullptr;
  // The reduction contract (docs/numerics.md §4): sequential, or split-K on the SM120-side kernels
  // (their K-slice partials in a stream-ordered workspace, merged in slice order on the stream);
  // sm90 runs the sequential contract only.
  ReductionContract contract = ReductionContract::sequential();
  // Or, instead of s_static (which must then be 0), the static input scale in device memory of w's
  // GPU (or managed; ComfyUI's input_scale, a CUDA tensor), fp32, 4-byte aligned: read by the sm90
  // pre-pass, which quantizes x with it and forms alpha = f32_rn(*s_static_dev * s_w) on the GPU, so
  // nothing waits for the stream; sm90 only, as s_static. Where it is is checked
  // (cudaPointerGetAttributes); its value is not (that would wait): finite and >= 0, the bits are
  // quantize() with it + gemm_oracle() (> 0: those of that value in s_static; 0 quantizes with scale
  // 0, not dynamically); otherwise the comfy-cuda arithmetic on it. Last, so that the fields before
  // it keep their places.
  const float* s_static_dev = nullptr;
};
Status linear_gpu_device(const PreparedWeight& w, const DeviceLinear& args);

// A weight already in device memory (a CUDA weight tensor) prepacked on its GPU by kernels enqueued
// on `stream` (the sm90 weight blocks, or the SM120 lo_first operand: the same
// bytes prepare_weight_gpu makes from the host Tensor), nothing copied through the host; waits for
// `stream` once at the end, so the result is usable from any stream.
struct DeviceWeightSource {
  const uint8_t* data = nullptr;    // [roundup(n,16)][pitch] packed codes in `nibbles` order
  const uint8_t* scales = nullptr;  // UE4M3 128x4 swizzled [roundup(n,128)][roundup(k16/16,4)]
  int64_t n = 0, k = 0;             // logical [n][k]; rows past n are not read
  int64_t pitch = 0;                // bytes per row (0: roundup(k,16)/2)
  NibbleOrder nibbles = NibbleOrder::kHiFirst;
  float global_scale = 0.0f;        // s_w (used by linear_gpu_device's alpha)
  void* stream = nullptr;
  int device = -1;                  // the CUDA device holding data and scales (-1: the current one)
};
Result<std::shared_ptr<const PreparedWeight>> prepare_weight_gpu_device(const DeviceWeightSource& w, GpuGemmKernel kernel);

// D = A · W^T for an already-quantized NVFP4 A in device memory (comfy-kitchen's scaled_mm_nvfp4):
// bf16 out [m][n] = bf16(f32(alpha * acc) + bias), sequential contract, bit-identical to
// gemm_oracle. kSm90: packed A goes through the sm90 pre-pass; kSm120*: read by the SM120 kernel.
// A hi_first A, or one whose rows are not K64/2 bytes, is repacked on the device first (a
// stream-ordered workspace). Every pointer is device memory on w's device; enqueued on stream.
struct DeviceMatmul {
  const uint8_t* a = nullptr;         // [m][a_pitch] packed codes in `nibbles` order
  const uint8_t* a_scales = nullptr;  // UE4M3 128x4 swizzled [roundup(m16,128)][roundup(k16/16,4)], zero padded
  int64_t m = 0, k = 0;
  int64_t a_pitch = 0;                // bytes per row (0: roundup(k,16)/2)
  NibbleOrder nibbles = NibbleOrder::kHiFirst;
  float alpha = 1.0f;
  const uint16_t* bias = nullptr;     // [n] bf16, or null
  uint16_t* out = nullptr;            // [m][n] bf16
  float* raw = nullptr;               // [m][n] fp32 accumulators (no alpha), or null
  void* stream = nullptr;
  ReductionContract contract = ReductionContract::sequential();  // as DeviceLinear's
  // Or, instead of alpha, A's and W's fp32 global scales in device memory of w's GPU (or managed;
  // comfy-kitchen holds them as CUDA tensors): both set, alpha = f32_rn(*scale_a * *scale_w) is
  // formed on the GPU and `alpha` is not read, so nothing waits for the stream. Where they are is
  // checked (cudaPointerGetAttributes); their values are not (that would wait): a non-finite
  // product is applied as ComfyUI's own GEMM applies it, where the host alpha would be refused.
  // Last, so that the fields before them keep their places.
  const float* scale_a = nullptr;
  const float* scale_w = nullptr;
};
Status matmul_gpu_device(const PreparedWeight& w, const DeviceMatmul& args);
// A prepared weight's device bytes copied to the host (tests, diagnostics). kSm90: the weight blocks
// as codes (fragment-order codes, scales and tile records per 64 rows and chunk), no scales or records
// apart; kSm120*: the lo_first operand and its scales, no records.
struct PreparedWeightBytes {
  std::vector<uint8_t> codes, scales, records;
};
Result<PreparedWeightBytes> prepared_weight_bytes(const PreparedWeight& w);

// comfy-cuda quantization of bf16 x [rows][cols] in device memory into device buffers laid out as
// quantize()'s Tensor would be (data [rows16][cols16/2], scales in opt.scale_layout, zero padding
// included); opt.pad must be set where rows or cols is not a multiple of 16. Enqueued on stream.
Status quantize_gpu_device(const uint16_t* x, int64_t rows, int64_t cols, float global_scale, const QuantizeOptions& opt,
                           uint8_t* data, uint8_t* scales, void* stream, int device = -1);
// The same with the global scale in device memory of the device (or managed; ComfyUI's per-tensor
// scale, a CUDA tensor), read by the kernel: nothing waits for the stream. The value is not checked (that would wait):
// within quantize()'s domain (finite, >= 0) the bits are quantize()'s; outside it they are the
// comfy-cuda kernel's arithmetic on it, as ComfyUI's own kernel computes them.
Status quantize_gpu_device_with_device_scale(const uint16_t* x, int64_t rows, int64_t cols, const float* global_scale,
                                             const QuantizeOptions& opt, uint8_t* data, uint8_t* scales, void* stream,
                                             int device = -1);
// The bf16 pattern of max |x| over n device elements (NaN skipped), for the dynamic global scale:
// waits for the stream (the host needs the value).
Result<uint16_t> amax_bf16_device(const uint16_t* x, int64_t n, void* stream, int device = -1);
// comfy-cuda dequantization (DequantRecipe::kComfyCuda) of a hi_first/lo_first tensor with swizzled
// scales in device memory, [rows16][cols16/2] codes, into bf16 out [rows16][cols16]. Enqueued on stream.
Status dequantize_gpu_device(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float global_scale,
                             NibbleOrder nibbles, uint16_t* out, void* stream, int device = -1);
// The same with the global scale in device memory (a CUDA tensor), read by the kernel.
Status dequantize_gpu_device_with_device_scale(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols,
                                               const float* global_scale, NibbleOrder nibbles, uint16_t* out, void* stream,
                                               int device = -1);

}  // namespace nvfp4
