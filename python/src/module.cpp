// nvfp4_exact._core: the library's entry points for Python (nanobind). Arrays arrive as host
// ndarrays (numpy, or torch CPU tensors through DLPack, zero-copy); nvfp4_exact/_arrays.py brings
// other devices to the host first. Errors become Python exceptions carrying the library's one-line
// message: ValueError (bad input), OSError (I/O), NotImplementedError (unsupported here),
// RuntimeError (CUDA and anything else).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nvfp4/cuda.hpp"
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
// Arrays. Inputs: any C-contiguous host array; dtypes are checked here so the message names the
// argument. Outputs: numpy arrays owning a moved std::vector.
using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

bool is_dtype(const HostArray& a, nb::dlpack::dtype_code code, int bits) {
  const nb::dlpack::dtype d = a.dtype();
  return d.code == static_cast<uint8_t>(code) && d.bits == bits && d.lanes == 1;
}
void need_2d(const HostArray& a, const char* name) {
  if (a.ndim() != 2) raise(invalid_argument(std::string(name) + " must be 2-D, got " + std::to_string(a.ndim()) + "-D"));
}
// bf16 as raw 16-bit patterns: bfloat16 (torch) or uint16 (numpy).
const uint16_t* bf16_data(const HostArray& a, const char* name) {
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
  const auto k = available_gpu_kernels();
  // GPU kernels implement the sequential contract only.
  return !k.empty() && c.is_sequential() ? to_string(k.front()) : "cpu-oracle";
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
  if (!c.is_sequential())
    return invalid_argument("backend " + g.backend + " implements the sequential contract only; use cpu-oracle for " +
                            c.to_string());
  NVFP4_ASSIGN_OR_RETURN(auto r, gemm_gpu(a, w, alpha, bias, k.value()));
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

const uint16_t* bias_of(const std::optional<HostArray>& bias, int64_t n) {
  if (!bias) return nullptr;
  const uint16_t* p = bf16_data(*bias, "bias");
  if (static_cast<int64_t>(bias->size()) != n)
    raise(invalid_argument("bias has " + std::to_string(bias->size()) + " elements, the output has " + std::to_string(n) +
                           " columns"));
  return p;
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

Tensor make_tensor(const HostArray& data, const HostArray& scales, int64_t rows, int64_t cols, const std::string& nibbles,
                   const std::string& layout, float global_scale, const char* name) {
  return take(Tensor::make(rows, cols, take(parse_nibble_order(nibbles)), take(parse_scale_layout(layout)), global_scale,
                           bytes_of(data, name), bytes_of(scales, (std::string(name) + " scales").c_str())));
}

nb::ndarray<nb::numpy, uint16_t> py_dequantize(const HostArray& data, const HostArray& scales, int64_t rows, int64_t cols,
                                               float global_scale, const std::string& nibbles, const std::string& layout,
                                               const std::string& recipe) {
  const Tensor t = make_tensor(data, scales, rows, cols, nibbles, layout, global_scale, "data");
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
  const Tensor a = make_tensor(a_data, a_scales, m, k, nibbles, "swizzled128x4", 1.0f, "a");
  const Tensor w = make_tensor(w_data, w_scales, n, k, nibbles, "swizzled128x4", 1.0f, "b");
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
GemmResultPy py_linear(const HostArray& x, const HostArray& weight, const HostArray& weight_scale, float weight_scale_2,
                       const std::optional<HostArray>& bias, std::optional<float> input_scale, const std::string& backend,
                       const std::string& contract, bool raw) {
  need_2d(x, "x");
  need_2d(weight, "weight");
  const uint16_t* px = bf16_data(x, "x");
  const int64_t m = static_cast<int64_t>(x.shape(0)), k = static_cast<int64_t>(x.shape(1));
  const int64_t n = static_cast<int64_t>(weight.shape(0));
  if (static_cast<int64_t>(weight.shape(1)) * 2 != roundup(k, 16))
    raise(invalid_argument("weight has " + std::to_string(weight.shape(1)) + " bytes per row; x has K = " +
                           std::to_string(k) + ", which needs " + std::to_string(roundup(k, 16) / 2)));
  const Tensor w = make_tensor(weight, weight_scale, n, k, "hi_first", "swizzled128x4", weight_scale_2, "weight");
  const uint16_t* b = bias_of(bias, n);
  Result<GemmOut> g = invalid_argument("");
  {
    nb::gil_scoped_release unlocked;
    const float s_x = input_scale ? *input_scale : global_scale_dynamic(px, m * k);
    QuantizeOptions qo;
    qo.pad = true;
    auto a = quantize(px, m, k, s_x, qo);
    g = a.is_ok() ? gemm(a.value(), w, s_x * weight_scale_2, b, backend, contract) : Result<GemmOut>(a.status());
  }
  return finish(take(std::move(g)), m, n, raw);
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
        "ComfyUI's NVFP4 linear layer: (bf16 [M][N], fp32 raw accumulators or None)");
  m.def("available_backends", &py_available_backends, "GEMM backends of this machine, fastest first");
  m.def("resolve_backend", &py_resolve_backend, nb::arg("backend"), nb::arg("contract"),
        "the backend a name stands for here ('auto' resolved), checked");
  m.def("cli", &py_cli, nb::arg("argv"), "runs the nvfp4 command line; returns its exit code");
  m.def("validate", &py_validate, nb::arg("argv"), "nvfp4 validate: the summary report as JSON text");
  m.def("explain", &py_explain, nb::arg("argv"), "nvfp4 explain: the report as JSON text");
}
