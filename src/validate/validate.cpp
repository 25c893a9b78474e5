// `nvfp4 validate`: the P0 harness. Quantizes seeded (or given) bf16 inputs exactly as ComfyUI does,
// runs a candidate GEMM and a reference GEMM, and reports in the schema of the GB10 status report
// (docs/numerics.md §10) with the extra evidence a mismatch needs: counts, coordinates, hex values,
// ULP histograms, the contracts, and how sensitive each shape is to the reduction contract.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "nvfp4/checkpoint.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4 {

std::string Backend::describe() const { return name + "@" + contract.to_string(); }

Result<Backend> parse_backend(const std::string& s) {
  Backend b;
  const auto at = s.find('@');
  b.name = s.substr(0, at);
  static const char* kNames[] = {"cpu-oracle",          "cpu-reference",         "sm90",                "sm90-stream",
                                 "gpu-model",           "sm120-emulated",        "sm120-native",        "sm120-stream-emulated",
                                 "sm120-stream-native", "sm120p-emulated",       "sm120p-native",       "sm120p-stream-emulated",
                                 "sm120p-stream-native", "cublaslt"};
  bool known = false;
  for (const char* n : kNames) known = known || b.name == n;
  if (!known)
    return invalid_argument("unknown backend '" + b.name +
                            "' (expected cpu-oracle, cpu-reference, sm90, sm90-stream, gpu-model, sm120-emulated, "
                            "sm120-native, sm120-stream-emulated, sm120-stream-native, sm120p-emulated, sm120p-native, "
                            "sm120p-stream-emulated, sm120p-stream-native or cublaslt)");
  if (at != std::string::npos) {
    NVFP4_ASSIGN_OR_RETURN(b.contract, ReductionContract::parse(s.substr(at + 1)));
    b.contract_given = true;
    if (b.name == "cpu-reference" || b.name == "cublaslt")
      return invalid_argument("backend " + b.name + " runs its own contract; '" + s + "' cannot ask for " +
                              b.contract.to_string());
  }
  return b;
}

namespace {

// The backends whose kernels run on one GPU architecture, told by its compute capability major:
// the check and its refusal read the same row, so the message cannot name another capability.
struct NativeArch {
  int cc_major;
  const char* gpus;  // that architecture's GPUs, in words
};
constexpr NativeArch kHopper{9, "a Hopper"};
constexpr NativeArch kSm12x{12, "a Blackwell RTX or GB10"};
struct NativeBackend {
  const char* name;
  const NativeArch* arch;
  const char* instead;  // the emulated backend that runs on any GPU, or null
};
constexpr NativeBackend kNativeBackends[] = {
    {"sm90", &kHopper, nullptr},
    {"sm90-stream", &kHopper, nullptr},
    {"sm120-native", &kSm12x, "sm120-emulated"},
    {"sm120-stream-native", &kSm12x, "sm120-stream-emulated"},
    {"sm120p-native", &kSm12x, "sm120p-emulated"},
    {"sm120p-stream-native", &kSm12x, "sm120p-stream-emulated"},
};

}  // namespace

Status check_backend_device(const std::string& backend, const DeviceInfo& dev) {
  for (const NativeBackend& b : kNativeBackends) {
    if (backend != b.name || dev.cc_major == b.arch->cc_major) continue;
    return unsupported(backend + " needs " + b.arch->gpus + " GPU (compute capability " + std::to_string(b.arch->cc_major) +
                       ".x); this is " + dev.name + " (" + std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor) +
                       ")" + (b.instead ? std::string(": use ") + b.instead : std::string()));
  }
  return Status::ok();
}

namespace {

// The GPU kernel behind a GPU backend name (streaming names included); not ok for CPU and cuBLASLt.
Result<GpuGemmKernel> side_kernel(const Backend& b) {
  if (b.name == "sm120-stream-native") return GpuGemmKernel::kSm120Native;
  if (b.name == "sm120-stream-emulated") return GpuGemmKernel::kSm120Emulated;
  if (b.name == "sm120p-stream-native") return GpuGemmKernel::kSm120pNative;
  if (b.name == "sm120p-stream-emulated") return GpuGemmKernel::kSm120pEmulated;
  if (b.name == "sm90-stream") return GpuGemmKernel::kSm90;
  return parse_gpu_kernel(b.name);
}
bool takes_contract_flag(const Backend& b) {
  return !b.contract_given && b.name != "cpu-reference" && b.name != "cublaslt";
}

// --contract: a fixed contract, or the one cuBLASLt's plan maps to (resolved per linear).
struct ContractFlag {
  bool set = false;
  bool from_cublaslt = false;
  ReductionContract fixed;
  int grain = 0;  // cublaslt: the K grain of a split-K plan, 0 = not given
  PartitionRule rule = PartitionRule::kCublas;
};
Result<ContractFlag> parse_contract_flag(const std::string& s) {
  ContractFlag f;
  if (s.empty()) return f;
  f.set = true;
  if (s.rfind("cublaslt", 0) != 0) {
    NVFP4_ASSIGN_OR_RETURN(f.fixed, ReductionContract::parse(s));
    return f;
  }
  f.from_cublaslt = true;
  std::string rest = s.substr(8);
  while (!rest.empty()) {
    if (rest[0] != ':') return invalid_argument("bad --contract '" + s + "' (expected cublaslt[:grain=G][:cublas|cutlass])");
    rest = rest.substr(1);
    const std::string tok = rest.substr(0, rest.find(':'));
    rest = rest.substr(tok.size());
    if (tok == "cublas") f.rule = PartitionRule::kCublas;
    else if (tok == "cutlass") f.rule = PartitionRule::kCutlass;
    else if (tok.rfind("grain=", 0) == 0) {
      // The grain rules of a contract: parse one with it.
      NVFP4_ASSIGN_OR_RETURN(ReductionContract c, ReductionContract::parse("split_k:2:" + tok));
      f.grain = c.grain;
    } else {
      return invalid_argument("bad --contract '" + s + "': unknown field '" + tok + "' (expected cublaslt[:grain=G][:cublas|cutlass])");
    }
  }
  return f;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}
std::string hex16(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", v);
  return b;
}

// Distance in representable values (same-sign ordering), for histograms in units in the last place.
int64_t ordered(uint32_t bits, int width) {
  const uint32_t sign = 1u << (width - 1);
  return (bits & sign) ? -static_cast<int64_t>(bits & (sign - 1)) : static_cast<int64_t>(bits);
}

struct SideOutput {
  bool sampled = false;            // values only at `coords`
  std::vector<float> raw;          // full [M][N] or one per coord
  std::vector<uint16_t> out;
  std::vector<float> sens_raw;     // the sensitivity contract's outputs, when this side computed them
  std::vector<uint16_t> sens_out;
  double seconds = 0;
  double kernel_ms = -1;
};

struct Problem : LayerProblem {
  std::vector<Coord> sample;
};

Result<SideOutput> run_side(const Backend& b, const Problem& p, const ValidateOptions& opt, bool with_sensitivity) {
  SideOutput so;
  const auto t0 = Clock::now();
  if (b.name == "cpu-oracle") {
    GemmSpec spec;
    spec.alpha = p.alpha;
    spec.contracts = {b.contract};
    if (with_sensitivity) spec.contracts.push_back(opt.sensitivity);
    NVFP4_ASSIGN_OR_RETURN(auto res, gemm_oracle(p.a, p.w, spec));
    so.raw = std::move(res[0].raw);
    so.out = std::move(res[0].out);
    if (with_sensitivity) {
      so.sens_raw = std::move(res[1].raw);
      so.sens_out = std::move(res[1].out);
    }
  } else if (b.name == "cpu-reference") {
    NVFP4_ASSIGN_OR_RETURN(so.raw, gemm_reference_at(p.a, p.w, p.sample));
    so.sampled = true;
    so.out.resize(so.raw.size());
    for (size_t i = 0; i < so.raw.size(); ++i)
      so.out[i] = merge_partials(&so.raw[i], 1, MergeMode::kFp32, Epilogue::kAlphaBeforeBf16, p.alpha, -0.0f).bf16;
  } else if (b.name == "cublaslt") {
    NVFP4_ASSIGN_OR_RETURN(auto r, cublaslt_gemm(p.a, p.w, p.alpha, nullptr, CublasLtPlanRequest{}));
    so.raw = std::move(r.raw);
    so.out = std::move(r.out);
    so.kernel_ms = r.kernel_ms;
  } else if (b.name.rfind("sm120-stream-", 0) == 0 || b.name.rfind("sm120p-stream-", 0) == 0 || b.name == "sm90-stream") {
    NVFP4_ASSIGN_OR_RETURN(GpuGemmKernel k, side_kernel(b));
    // A checkpoint layer's static input_scale goes to the kernel; the kernel then reports it back as s_x.
    NVFP4_ASSIGN_OR_RETURN(auto r, gemm_gpu_stream_a(p.x.data(), p.m, p.shape.k, p.w, nullptr, k, b.contract, p.s_static));
    if (f32_bits(r.s_x) != f32_bits(p.s_x))
      return Status(ErrorCode::kMismatch, b.name + ": the GPU's activation scale " + hex32(f32_bits(r.s_x)) +
                                              " differs from ComfyUI's " + hex32(f32_bits(p.s_x)));
    so.raw = std::move(r.raw);
    so.out = std::move(r.out);
    so.kernel_ms = r.kernel_ms;
  } else {
    NVFP4_ASSIGN_OR_RETURN(GpuGemmKernel k, parse_gpu_kernel(b.name));
    NVFP4_ASSIGN_OR_RETURN(auto r, gemm_gpu(p.a, p.w, p.alpha, nullptr, k, b.contract));
    so.raw = std::move(r.raw);
    so.out = std::move(r.out);
    so.kernel_ms = r.kernel_ms;
  }
  so.seconds = seconds_since(t0);
  return so;
}

Comparison compare(const SideOutput& cand, const SideOutput& ref, const Problem& p) {
  Comparison c;
  const bool sampled = cand.sampled || ref.sampled;
  const int64_t count = sampled ? static_cast<int64_t>(p.sample.size()) : p.m * p.shape.n;
  c.compared = count;
  c.raw_available = !cand.raw.empty() && !ref.raw.empty();
  const char* bins[] = {"0", "1", "2", "3-4", "5-8", "9-16", "17-256", ">256", "nan_or_inf"};
  int64_t hist[9] = {};
  double raw_sum = 0, fused_sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t ci = i, ri = i, m, n;
    if (sampled) {
      m = p.sample[i].m;
      n = p.sample[i].n;
      if (!cand.sampled) ci = m * p.shape.n + n;
      if (!ref.sampled) ri = m * p.shape.n + n;
    } else {
      m = i / p.shape.n;
      n = i % p.shape.n;
    }
    const float cr = c.raw_available ? cand.raw[ci] : 0.0f, rr = c.raw_available ? ref.raw[ri] : 0.0f;
    const uint16_t co = cand.out[ci], ro = ref.out[ri];
    const bool raw_same = f32_bits(cr) == f32_bits(rr) || (std::isnan(cr) && std::isnan(rr));
    const bool out_same = co == ro;
    const double rd = std::fabs(static_cast<double>(cr) - rr);
    const double od = std::fabs(static_cast<double>(bf16_to_f32(co)) - bf16_to_f32(ro));
    if (!raw_same) {
      ++c.raw_diff_count;
      if (std::isfinite(rd)) { c.raw_max_abs = std::max(c.raw_max_abs, rd); raw_sum += rd; }
    }
    if (!out_same) {
      ++c.fused_diff_count;
      if (std::isfinite(od)) { c.fused_max_abs = std::max(c.fused_max_abs, od); fused_sum += od; }
    }
    int bin;
    const float cf = bf16_to_f32(co), rf = bf16_to_f32(ro);
    if (out_same) bin = 0;
    else if (!std::isfinite(cf) || !std::isfinite(rf)) bin = 8;
    else {
      const int64_t u = std::llabs(ordered(co, 16) - ordered(ro, 16));
      bin = u == 1 ? 1 : u == 2 ? 2 : u <= 4 ? 3 : u <= 8 ? 4 : u <= 16 ? 5 : u <= 256 ? 6 : 7;
    }
    ++hist[bin];
    if ((!raw_same || !out_same) && c.first_diffs.size() < 10) {
      Json d = Json::object();
      d.set("m", m).set("n", n);
      d.set("candidate_raw", hex32(f32_bits(cr))).set("reference_raw", hex32(f32_bits(rr)));
      d.set("candidate_raw_value", static_cast<double>(cr)).set("reference_raw_value", static_cast<double>(rr));
      d.set("candidate_bf16", hex16(co)).set("reference_bf16", hex16(ro));
      c.first_diffs.push(std::move(d));
    }
  }
  c.raw_equal = c.raw_available && c.raw_diff_count == 0;
  c.fused_equal = c.fused_diff_count == 0;
  c.raw_mean_abs = count ? raw_sum / static_cast<double>(count) : 0;
  c.fused_mean_abs = count ? fused_sum / static_cast<double>(count) : 0;
  for (int b = 0; b < 9; ++b) c.ulp_histogram.set(bins[b], hist[b]);
  return c;
}

// Sequential vs the sensitivity contract: how much this shape's bits depend on the reduction order.
Json sensitivity_json(const std::vector<float>& seq_raw, const std::vector<uint16_t>& seq_out,
                      const std::vector<float>& alt_raw, const std::vector<uint16_t>& alt_out,
                      const ReductionContract& alt, bool sampled) {
  int64_t raw_diff = 0, out_diff = 0;
  double raw_max = 0, out_max = 0;
  for (size_t i = 0; i < seq_raw.size(); ++i) {
    if (f32_bits(seq_raw[i]) != f32_bits(alt_raw[i])) {
      ++raw_diff;
      raw_max = std::max(raw_max, std::fabs(static_cast<double>(seq_raw[i]) - alt_raw[i]));
    }
    if (seq_out[i] != alt_out[i]) {
      ++out_diff;
      out_max = std::max(out_max, std::fabs(static_cast<double>(bf16_to_f32(seq_out[i])) - bf16_to_f32(alt_out[i])));
    }
  }
  Json j = Json::object();
  j.set("contracts", Json::array().push("sequential").push(alt.to_string()));
  j.set("outputs_compared", static_cast<int64_t>(seq_raw.size())).set("sampled", sampled);
  j.set("raw_differing", raw_diff).set("raw_max_abs", raw_max);
  j.set("fused_alpha_differing", out_diff).set("fused_alpha_max_abs", out_max);
  return j;
}

std::string device_string(const std::vector<Backend>& cands, const Backend& ref, std::string* cc) {
  bool gpu = ref.name != "cpu-oracle" && ref.name != "cpu-reference";
  for (const auto& c : cands) gpu = gpu || (c.name != "cpu-oracle" && c.name != "cpu-reference");
  if (gpu) {
    auto d = cuda_device();
    if (d.is_ok()) {
      *cc = "SM" + std::to_string(d->cc_major) + std::to_string(d->cc_minor);
      return d->name;
    }
  }
  *cc = "none (CPU)";
  std::string model = "CPU";
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
}

uint64_t name_hash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name: per-linear seeds
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A bf16 [M][K] activation with k_min <= K <= k_max (a checkpoint fixes only the padded width).
Result<std::vector<uint16_t>> read_activation(const std::string& path, int64_t* m, int64_t k_min, int64_t k_max) {
  NVFP4_ASSIGN_OR_RETURN(NpyArray ax, read_npy(path));
  const std::string want = k_min == k_max ? std::to_string(k_min) : std::to_string(k_min) + ".." + std::to_string(k_max);
  if (ax.dtype != "u2" || ax.shape.size() != 2 || ax.shape[0] <= 0 || ax.shape[1] < k_min || ax.shape[1] > k_max)
    return invalid_argument("'" + path + "' must be a bf16 [M][" + want + "] array");
  *m = ax.shape[0];
  std::vector<uint16_t> x(ax.bytes.size() / 2);
  std::memcpy(x.data(), ax.bytes.data(), ax.bytes.size());
  return x;
}

// The layer's alpha (finite_alpha: a large activation's dynamic s_x and a large weight_scale_2 can
// overflow it), its refusal prefixed with where the scales come from.
Result<float> layer_alpha(float s_x, float s_w, const char* x_name, const char* w_name, const std::string& where) {
  Result<float> a = finite_alpha(s_x, s_w, x_name, w_name);
  if (!a.is_ok()) return invalid_argument(where + ": " + a.status().message());
  return a;
}

constexpr const char* kDynamicSx = "s_x (x's dynamic scale)";

}  // namespace

Result<LayerProblem> prepare_layer(const LinearShape& l, int64_t rows, uint64_t seed, const std::string& inputs_dir) {
  LayerProblem p;
  p.shape = l;
  std::vector<uint16_t> x, w;
  Json in = Json::object();
  if (inputs_dir.empty()) {
    NVFP4_TRY(check_gemm_problem(rows, l.n, l.k, 1, l.name));
    const uint64_t h = name_hash(l.name);
    const uint64_t sx = seed ^ h, sw = seed ^ (h * 31 + 7);
    p.m = rows;
    x = synthetic_activation(rows, l.k, sx);
    w = synthetic_weight(l.n, l.k, sw);
    in.set("source", "synthetic").set("seed", static_cast<int64_t>(seed));
    in.set("activation", "N(0,1)*N(0,1) * 2^U{-3..3} per channel, ~1% outlier channels x32").set("weight", "N(0,0.02) * 2^U{-2..2} per row");
  } else {
    const std::string px = inputs_dir + "/" + l.name + ".x.npy";
    NVFP4_ASSIGN_OR_RETURN(x, read_activation(px, &p.m, l.k, l.k));
    in.set("source", inputs_dir).set("x", px);
    // The weight as a ComfyUI checkpoint stores it (docs/numerics.md §7), when present:
    // <name>.weight.npy [N16][K16/2] u8 hi_first, <name>.weight_scale.npy swizzled u8,
    // <name>.weight_scale_2.npy f32 scalar. Otherwise <name>.w.npy in bf16, quantized here.
    const std::string pq = inputs_dir + "/" + l.name + ".weight.npy";
    // Present or not by the name alone: opening a FIFO here would wait for a writer (read_npy
    // refuses what is not a regular file).
    std::error_code ec;
    if (std::filesystem::exists(pq, ec)) {
      const std::string ps = inputs_dir + "/" + l.name + ".weight_scale.npy", ps2 = inputs_dir + "/" + l.name + ".weight_scale_2.npy";
      NVFP4_ASSIGN_OR_RETURN(NpyArray aq, read_npy(pq));
      NVFP4_ASSIGN_OR_RETURN(NpyArray as, read_npy(ps));
      NVFP4_ASSIGN_OR_RETURN(NpyArray as2, read_npy(ps2));
      if (aq.dtype != "u1" || as.dtype != "u1") return invalid_argument("'" + pq + "' and '" + ps + "' must be uint8 arrays");
      if (as2.dtype != "f4" || as2.bytes.size() != 4) return invalid_argument("'" + ps2 + "' must hold one float32");
      float s_w;
      std::memcpy(&s_w, as2.bytes.data(), 4);
      if (std::string why = weight_global_scale_problem(s_w); !why.empty()) return invalid_argument("'" + ps2 + "': " + why);
      NVFP4_ASSIGN_OR_RETURN(p.w, Tensor::make(l.n, l.k, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, s_w,
                                               std::move(aq.bytes), std::move(as.bytes)));
      p.s_w = s_w;
      in.set("weight", pq).set("weight_scale", ps).set("weight_scale_2", ps2);
    } else {
      const std::string pw = inputs_dir + "/" + l.name + ".w.npy";
      NVFP4_ASSIGN_OR_RETURN(NpyArray aw, read_npy(pw));
      if (aw.dtype != "u2" || aw.shape.size() != 2 || aw.shape[0] != l.n || aw.shape[1] != l.k)
        return invalid_argument("'" + pw + "' must be a bf16 [" + std::to_string(l.n) + "][" + std::to_string(l.k) + "] array");
      w.resize(aw.bytes.size() / 2);
      std::memcpy(w.data(), aw.bytes.data(), aw.bytes.size());
      in.set("w", pw);
    }
  }
  const bool quantize_weight = !w.empty();  // bf16 weight (synthetic or a file), not checkpoint arrays
  p.s_x = global_scale_dynamic(x.data(), static_cast<int64_t>(x.size()));
  if (quantize_weight) p.s_w = global_scale_dynamic(w.data(), static_cast<int64_t>(w.size()));
  NVFP4_ASSIGN_OR_RETURN(p.alpha, layer_alpha(p.s_x, p.s_w, kDynamicSx, quantize_weight ? "s_w (w's dynamic scale)" : "weight_scale_2",
                                               "linear '" + l.name + "'"));
  QuantizeOptions qo;
  qo.pad = true;
  NVFP4_ASSIGN_OR_RETURN(p.a, quantize(x.data(), p.m, l.k, p.s_x, qo));
  p.x = std::move(x);
  if (quantize_weight) {
    NVFP4_ASSIGN_OR_RETURN(p.w, quantize(w.data(), l.n, l.k, p.s_w, qo));
  }
  in.set("quantization", quantize_weight
                             ? "comfy-cuda; s_x = f32(bf16(amax(x)/2688)) (dynamic), s_w = f32(bf16(amax(w)/2688))"
                             : "comfy-cuda activation, s_x = f32(bf16(amax(x)/2688)) (dynamic); weight from checkpoint arrays");
  in.set("s_x", hex32(f32_bits(p.s_x))).set("s_w", hex32(f32_bits(p.s_w))).set("alpha", hex32(f32_bits(p.alpha)));
  p.inputs = in;
  return p;
}

Result<LayerProblem> prepare_checkpoint_layer(const std::string& checkpoint, const std::string& layer, int64_t rows,
                                              uint64_t seed, const std::string& x_npy) {
  NVFP4_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::open(checkpoint));
  NVFP4_ASSIGN_OR_RETURN(CheckpointLayer cl, checkpoint_layer(f, layer));
  if (cl.format != "nvfp4")
    return unsupported("'" + checkpoint + "': layer '" + layer + "' has format '" + cl.format + "'; only nvfp4 layers are validated");
  // ComfyUI multiplies the activation by pre_quant_scale before quantizing it; that step is not
  // modelled here, so such a layer is refused rather than validated on the wrong inputs.
  if (cl.has_pre_quant_scale)
    return unsupported("'" + checkpoint + "': layer '" + layer + "' has a pre_quant_scale, which validate does not apply");
  LayerProblem p;
  Json in = Json::object();
  in.set("source", "checkpoint").set("checkpoint", checkpoint).set("layer", layer);
  std::vector<uint16_t> x;
  int64_t k = cl.k;
  if (x_npy.empty()) {
    NVFP4_TRY(check_gemm_problem(rows, cl.n, k, 1, layer));
    p.m = rows;
    x = synthetic_activation(rows, k, seed ^ name_hash(layer));
    in.set("activation", "synthetic: N(0,1)*N(0,1) * 2^U{-3..3} per channel, ~1% outlier channels x32").set("seed", static_cast<int64_t>(seed));
  } else {
    std::error_code ec;
    const std::string px = std::filesystem::is_directory(x_npy, ec) ? x_npy + "/" + layer + ".x.npy" : x_npy;
    NVFP4_ASSIGN_OR_RETURN(x, read_activation(px, &p.m, cl.k16 - 15, cl.k16));
    k = static_cast<int64_t>(x.size()) / p.m;
    in.set("x", px);
  }
  p.shape = LinearShape{layer, cl.n, k};
  NVFP4_ASSIGN_OR_RETURN(p.w, load_nvfp4_weight(f, cl, cl.n, k));
  p.s_w = cl.weight_scale_2;
  p.s_x = cl.has_input_scale ? cl.input_scale : global_scale_dynamic(x.data(), static_cast<int64_t>(x.size()));
  p.s_static = cl.has_input_scale ? cl.input_scale : 0.0f;
  NVFP4_ASSIGN_OR_RETURN(p.alpha, layer_alpha(p.s_x, p.s_w, cl.has_input_scale ? "input_scale" : kDynamicSx, "weight_scale_2",
                                               "'" + checkpoint + "': layer '" + st_printable(layer) + "'"));
  QuantizeOptions qo;
  qo.pad = true;
  NVFP4_ASSIGN_OR_RETURN(p.a, quantize(x.data(), p.m, k, p.s_x, qo));
  p.x = std::move(x);
  in.set("weight", layer + ".weight (" + std::string(to_string(cl.scale_dtype)) + " scales)");
  in.set("quantization", std::string("comfy-cuda activation, s_x = ") +
                             (cl.has_input_scale ? "the layer's input_scale (static)" : "f32(bf16(amax(x)/2688)) (dynamic)") +
                             "; weight, weight_scale, weight_scale_2 from the checkpoint");
  if (cl.has_bias) in.set("bias_note", "the layer's bias is not part of the compared GEMM (raw and alpha-before-bf16 outputs)");
  in.set("s_x", hex32(f32_bits(p.s_x))).set("s_w", hex32(f32_bits(p.s_w))).set("alpha", hex32(f32_bits(p.alpha)));
  p.inputs = in;
  return p;
}

Result<ValidateReport> run_validate(const ValidateOptions& opt_in) {
  ValidateOptions opt = opt_in;
  if (opt.rows <= 0) return invalid_argument("--rows must be positive");
  if (!opt.checkpoint.empty()) {
    if (opt.layer.empty()) return invalid_argument("--checkpoint needs --layer NAME");
    opt.linears = {LinearShape{opt.layer, 0, 0}};  // the real shape comes from the file
  }
  if (opt.linears.empty()) return invalid_argument("no linears to validate");
  // Reference, candidate and sensitivity outputs are held at once; refuse what cannot fit before
  // computing anything (a shape that comes from files is checked in the loop, once it is known).
  if (opt.inputs_dir.empty() && opt.checkpoint.empty())
    for (const LinearShape& l : opt.linears) NVFP4_TRY(check_gemm_problem(opt.rows, l.n, l.k, 3, "validate " + l.name));
  if (opt.candidates.empty()) {
    // A checkpoint layer with a static input_scale: the SM120 streaming producer derives the dynamic
    // scale only, so it is not a default candidate there (named with --candidate, it is refused).
    bool static_scale = false;
    if (!opt.checkpoint.empty()) {
      NVFP4_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::open(opt.checkpoint));
      NVFP4_ASSIGN_OR_RETURN(CheckpointLayer cl, checkpoint_layer(f, opt.layer));
      static_scale = cl.has_input_scale;
    }
    for (GpuGemmKernel k : available_gpu_kernels()) {
      opt.candidates.push_back(Backend{to_string(k), {}});
      if (static_scale && k != GpuGemmKernel::kSm90) continue;
      if (k == GpuGemmKernel::kSm120Native || k == GpuGemmKernel::kSm120Emulated || k == GpuGemmKernel::kSm90)
        opt.candidates.push_back(Backend{k == GpuGemmKernel::kSm90           ? "sm90-stream"
                                         : k == GpuGemmKernel::kSm120Native ? "sm120-stream-native"
                                                                            : "sm120-stream-emulated",
                                         {}});
      // The pipelined kernel's streaming producer (validated on the H200:
      // benchmarks/results/2026-12-01-h200-sm120p-stream/).
      if (k == GpuGemmKernel::kSm120pNative || k == GpuGemmKernel::kSm120pEmulated)
        opt.candidates.push_back(
            Backend{k == GpuGemmKernel::kSm120pNative ? "sm120p-stream-native" : "sm120p-stream-emulated", {}});
    }
    if (opt.candidates.empty()) opt.candidates.push_back(Backend{"cpu-oracle", {}});
  }
  if (!opt.reference_given) {
    bool cand_is_oracle = false;
    for (const auto& c : opt.candidates) cand_is_oracle = cand_is_oracle || c.name == "cpu-oracle";
    opt.reference = Backend{cand_is_oracle ? "cpu-reference" : "cpu-oracle", {}};
  }
  NVFP4_ASSIGN_OR_RETURN(const ContractFlag flag, parse_contract_flag(opt.contract));
  std::vector<Backend> sides = opt.candidates;
  sides.push_back(opt.reference);
  // Contracts a GPU kernel cannot run (S above the k64 chunk count) are bad input, on any machine.
  // A checkpoint layer's K is not known yet (its placeholder is 0): checked per linear, as it is read.
  for (const Backend& b : sides) {
    auto kernel = side_kernel(b);
    if (!kernel.is_ok() || !opt.checkpoint.empty()) continue;
    const bool fixed = b.contract_given || (flag.set && !flag.from_cublaslt);
    if (!fixed) continue;
    const ReductionContract& c = b.contract_given ? b.contract : flag.fixed;
    for (const LinearShape& l : opt.linears) {
      Status st = check_gpu_contract(kernel.value(), c, l.k);
      if (!st.is_ok()) return Status(st.code(), b.name + " on " + l.name + ": " + st.message());
    }
  }
  // Every GPU side must be runnable here before anything is computed.
  if (flag.from_cublaslt) {
    NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
    NVFP4_TRY(cublaslt_nvfp4_supported(env));
  }
  for (const Backend& b : sides) {
    if (b.name == "cpu-oracle" || b.name == "cpu-reference") continue;
    if (b.name == "cublaslt") {
      NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
      NVFP4_TRY(cublaslt_nvfp4_supported(env));
      continue;
    }
    NVFP4_ASSIGN_OR_RETURN(DeviceInfo dev, cuda_device());
    NVFP4_TRY(check_backend_device(b.name, dev));
  }
  NVFP4_TRY(make_dirs(opt.out_dir));
  // The reports are all or none: each is written to an unnamed file as soon as it is made, and the
  // names are given only once every linear has run (commit_all), so a linear that fails leaves no
  // earlier linear's report behind to be read as this run's result. Differing bits are a result,
  // not a failure: that run names its reports. The summary's file is made first so that an output
  // directory that cannot be written to stops the run before anything is computed.
  NVFP4_ASSIGN_OR_RETURN(AtomicFile summary_file, AtomicFile::create(opt.out_dir + "/summary.json"));
  std::vector<AtomicFile> staged;
  auto stage = [&](AtomicFile f, const std::string& text) -> Status {
    NVFP4_TRY(f.write(text.data(), text.size()));
    staged.push_back(std::move(f));
    return Status::ok();
  };
  auto say = [&](const std::string& s) { if (opt.progress) opt.progress(s); };

  ValidateReport rep;
  std::string cc;
  const std::string device = device_string(opt.candidates, opt.reference, &cc);
  Json results = Json::array(), findings = Json::array(), artifacts = Json::array();
  bool all_raw = true, all_fused = true;
  std::string mismatched;
  const auto t_all = Clock::now();

  for (size_t li = 0; li < opt.linears.size(); ++li) {
    const std::string tag = "[" + std::to_string(li + 1) + "/" + std::to_string(opt.linears.size()) + "] " + opt.linears[li].name;
    Problem p;
    auto t0 = Clock::now();
    if (opt.checkpoint.empty()) {
      NVFP4_ASSIGN_OR_RETURN(static_cast<LayerProblem&>(p), prepare_layer(opt.linears[li], opt.rows, opt.seed, opt.inputs_dir));
    } else {
      NVFP4_ASSIGN_OR_RETURN(static_cast<LayerProblem&>(p),
                             prepare_checkpoint_layer(opt.checkpoint, opt.layer, opt.rows, opt.seed, opt.inputs_dir));
    }
    const LinearShape& l = p.shape;
    if (!opt.inputs_dir.empty() || !opt.checkpoint.empty())
      NVFP4_TRY(check_gemm_problem(p.m, l.n, l.k, 3, "validate " + l.name));
    p.sample = sample_coords(p.m, l.n, opt.sample, opt.seed ^ (0x1000 + li));
    // This linear's --contract, and each side with it applied.
    Json plan_json;
    ReductionContract lin_contract = flag.fixed;
    if (flag.from_cublaslt) {
      NVFP4_ASSIGN_OR_RETURN(auto plans, cublaslt_probe(p.m, l.n, l.k, CublasLtPlanRequest{}));
      plan_json = plans.front().to_json();
      auto mapped = cublaslt_plan_contract(plans.front(), flag.grain, flag.rule);
      if (!mapped.is_ok()) return Status(mapped.status().code(), l.name + ": " + mapped.status().message());
      lin_contract = mapped.value();
      say(tag + ": cuBLASLt's plan maps to " + lin_contract.to_string());
    }
    auto with_flag = [&](Backend b) -> Result<Backend> {
      if (flag.set && takes_contract_flag(b)) b.contract = lin_contract;
      if (auto k = side_kernel(b); k.is_ok()) {
        Status st = check_gpu_contract(k.value(), b.contract, l.k);
        if (!st.is_ok()) return Status(st.code(), b.name + " on " + l.name + ": " + st.message());
      }
      return b;
    };
    NVFP4_ASSIGN_OR_RETURN(const Backend reference, with_flag(opt.reference));
    say(tag + ": inputs and quantization " + std::to_string(seconds_since(t0)).substr(0, 5) + " s; reference " +
        reference.describe() + " ...");

    const bool ref_is_oracle = reference.name == "cpu-oracle";
    NVFP4_ASSIGN_OR_RETURN(SideOutput ref, run_side(reference, p, opt, ref_is_oracle));
    say(tag + ": reference done in " + std::to_string(ref.seconds).substr(0, 6) + " s");

    for (const Backend& cb_given : opt.candidates) {
      NVFP4_ASSIGN_OR_RETURN(const Backend cb, with_flag(cb_given));
      const bool cand_is_oracle = cb.name == "cpu-oracle";
      NVFP4_ASSIGN_OR_RETURN(SideOutput cand, run_side(cb, p, opt, cand_is_oracle && !ref_is_oracle));
      say(tag + ": candidate " + cb.describe() + " done in " + std::to_string(cand.seconds).substr(0, 6) + " s");
      LinearReport lr;
      lr.linear = l.name;
      lr.m = p.m;
      lr.n = l.n;
      lr.k = l.k;
      lr.cmp = compare(cand, ref, p);
      // Sensitivity from whichever side ran the full oracle with it; else on the sample.
      // (Only a side that ran sequential K holds the "sequential" half of that comparison.)
      const SideOutput* full = !ref.sens_raw.empty() && reference.contract.is_sequential() ? &ref
                               : !cand.sens_raw.empty() && cb.contract.is_sequential() ? &cand
                                                                                        : nullptr;
      if (full) {
        lr.sensitivity = sensitivity_json(full->raw, full->out, full->sens_raw, full->sens_out, opt.sensitivity, false);
      } else {
        GemmSpec spec;
        spec.alpha = p.alpha;
        spec.contracts = {ReductionContract::sequential(), opt.sensitivity};
        NVFP4_ASSIGN_OR_RETURN(auto r, gemm_oracle_at(p.a, p.w, spec, p.sample));
        lr.sensitivity = sensitivity_json(r[0].raw, r[0].out, r[1].raw, r[1].out, opt.sensitivity, true);
      }
      Json j = Json::object();
      j.set("linear", l.name);
      j.set("mnk", Json::array().push(p.m).push(l.n).push(l.k));
      if (lr.cmp.raw_available) {
        j.set("raw_blockscaled_equal", lr.cmp.raw_equal);
        j.set("raw_max_abs", lr.cmp.raw_max_abs);
        j.set("raw_mean_abs", lr.cmp.raw_mean_abs);
      } else {  // no fp32 output on one side: the raw fields are null, not a false pass or fail
        j.set("raw_blockscaled_equal", Json());
        j.set("raw_max_abs", Json());
        j.set("raw_mean_abs", Json());
        j.set("raw_note", "a side produced no fp32 accumulators (cuBLASLt offered no fp32-output plan)");
      }
      j.set("fused_alpha_equal", lr.cmp.fused_equal);
      j.set("fused_alpha_max_abs", lr.cmp.fused_max_abs);
      j.set("fused_alpha_mean_abs", lr.cmp.fused_mean_abs);
      j.set("candidate", cb.describe());
      j.set("reference", reference.describe());
      if (flag.from_cublaslt) j.set("cublaslt_plan", plan_json);
      j.set("outputs_compared", lr.cmp.compared);
      j.set("outputs_total", p.m * l.n);
      j.set("raw_differing", lr.cmp.raw_diff_count);
      j.set("fused_alpha_differing", lr.cmp.fused_diff_count);
      j.set("first_differences", lr.cmp.first_diffs);
      j.set("fused_alpha_ulp_histogram", lr.cmp.ulp_histogram);
      j.set("contract_sensitivity", lr.sensitivity);
      j.set("inputs", p.inputs);
      j.set("epilogue", "alpha_before_bf16: bf16_rne(f32_rn(alpha * acc))");
      j.set("device", device);
      Json timing = Json::object();
      timing.set("reference_s", ref.seconds).set("candidate_s", cand.seconds);
      if (cand.kernel_ms >= 0) timing.set("candidate_kernel_ms", cand.kernel_ms);
      j.set("timing", timing);
      lr.json = j;
      // One file per candidate; a split-K contract joins the name, so one kernel under two contracts keeps both.
      const std::string file = opt.out_dir + "/" + l.name +
                               (opt.candidates.size() > 1 ? "-" + (cb.contract.is_sequential() ? cb.name : cb.describe()) : "") +
                               ".json";
      NVFP4_ASSIGN_OR_RETURN(AtomicFile report, AtomicFile::create(file));
      NVFP4_TRY(stage(std::move(report), j.dump() + "\n"));
      artifacts.push(file);
      results.push(j);
      all_raw = all_raw && (lr.cmp.raw_equal || !lr.cmp.raw_available);
      all_fused = all_fused && lr.cmp.fused_equal;
      if ((lr.cmp.raw_available && !lr.cmp.raw_equal) || !lr.cmp.fused_equal) mismatched += (mismatched.empty() ? "" : ", ") + l.name + " (" + cb.name + ")";
      rep.linears.push_back(std::move(lr));
    }
  }

  // Findings, in the report's voice: what matched, what did not, and what the contract probe says.
  std::string names;
  for (const auto& l : opt.linears) names += (names.empty() ? "" : ", ") + l.name;
  std::string cands;
  for (const auto& c : opt.candidates) cands += (cands.empty() ? "" : ", ") + c.describe();
  findings.push(std::string("Raw block-scaled products ") + (all_raw ? "are bit-exact" : "differ") + " between " + cands +
                " and " + opt.reference.describe() + (flag.set ? " under --contract " + opt.contract : "") + " for " + names + ".");
  findings.push(std::string("The alpha-before-bf16 epilogue ") + (all_fused ? "is bit-exact" : "differs") + " for " + names + ".");
  // One sensitivity line per linear (every candidate of a linear shares the reference's numbers).
  for (size_t i = 0; i < rep.linears.size(); ++i) {
    const LinearReport& lr = rep.linears[i];
    if (i > 0 && rep.linears[i - 1].linear == lr.linear) continue;
    const Json& s = lr.sensitivity;
    findings.push(lr.linear + ": " + opt.sensitivity.to_string() + " differs from sequential K in " +
                  std::to_string(s["raw_differing"].as_int()) + " of " + std::to_string(s["outputs_compared"].as_int()) +
                  " raw outputs (max abs " + std::to_string(s["raw_max_abs"].as_number()) + ") and " +
                  std::to_string(s["fused_alpha_differing"].as_int()) + " bf16 outputs (max abs " +
                  std::to_string(s["fused_alpha_max_abs"].as_number()) + ")" + (s["sampled"].as_bool() ? " on a sample" : "") + ".");
  }
  rep.pass = all_raw && all_fused;
  Json sum = Json::object();
  sum.set("device", device);
  sum.set("compute_capability", cc);
  sum.set("rows", opt.rows);
  sum.set("kernel", cands);
  sum.set("reference", opt.reference.describe());
  if (flag.set) sum.set("contract", opt.contract);
  sum.set("results", results);
  sum.set("findings", findings);
  sum.set("status", rep.pass ? "PASS: every candidate output is bit-identical to the reference (raw and alpha-before-bf16)."
                             : "FAIL: bits differ for " + mismatched + "; see first_differences and contract_sensitivity.");
  sum.set("source_artifacts", artifacts);
  sum.set("seed", static_cast<int64_t>(opt.seed));
  sum.set("total_seconds", seconds_since(t_all));
  sum.set("tool", std::string("nvfp4 ") + NVFP4_VERSION);
  rep.summary = sum;
  NVFP4_TRY(stage(std::move(summary_file), sum.dump() + "\n"));  // named last
  NVFP4_TRY(commit_all(staged));
  return rep;
}

}  // namespace nvfp4
