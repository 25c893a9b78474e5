// nvfp4_exact._core: the library's entry points for Python (nanobind). Arrays arrive as host
// ndarrays (numpy, or torch CPU tensors through DLPack, zero-copy) or, for the *_device entry points,
// as CUDA ndarrays (torch CUDA tensors through DLPack, zero-copy) with the caller's stream as an
// integer; outputs of those are allocated by the caller (torch) and written in place. Errors become
// Python exceptions carrying the library's one-line message: ValueError (bad input, a malformed file
// included), OSError (a file that cannot be read or written), NotImplementedError (unsupported
// here), RuntimeError (CUDA and anything else).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"

namespace nb = nanobind;
using namespace nvfp4;

namespace {

// ---------------------------------------------------------------------------------------------
// Errors
[[noreturn]] void raise(const Status& st) {
  PyObject* type = PyExc_RuntimeError;
  switch (st.code()) {
    case ErrorCode::kInvalidArgument: type = PyExc_ValueError; break;
    case ErrorCode::kIo: type = PyExc_OSError; break;
    case ErrorCode::kUnsupported: type = PyExc_NotImplementedError; break;
    default: break;
  }
  PyErr_SetString(type, st.message().c_str());
  throw nb::python_error();
}
void check(const Status& st) {
  if (!st.is_ok()) raise(st);
}
template <typename T>
T take(Result<T> r) {
  if (!r.is_ok()) raise(r.status());
  return std::move(r).value();
}

// ---------------------------------------------------------------------------------------------
// Arrays. Inputs: any C-contiguous host array, read-only ones too (np.load(mmap_mode='r'),
// np.frombuffer); dtypes are checked here so the message names the argument. Outputs: numpy arrays
// owning a moved std::vector.
using HostArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using CudaArray = nb::ndarray<nb::device::cuda, nb::c_contig>;

template <typename A>
bool is_dtype(const A& a, nb::dlpack::dtype_code code, int bits) {
  const nb::dlpack::dtype d = a.dtype();
  return d.code == static_cast<uint8_t>(code) && d.bits == bits && d.lanes == 1;
}
template <typename A>
void need_2d(const A& a, const char* name) {
  if (a.ndim() != 2) raise(invalid_argument(std::string(name) + " must be 2-D, got " + std::to_string(a.ndim()) + "-D"));
}
// bf16 as raw 16-bit patterns: bfloat16 (torch) or uint16 (numpy).
template <typename A>
const uint16_t* bf16_data(const A& a, const char* name) {
  if (!is_dtype(a, nb::dlpack::dtype_code::Bfloat, 16) && !is_dtype(a, nb::dlpack::dtype_code::UInt, 16))
    raise(invalid_argument(std::string(name) + " must be bf16 (torch.bfloat16, or uint16 bit patterns)"));
  return static_cast<const uint16_t*>(a.data());
}
// Packed codes and block scales: any one-byte type (uint8, int8, float8_e4m3fn viewed as uint8).
std::vector<uint8_t> bytes_of(const HostArray& a, const char* name) {
  if (a.itemsize() != 1) raise(invalid_argument(std::string(name) + " must be a one-byte array (uint8)"));
  const auto* p = static_cast<const uint8_t*>(a.data());
  return std::vector<uint8_t>(p, p + a.size());
}

template <typename T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> v, std::vector<size_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.data(), owner);
}

// ---------------------------------------------------------------------------------------------
// GEMM backends: "auto" (the first GPU kernel of available_gpu_kernels(), which lists the fastest
// first, else the CPU oracle), "cpu-oracle", or any name parse_gpu_kernel accepts.
std::string resolve_backend(const std::string& backend, const ReductionContract& c) {
  if (backend != "auto") return backend;
  // The fastest kernel of this machine that runs the contract, else the CPU oracle.
  for (GpuGemmKernel k : available_gpu_kernels())
    if (gpu_kernel_runs(k, c)) return to_string(k);
  return "cpu-oracle";
}

struct GemmOut {
  std::vector<float> raw;
  std::vector<uint16_t> out;
  std::string backend;
};

Result<GemmOut> gemm(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias, const std::string& backend_in,
                     const std::string& contract) {
  NVFP4_ASSIGN_OR_RETURN(ReductionContract c, ReductionContract::parse(contract));
  GemmOut g;
  g.backend = resolve_backend(backend_in, c);
  if (g.backend == "cpu-oracle") {
    GemmSpec spec;
    spec.alpha = alpha;
    spec.bias = bias;
    spec.contracts = {c};
    NVFP4_ASSIGN_OR_RETURN(auto r, gemm_oracle(a, w, spec));
    g.raw = std::move(r[0].raw);
    g.out = std::move(r[0].out);
    return g;
  }
  auto k = parse_gpu_kernel(g.backend);
  if (!k.is_ok())
    return invalid_argument("unknown backend '" + g.backend + "' (expected auto, cpu-oracle or a GPU kernel: " +
                            k.status().message() + ")");
  NVFP4_TRY(check_gpu_contract(k.value(), c, a.geom.cols));  // here too: a build without CUDA says why first
  NVFP4_ASSIGN_OR_RETURN(auto r, gemm_gpu(a, w, alpha, bias, k.value(), c));
  g.raw = std::move(r.raw);
  g.out = std::move(r.out);
  return g;
}

using GemmResultPy = std::pair<nb::ndarray<nb::numpy, uint16_t>, std::optional<nb::ndarray<nb::numpy, float>>>;

GemmResultPy finish(GemmOut g, int64_t m, int64_t n, bool raw) {
  std::optional<nb::ndarray<nb::numpy, float>> r;
  if (raw) r = to_numpy(std::move(g.raw), {size_t(m), size_t(n)});
  return {to_numpy(std::move(g.out), {size_t(m), size_t(n)}), r};
}

template <typename A>
const uint16_t* bias_of(const std::optional<A>& bias, int64_t n) {
  if (!bias) return nullptr;
  const uint16_t* p = bf16_data(*bias, "bias");
  if (static_cast<int64_t>(bias->size()) != n)
    raise(invalid_argument("bias has " + std::to_string(bias->size()) + " elements, the output has " + std::to_string(n) +
                           " columns"));
  return p;
}

// A checkpoint weight has roundup(N, 16) rows; N itself is out_features when given, else the bias
// length when there is a bias (a ComfyUI layer's bias has N elements), else the weight's rows.
int64_t resolve_out_features(int64_t weight_rows, std::optional<int64_t> bias_len, std::optional<int64_t> out_features) {
  int64_t n = weight_rows;
  if (out_features) {
    n = *out_features;
    if (bias_len && *bias_len != n)
      raise(invalid_argument("bias has " + std::to_string(*bias_len) + " elements, out_features is " + std::to_string(n)));
  } else if (bias_len) {
    n = *bias_len;
  }
  if (n <= 0 || n > weight_rows || n <= weight_rows - 16)
    raise(invalid_argument("out_features " + std::to_string(n) + " does not fit a weight of " + std::to_string(weight_rows) +
                           " rows (rows are out_features padded to 16: " + std::to_string(std::max<int64_t>(1, weight_rows - 15)) +
                           ".." + std::to_string(weight_rows) + ")" + (out_features ? "" : " (inferred from the bias length)")));
  return n;
}

// ---------------------------------------------------------------------------------------------
// Entry points

nb::tuple py_quantize(const HostArray& x, float global_scale, const std::string& recipe, const std::string& nibbles,
                      const std::string& scales, bool pad, const std::string& device) {
  need_2d(x, "x");
  const uint16_t* p = bf16_data(x, "x");
  QuantizeOptions opt;
  opt.recipe = take(parse_recipe(recipe));
  opt.nibbles = take(parse_nibble_order(nibbles));
  opt.scale_layout = take(parse_scale_layout(scales));
  opt.pad = pad;
  if (device != "cpu" && device != "gpu") raise(invalid_argument("device must be cpu or gpu, got '" + device + "'"));
  const int64_t rows = static_cast<int64_t>(x.shape(0)), cols = static_cast<int64_t>(x.shape(1));
  Result<Tensor> t = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    t = device == "gpu" ? quantize_gpu(p, rows, cols, global_scale, opt) : quantize(p, rows, cols, global_scale, opt);
  }
  Tensor q = take(std::move(t));
  const Geometry& g = q.geom;
  const std::vector<size_t> sshape = opt.scale_layout == ScaleLayout::kSwizzled128x4
                                         ? std::vector<size_t>{size_t(g.sf_rows_pad), size_t(g.sf_cols_pad)}
                                         : std::vector<size_t>{size_t(g.rows16), size_t(g.sf_cols)};
  return nb::make_tuple(to_numpy(std::move(q.data), {size_t(g.rows16), size_t(g.cols16 / 2)}),
                        to_numpy(std::move(q.scales), sshape));
}

float py_global_scale(const HostArray& x, const std::string& mode) {
  const uint16_t* p = bf16_data(x, "x");
  if (mode == "dynamic") return global_scale_dynamic(p, static_cast<int64_t>(x.size()));
  if (mode == "f32") return global_scale_f32(p, static_cast<int64_t>(x.size()));
  raise(invalid_argument("global scale mode must be 'dynamic' or 'f32', got '" + mode + "'"));
}

// The library's messages say "block scales", "global scale": `what` names the operand they are
// about, and data_name / scales_name its arrays, as the Python caller calls them.
Tensor make_tensor(const HostArray& data, const HostArray& scales, int64_t rows, int64_t cols, const std::string& nibbles,
                   const std::string& layout, float global_scale, const char* what, const char* data_name,
                   const char* scales_name) {
  Result<Tensor> t = Tensor::make(rows, cols, take(parse_nibble_order(nibbles)), take(parse_scale_layout(layout)),
                                  global_scale, bytes_of(data, data_name), bytes_of(scales, scales_name));
  if (!t.is_ok()) raise(Status(t.status().code(), std::string(what) + ": " + t.status().message()));
  return std::move(t).value();
}

nb::ndarray<nb::numpy, uint16_t> py_dequantize(const HostArray& data, const HostArray& scales, int64_t rows, int64_t cols,
                                               float global_scale, const std::string& nibbles, const std::string& layout,
                                               const std::string& recipe) {
  const Tensor t = make_tensor(data, scales, rows, cols, nibbles, layout, global_scale, "q", "q.data", "q.scales");
  const DequantRecipe r = take(parse_dequant_recipe(recipe));
  std::vector<uint16_t> out;
  {
    nb::gil_scoped_release unlocked;
    out = dequantize(t, r);
  }
  return to_numpy(std::move(out), {size_t(t.geom.rows16), size_t(t.geom.cols16)});
}

// D = A · W^T for two NVFP4 operands (comfy-kitchen's scaled_mm_nvfp4): A [m][k], W [n][k].
GemmResultPy py_gemm(const HostArray& a_data, const HostArray& a_scales, const HostArray& w_data, const HostArray& w_scales,
                     int64_t m, int64_t n, int64_t k, float alpha, const std::optional<HostArray>& bias,
                     const std::string& nibbles, const std::string& backend, const std::string& contract, bool raw) {
  const Tensor a = make_tensor(a_data, a_scales, m, k, nibbles, "swizzled128x4", 1.0f, "a", "a.data", "a.scales");
  const Tensor w = make_tensor(w_data, w_scales, n, k, nibbles, "swizzled128x4", 1.0f, "w", "w.data", "w.scales");
  const uint16_t* b = bias_of(bias, n);
  Result<GemmOut> g = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    g = gemm(a, w, alpha, b, backend, contract);
  }
  return finish(take(std::move(g)), m, n, raw);
}

// A ComfyUI NVFP4 linear layer: the bf16 activation quantized with comfy-cuda (dynamic scale
// f32(bf16(amax/2688)), or the static input_scale), alpha = f32(s_x * s_w), then the GEMM.
// The weight's logical [n][k] from its [roundup(n,16)][roundup(k,16)/2] bytes, the activation's K,
// the bias and out_features; checked, with the library's messages.
template <typename A>
std::pair<int64_t, int64_t> weight_shape(const A& weight, int64_t k, std::optional<int64_t> bias_len,
                                         std::optional<int64_t> out_features) {
  need_2d(weight, "weight");
  if (static_cast<int64_t>(weight.shape(1)) * 2 != roundup(k, 16))
    raise(invalid_argument("weight has " + std::to_string(weight.shape(1)) + " bytes per row; x has K = " +
                           std::to_string(k) + ", which needs " + std::to_string(roundup(k, 16) / 2)));
  return {resolve_out_features(static_cast<int64_t>(weight.shape(0)), bias_len, out_features), k};
}

GemmResultPy py_linear(const HostArray& x, const HostArray& weight, const HostArray& weight_scale, float weight_scale_2,
                       const std::optional<HostArray>& bias, std::optional<float> input_scale, const std::string& backend,
                       const std::string& contract, bool raw, std::optional<int64_t> out_features) {
  need_2d(x, "x");
  const uint16_t* px = bf16_data(x, "x");
  const int64_t m = static_cast<int64_t>(x.shape(0)), k = static_cast<int64_t>(x.shape(1));
  check(check_dim(m, "M (x's rows)", /*allow_zero=*/true));
  check(check_dim(k, "K (x's last dimension)"));
  const std::optional<int64_t> bias_len = bias ? std::optional<int64_t>(static_cast<int64_t>(bias->size())) : std::nullopt;
  const int64_t n = weight_shape(weight, k, bias_len, out_features).first;
  const Tensor w = make_tensor(weight, weight_scale, n, k, "hi_first", "swizzled128x4", weight_scale_2, "weight", "weight",
                               "weight_scale");
  const uint16_t* b = bias_of(bias, n);
  // An empty batch is checked like any other (K, dtypes, the weight's bytes) and then has nothing
  // to compute: the quantizer and the GEMMs take no empty matrix.
  if (m == 0) return finish(GemmOut{}, 0, n, raw);
  Result<GemmOut> g = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    const float s_x = input_scale ? *input_scale : global_scale_dynamic(px, m * k);
    QuantizeOptions qo;
    qo.pad = true;
    // Two finite scales (make_tensor has refused another weight_scale_2) whose product overflows
    // are refused. Python refuses a static input_scale's before calling; the dynamic s_x is known
    // here only. A non-finite s_x is the quantizer's to refuse, in its own words.
    Result<float> alpha = finite_alpha(s_x, weight_scale_2, input_scale ? "input_scale" : "s_x (x's dynamic scale)",
                                       "weight_scale_2");
    if (std::isfinite(s_x) && !alpha.is_ok()) {
      g = alpha.status();
    } else if (auto a = quantize(px, m, k, s_x, qo); !a.is_ok()) {
      g = a.status();
    } else {
      g = gemm(a.value(), w, alpha.value(), b, backend, contract);  // ok here: the quantizer refused a non-finite s_x
    }
  }
  return finish(take(std::move(g)), m, n, raw);
}

// ---------------------------------------------------------------------------------------------
// Device entry points: CUDA arrays in and out, work enqueued on `stream` (a cudaStream_t as an
// integer: torch.cuda.current_stream().cuda_stream), nothing copied through the host.

void* stream_of(uintptr_t s) { return reinterpret_cast<void*>(s); }
int device_of(const CudaArray& a) { return a.device_id(); }
void same_device(const CudaArray& a, int device, const char* name) {
  if (device_of(a) != device)
    raise(invalid_argument(std::string(name) + " is on CUDA device " + std::to_string(device_of(a)) + ", the operation on device " +
                           std::to_string(device)));
}
void need_size(size_t got, int64_t want, const char* name) {
  if (static_cast<int64_t>(got) != want)
    raise(invalid_argument(std::string(name) + " has " + std::to_string(got) + " elements, expected " + std::to_string(want)));
}
// A global scale left in device memory (a one-element float32 CUDA tensor on `device`), or null.
const float* device_scalar(const std::optional<CudaArray>& s, int device, const char* name) {
  if (!s) return nullptr;
  same_device(*s, device, name);
  need_size(s->size(), 1, name);
  if (!is_dtype(*s, nb::dlpack::dtype_code::Float, 32)) raise(invalid_argument(std::string(name) + " must be float32"));
  return static_cast<const float*>(s->data());
}

struct PyPreparedWeight {
  std::shared_ptr<const PreparedWeight> w;
  std::string backend;
};

// A ComfyUI layer's weight (host bytes: the prepack runs on the host, once) prepared on `device`
// for `backend` (sm90, sm120p-native, sm120p-emulated, sm120-native or sm120-emulated), logical [n][k]
// as weight_shape resolves it.
PyPreparedWeight py_prepare_weight(const HostArray& weight, const HostArray& weight_scale, float weight_scale_2, int64_t k,
                                   std::optional<int64_t> bias_len, std::optional<int64_t> out_features,
                                   const std::string& backend, int device) {
  const int64_t n = weight_shape(weight, k, bias_len, out_features).first;
  const Tensor w = make_tensor(weight, weight_scale, n, k, "hi_first", "swizzled128x4", weight_scale_2, "weight", "weight",
                               "weight_scale");
  const GpuGemmKernel kernel = take(parse_gpu_kernel(backend));
  Result<std::shared_ptr<const PreparedWeight>> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = prepare_weight_gpu(w, kernel, device);
  }
  return PyPreparedWeight{take(std::move(r)), backend};
}

// input_scale_dev: the static input scale as a one-element float32 CUDA array instead of input_scale,
// read by the sm90 pre-pass (nothing waits for the stream).
void py_linear_device(const PyPreparedWeight& pw, const CudaArray& x, const std::optional<CudaArray>& bias,
                      std::optional<float> input_scale, CudaArray& out, std::optional<CudaArray>& raw, uintptr_t stream,
                      const std::string& contract, const std::optional<CudaArray>& input_scale_dev) {
  const PreparedWeight& w = *pw.w;
  need_2d(x, "x");
  same_device(x, w.device, "x");
  DeviceLinear a;
  a.x = bf16_data(x, "x");
  a.m = static_cast<int64_t>(x.shape(0));
  a.k = static_cast<int64_t>(x.shape(1));
  if (bias) same_device(*bias, w.device, "bias");
  a.bias = bias_of(bias, w.n);
  a.s_static = input_scale ? *input_scale : 0.0f;
  if (input_scale && !(*input_scale > 0.0f)) raise(invalid_argument("input_scale must be > 0"));
  a.s_static_dev = device_scalar(input_scale_dev, w.device, "input_scale");
  same_device(out, w.device, "out");
  need_size(out.size(), a.m * w.n, "out");
  a.out = static_cast<uint16_t*>(out.data());
  if (raw) {
    same_device(*raw, w.device, "raw");
    need_size(raw->size(), a.m * w.n, "raw");
    if (!is_dtype(*raw, nb::dlpack::dtype_code::Float, 32)) raise(invalid_argument("raw must be float32"));
    a.raw = static_cast<float*>(raw->data());
  }
  a.stream = stream_of(stream);
  a.contract = take(ReductionContract::parse(contract));
  Status st;
  {
    nb::gil_scoped_release unlocked;
    st = linear_gpu_device(w, a);
  }
  check(st);
}

// A ComfyUI layer's weight already on a GPU (codes in `nibbles` order, swizzled scales) prepacked
// there for `backend` by kernels on `stream`: nothing goes through the host.
PyPreparedWeight py_prepare_weight_device(const CudaArray& weight, const CudaArray& weight_scale, float weight_scale_2, int64_t k,
                                          std::optional<int64_t> bias_len, std::optional<int64_t> out_features,
                                          const std::string& backend, const std::string& nibbles, uintptr_t stream) {
  const int64_t n = weight_shape(weight, k, bias_len, out_features).first;
  const GpuGemmKernel kernel = take(parse_gpu_kernel(backend));
  const int dev = device_of(weight);
  same_device(weight_scale, dev, "weight_scale");
  if (weight.itemsize() != 1 || weight_scale.itemsize() != 1)
    raise(invalid_argument("weight and weight_scale must be one-byte arrays (uint8 / float8_e4m3fn)"));
  const Geometry g = Geometry::of(n, k);
  if (static_cast<int64_t>(weight.shape(0)) < g.rows16)
    raise(invalid_argument("weight has " + std::to_string(weight.shape(0)) + " rows, N = " + std::to_string(n) + " needs " +
                           std::to_string(g.rows16)));
  const int64_t want_sf = roundup(static_cast<int64_t>(weight.shape(0)), 128) * g.sf_cols_pad;
  if (static_cast<int64_t>(weight_scale.size()) != want_sf && static_cast<int64_t>(weight_scale.size()) != g.scale_bytes(ScaleLayout::kSwizzled128x4))
    raise(invalid_argument("weight_scale has " + std::to_string(weight_scale.size()) + " bytes, swizzled scales of a [" +
                           std::to_string(weight.shape(0)) + "][" + std::to_string(k) + "] weight have " + std::to_string(want_sf)));
  DeviceWeightSource src;
  src.data = static_cast<const uint8_t*>(weight.data());
  src.scales = static_cast<const uint8_t*>(weight_scale.data());
  src.n = n;
  src.k = k;
  src.pitch = static_cast<int64_t>(weight.shape(1));
  src.nibbles = take(parse_nibble_order(nibbles));
  src.global_scale = weight_scale_2;
  src.stream = stream_of(stream);
  src.device = dev;
  Result<std::shared_ptr<const PreparedWeight>> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = prepare_weight_gpu_device(src, kernel);
  }
  return PyPreparedWeight{take(std::move(r)), backend};
}

// D = A · W^T with A already quantized on the GPU (comfy-kitchen's scaled_mm_nvfp4): a [>= m16][k16/2]
// codes, a_scales swizzled; writes out (and raw) on `stream`.
void py_matmul_device(const PyPreparedWeight& pw, const CudaArray& a, const CudaArray& a_scales, int64_t m, int64_t k,
                      const std::string& nibbles, float alpha, const std::optional<CudaArray>& bias, CudaArray& out,
                      std::optional<CudaArray>& raw, uintptr_t stream, const std::string& contract,
                      const std::optional<CudaArray>& scale_a, const std::optional<CudaArray>& scale_w) {
  const PreparedWeight& w = *pw.w;
  need_2d(a, "a");
  same_device(a, w.device, "a");
  same_device(a_scales, w.device, "a_scales");
  if (a.itemsize() != 1 || a_scales.itemsize() != 1) raise(invalid_argument("a and a_scales must be one-byte arrays (uint8)"));
  check(check_dim(m, "m"));
  const Geometry g = Geometry::of(m, k);
  if (static_cast<int64_t>(a.shape(1)) != g.row_bytes() || static_cast<int64_t>(a.shape(0)) < m)
    raise(invalid_argument("a is [" + std::to_string(a.shape(0)) + "][" + std::to_string(a.shape(1)) + "], expected [" +
                           std::to_string(g.rows16) + "][" + std::to_string(g.row_bytes()) + "] for A [" + std::to_string(m) +
                           "][" + std::to_string(k) + "]"));
  const int64_t want_sf = roundup(static_cast<int64_t>(a.shape(0)), 128) * g.sf_cols_pad;
  if (static_cast<int64_t>(a_scales.size()) < g.scale_bytes(ScaleLayout::kSwizzled128x4) ||
      static_cast<int64_t>(a_scales.size()) > std::max(want_sf, g.scale_bytes(ScaleLayout::kSwizzled128x4)))
    raise(invalid_argument("a_scales has " + std::to_string(a_scales.size()) + " bytes, A's swizzled scales have " +
                           std::to_string(g.scale_bytes(ScaleLayout::kSwizzled128x4))));
  DeviceMatmul d;
  d.a = static_cast<const uint8_t*>(a.data());
  d.a_scales = static_cast<const uint8_t*>(a_scales.data());
  d.m = m;
  d.k = k;
  d.a_pitch = static_cast<int64_t>(a.shape(1));
  d.nibbles = take(parse_nibble_order(nibbles));
  d.alpha = alpha;
  d.scale_a = device_scalar(scale_a, w.device, "scale_a");
  d.scale_w = device_scalar(scale_w, w.device, "scale_w");
  if (bias) same_device(*bias, w.device, "bias");
  d.bias = bias_of(bias, w.n);
  same_device(out, w.device, "out");
  need_size(out.size(), m * w.n, "out");
  d.out = static_cast<uint16_t*>(out.data());
  if (raw) {
    same_device(*raw, w.device, "raw");
    need_size(raw->size(), m * w.n, "raw");
    if (!is_dtype(*raw, nb::dlpack::dtype_code::Float, 32)) raise(invalid_argument("raw must be float32"));
    d.raw = static_cast<float*>(raw->data());
  }
  d.stream = stream_of(stream);
  d.contract = take(ReductionContract::parse(contract));
  Status st;
  {
    nb::gil_scoped_release unlocked;
    st = matmul_gpu_device(w, d);
  }
  check(st);
}

nb::tuple py_prepared_bytes(const PyPreparedWeight& pw) {
  Result<PreparedWeightBytes> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = prepared_weight_bytes(*pw.w);
  }
  PreparedWeightBytes b = take(std::move(r));
  const size_t nc = b.codes.size(), ns = b.scales.size(), nr = b.records.size();
  return nb::make_tuple(to_numpy(std::move(b.codes), {nc}), to_numpy(std::move(b.scales), {ns}),
                        to_numpy(std::move(b.records), {nr}));
}

// Output shapes are the caller's to allocate: [rows16][cols16/2] codes and the layout's scales.
// global_scale_dev: the scale in device memory instead of global_scale (read by the kernel).
void py_quantize_device(const CudaArray& x, float global_scale, const std::string& nibbles, const std::string& scales_layout,
                        bool pad, CudaArray& data, CudaArray& scales, uintptr_t stream,
                        const std::optional<CudaArray>& global_scale_dev) {
  need_2d(x, "x");
  const uint16_t* p = bf16_data(x, "x");
  QuantizeOptions opt;
  opt.nibbles = take(parse_nibble_order(nibbles));
  opt.scale_layout = take(parse_scale_layout(scales_layout));
  opt.pad = pad;
  const int64_t rows = static_cast<int64_t>(x.shape(0)), cols = static_cast<int64_t>(x.shape(1));
  if (!pad && (rows % 16 != 0 || cols % 16 != 0))  // the library's message, before the sizes below assume padding
    check(quantize_gpu_device(p, rows, cols, global_scale, opt, nullptr, nullptr, nullptr, device_of(x)));
  const Geometry g = Geometry::of(rows, cols);
  same_device(data, device_of(x), "data");
  same_device(scales, device_of(x), "scales");
  need_size(data.size() * data.itemsize(), g.data_bytes(), "data");
  need_size(scales.size() * scales.itemsize(), g.scale_bytes(opt.scale_layout), "scales");
  const float* s_dev = device_scalar(global_scale_dev, device_of(x), "global_scale");
  Status st;
  {
    nb::gil_scoped_release unlocked;
    auto* d = static_cast<uint8_t*>(data.data());
    auto* sf = static_cast<uint8_t*>(scales.data());
    st = s_dev ? quantize_gpu_device_with_device_scale(p, rows, cols, s_dev, opt, d, sf, stream_of(stream), device_of(x))
               : quantize_gpu_device(p, rows, cols, global_scale, opt, d, sf, stream_of(stream), device_of(x));
  }
  check(st);
}

// ComfyUI's global scale of a CUDA bf16 array (waits for the stream: the value comes to the host).
float py_global_scale_device(const CudaArray& x, const std::string& mode, uintptr_t stream) {
  const uint16_t* p = bf16_data(x, "x");
  if (mode != "dynamic" && mode != "f32")
    raise(invalid_argument("global scale mode must be 'dynamic' or 'f32', got '" + mode + "'"));
  Result<uint16_t> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = amax_bf16_device(p, static_cast<int64_t>(x.size()), stream_of(stream), device_of(x));
  }
  const float amax = bf16_to_f32(take(std::move(r)));
  // The formulas of global_scale_dynamic / global_scale_f32 (§2.4) on the device's amax.
  return mode == "dynamic" ? bf16_to_f32(bf16_rn(amax * (1.0f / 2688.0f))) : amax / 2688.0f;
}

// comfy-cuda dequantization of a tensor with swizzled scales into out [rows16][cols16] bf16.
void py_dequantize_device(const CudaArray& data, const CudaArray& scales, int64_t rows, int64_t cols, float global_scale,
                          const std::string& nibbles, CudaArray& out, uintptr_t stream,
                          const std::optional<CudaArray>& global_scale_dev) {
  const NibbleOrder o = take(parse_nibble_order(nibbles));
  check(check_dim(rows, "rows"));
  check(check_dim(cols, "cols"));
  const Geometry g = Geometry::of(rows, cols);
  const int dev = device_of(data);
  same_device(scales, dev, "scales");
  same_device(out, dev, "out");
  if (data.itemsize() != 1 || scales.itemsize() != 1) raise(invalid_argument("data and scales must be one-byte arrays (uint8)"));
  need_size(data.size(), g.data_bytes(), "data");
  need_size(scales.size(), g.scale_bytes(ScaleLayout::kSwizzled128x4), "scales");
  need_size(out.size(), g.rows16 * g.cols16, "out");
  const float* s_dev = device_scalar(global_scale_dev, dev, "global_scale");
  Status st;
  {
    nb::gil_scoped_release unlocked;
    const auto* d = static_cast<const uint8_t*>(data.data());
    const auto* sf = static_cast<const uint8_t*>(scales.data());
    auto* y = static_cast<uint16_t*>(out.data());
    st = s_dev ? dequantize_gpu_device_with_device_scale(d, sf, rows, cols, s_dev, o, y, stream_of(stream), dev)
               : dequantize_gpu_device(d, sf, rows, cols, global_scale, o, y, stream_of(stream), dev);
  }
  check(st);
}

std::string py_cuda_targets() { return std::string(built_cuda_targets()); }

bool py_kernels_cover(int major, int minor, const std::optional<std::string>& targets) {
  return kernels_cover(targets ? std::string_view(*targets) : built_cuda_targets(), major, minor) != KernelCode::kNone;
}

std::vector<std::string> py_available_backends() {
  std::vector<std::string> out;
  for (GpuGemmKernel k : available_gpu_kernels()) out.emplace_back(to_string(k));
  out.emplace_back("cpu-oracle");
  return out;
}

std::string py_resolve_backend(const std::string& backend, const std::string& contract) {
  const ReductionContract c = take(ReductionContract::parse(contract));
  const std::string b = resolve_backend(backend, c);
  if (b != "cpu-oracle") take(parse_gpu_kernel(b));
  return b;
}

// argv as for the nvfp4 executable, argv[0] being the program name.
struct Argv {
  std::vector<std::string> s;
  std::vector<char*> p;
  explicit Argv(std::vector<std::string> v) : s(std::move(v)) {
    for (auto& x : s) p.push_back(x.data());
    p.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(s.size()); }
};

int py_cli(std::vector<std::string> args) {
  Argv a(std::move(args));
  int rc;
  {
    nb::gil_scoped_release unlocked;
    rc = cli::run(a.argc(), a.p.data());
    std::fflush(stdout);
    std::fflush(stderr);
  }
  return rc;
}

std::string py_validate(std::vector<std::string> args) {
  Argv a(std::move(args));
  Result<ValidateReport> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = cli::validate_from_args(a.argc(), a.p.data());
  }
  return take(std::move(r)).summary.dump();
}

std::string py_explain(std::vector<std::string> args) {
  Argv a(std::move(args));
  Result<Json> r = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    r = cli::explain_from_args(a.argc(), a.p.data());
  }
  return take(std::move(r)).dump();
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "nvfp4-exact's C++ library (use the nvfp4_exact package, not this module)";
  m.attr("__version__") = NVFP4_VERSION;
  m.def("quantize", &py_quantize, nb::arg("x"), nb::arg("global_scale"), nb::arg("recipe"), nb::arg("nibbles"),
        nb::arg("scales"), nb::arg("pad"), nb::arg("device"),
        "bf16 [R][C] -> (data u8 [R16][C16/2], scales u8) with a ComfyUI recipe");
  m.def("global_scale", &py_global_scale, nb::arg("x"), nb::arg("mode"),
        "ComfyUI's global decode scale of a bf16 array: 'dynamic' f32(bf16(amax/2688)) or 'f32' amax/2688");
  m.def("dequantize", &py_dequantize, nb::arg("data"), nb::arg("scales"), nb::arg("rows"), nb::arg("cols"),
        nb::arg("global_scale"), nb::arg("nibbles"), nb::arg("scale_layout"), nb::arg("recipe"),
        "NVFP4 -> bf16 [R16][C16] (uint16 patterns)");
  m.def("gemm", &py_gemm, nb::arg("a_data"), nb::arg("a_scales"), nb::arg("w_data"), nb::arg("w_scales"), nb::arg("m"),
        nb::arg("n"), nb::arg("k"), nb::arg("alpha"), nb::arg("bias").none(), nb::arg("nibbles"), nb::arg("backend"),
        nb::arg("contract"), nb::arg("raw"),
        "D = A W^T on NVFP4 operands with swizzled scales: (bf16 [m][n], fp32 raw accumulators or None)");
  m.def("linear", &py_linear, nb::arg("x"), nb::arg("weight"), nb::arg("weight_scale"), nb::arg("weight_scale_2"),
        nb::arg("bias").none(), nb::arg("input_scale").none(), nb::arg("backend"), nb::arg("contract"), nb::arg("raw"),
        nb::arg("out_features").none(),
        "ComfyUI's NVFP4 linear layer: (bf16 [M][N], fp32 raw accumulators or None); N = out_features, else the bias "
        "length, else the weight's rows");
  m.def(
      "finite_alpha",
      [](float s_1, float s_2, const std::string& name_1, const std::string& name_2) {
        return take(finite_alpha(s_1, s_2, name_1.c_str(), name_2.c_str()));
      },
      nb::arg("s_1"), nb::arg("s_2"), nb::arg("name_1"), nb::arg("name_2"),
      "f32(s_1 * s_2), the alpha of two global scales; ValueError in the library's words unless finite");
  m.def("out_features", &resolve_out_features, nb::arg("weight_rows"), nb::arg("bias_len").none(),
        nb::arg("out_features").none(), "the layer's N from its padded weight rows, bias length and out_features, checked");
  nb::class_<PyPreparedWeight>(m, "PreparedWeight", "a layer's weight prepacked on a GPU for one kernel")
      .def_prop_ro("n", [](const PyPreparedWeight& p) { return p.w->n; })
      .def_prop_ro("k", [](const PyPreparedWeight& p) { return p.w->k; })
      .def_prop_ro("device", [](const PyPreparedWeight& p) { return p.w->device; })
      .def_prop_ro("s_w", [](const PyPreparedWeight& p) { return p.w->s_w; })
      .def_prop_ro("backend", [](const PyPreparedWeight& p) { return p.backend; });
  m.def("prepare_weight", &py_prepare_weight, nb::arg("weight"), nb::arg("weight_scale"), nb::arg("weight_scale_2"),
        nb::arg("k"), nb::arg("bias_len").none(), nb::arg("out_features").none(), nb::arg("backend"), nb::arg("device"),
        "a ComfyUI layer's weight (host bytes) prepacked on CUDA device `device` for `backend`");
  m.def("linear_device", &py_linear_device, nb::arg("weight"), nb::arg("x"), nb::arg("bias").none(),
        nb::arg("input_scale").none(), nb::arg("out"), nb::arg("raw").none(), nb::arg("stream"),
        nb::arg("contract") = "sequential", nb::arg("input_scale_dev").none() = nb::none(),
        "the linear layer on CUDA arrays under `contract`, enqueued on `stream` (a cudaStream_t as an integer); "
        "writes out (and raw). input_scale_dev: the static input scale as a one-element float32 CUDA array "
        "instead of input_scale, read on the GPU (sm90)");
  m.def("prepare_weight_device", &py_prepare_weight_device, nb::arg("weight"), nb::arg("weight_scale"),
        nb::arg("weight_scale_2"), nb::arg("k"), nb::arg("bias_len").none(), nb::arg("out_features").none(),
        nb::arg("backend"), nb::arg("nibbles"), nb::arg("stream"),
        "a weight already on a GPU (CUDA arrays) prepacked there for `backend` on `stream` (waits for it once)");
  m.def("matmul_device", &py_matmul_device, nb::arg("weight"), nb::arg("a"), nb::arg("a_scales"), nb::arg("m"), nb::arg("k"),
        nb::arg("nibbles"), nb::arg("alpha"), nb::arg("bias").none(), nb::arg("out"), nb::arg("raw").none(),
        nb::arg("stream"), nb::arg("contract") = "sequential", nb::arg("scale_a").none() = nb::none(),
        nb::arg("scale_w").none() = nb::none(),
        "D = A W^T for a packed NVFP4 A on the GPU under `contract`, enqueued on `stream`; writes out (and raw). "
        "scale_a, scale_w: A's and W's global scales as one-element float32 CUDA arrays, alpha formed on the GPU");
  m.def("prepared_bytes", &py_prepared_bytes, nb::arg("weight"),
        "a prepared weight's device bytes (codes, scales, records) as numpy arrays (tests)");
  m.def("quantize_device", &py_quantize_device, nb::arg("x"), nb::arg("global_scale"), nb::arg("nibbles"), nb::arg("scales"),
        nb::arg("pad"), nb::arg("data"), nb::arg("scales_out"), nb::arg("stream"),
        nb::arg("global_scale_dev").none() = nb::none(),
        "comfy-cuda quantization of a CUDA bf16 array into caller-allocated CUDA arrays, on `stream`; "
        "global_scale_dev: the scale as a one-element float32 CUDA array instead, read by the kernel");
  m.def("global_scale_device", &py_global_scale_device, nb::arg("x"), nb::arg("mode"), nb::arg("stream"),
        "ComfyUI's global scale of a CUDA bf16 array (synchronizes `stream`)");
  m.def("dequantize_device", &py_dequantize_device, nb::arg("data"), nb::arg("scales"), nb::arg("rows"), nb::arg("cols"),
        nb::arg("global_scale"), nb::arg("nibbles"), nb::arg("out"), nb::arg("stream"),
        nb::arg("global_scale_dev").none() = nb::none(),
        "comfy-cuda dequantization (swizzled scales) of CUDA arrays into out bf16 [R16][C16], on `stream`; "
        "global_scale_dev: the scale as a one-element float32 CUDA array instead, read by the kernel");
  m.def("cuda_targets", &py_cuda_targets,
        "the GPU architectures the kernels are built for (machine code, no PTX); empty without CUDA");
  m.def("kernels_cover", &py_kernels_cover, nb::arg("major"), nb::arg("minor"), nb::arg("targets") = nb::none(),
        "whether a build for `targets` (this build's when None) has kernels a GPU of compute capability major.minor runs");
  m.def("available_backends", &py_available_backends, "GEMM backends of this machine, fastest first");
  m.def("resolve_backend", &py_resolve_backend, nb::arg("backend"), nb::arg("contract"),
        "the backend a name stands for here ('auto' resolved), checked");
  m.def("cli", &py_cli, nb::arg("argv"), "runs the nvfp4 command line; returns its exit code");
  m.def("validate", &py_validate, nb::arg("argv"), "nvfp4 validate: the summary report as JSON text");
  m.def("explain", &py_explain, nb::arg("argv"), "nvfp4 explain: the report as JSON text");
}
