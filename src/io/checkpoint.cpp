// ComfyUI NVFP4 checkpoints: layer discovery and checks, weights as Tensors, and conversion of bf16
// Linear weights into the layout ComfyUI stores (docs/numerics.md §7).
#include "nvfp4/checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
// GCC 12 at -O3 reports a std::function member inside libstdc++'s regex compiler as maybe used
// uninitialized: a false positive in the header, not in this file's code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <set>

#include "nvfp4/quant.hpp"

namespace nvfp4 {

namespace {

const char* const kLayerSuffixes[] = {"weight", "weight_scale", "weight_scale_2", "input_scale",
                                      "pre_quant_scale", "comfy_quant", "bias"};

// Tensor and layer names, and strings like a format, come from the file: every one goes through
// st_printable so a message stays one line. A layer the file stores wrongly is bad input, like any
// other malformed file.
Status bad(const SafetensorsFile& f, const std::string& tensor, const std::string& what) {
  return invalid_argument("'" + f.path() + "': tensor '" + st_printable(tensor) + "': " + what);
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

bool is_float(StDtype d) { return d == StDtype::kF32 || d == StDtype::kF16 || d == StDtype::kBF16; }

// A scale as it is (std::to_string prints 1e-30 as 0.000000 and -1e-30 as -0.000000).
std::string scale_str(float v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", static_cast<double>(v));
  return b;
}

}  // namespace

std::string weight_global_scale_problem(float v) {
  if (!std::isfinite(v) || v < 0) return "global scale " + scale_str(v) + " is not finite and >= 0";
  // -0 compares equal to 0, which is taken, but it is no zero scale: its sign reaches alpha and
  // through it the sign of every output, which is why nvfp4 quantize --global-scale refuses -0 too.
  if (std::signbit(v)) return "global scale must be >= 0 and not -0 (its sign would reach alpha and the sign of every output), got -0";
  return {};
}

namespace {

// One fp32 scalar stored as [] or [1].
Result<float> f32_scalar(const SafetensorsFile& f, const std::string& name) {
  const StTensor* t = f.find(name);
  if (t->dtype != StDtype::kF32) return bad(f, name, std::string("dtype ") + to_string(t->dtype) + ", expected F32");
  if (!(t->shape.empty() || (t->shape.size() == 1 && t->shape[0] == 1)))
    return bad(f, name, "shape " + shape_str(t->shape) + ", expected [] or [1]");
  float v;
  std::memcpy(&v, f.data(*t), 4);
  return v;
}

Result<Json> comfy_quant_json(const SafetensorsFile& f, const std::string& name) {
  const StTensor* t = f.find(name);
  if (t->dtype != StDtype::kU8 || t->shape.size() != 1)
    return bad(f, name, std::string("dtype ") + to_string(t->dtype) + " " + shape_str(t->shape) +
                            ", expected a 1-D U8 tensor of UTF-8 JSON");
  auto j = Json::parse(std::string_view(reinterpret_cast<const char*>(f.data(*t)), t->nbytes()));
  if (!j.is_ok()) return bad(f, name, "not JSON: " + j.status().message());
  if (j->type() != Json::Type::kObject || (*j)["format"].type() != Json::Type::kString)
    return bad(f, name, "expected a JSON object with a string \"format\"");
  return j.value();
}

Status check_nvfp4(const SafetensorsFile& f, CheckpointLayer& l) {
  const std::string& L = l.name;
  const StTensor* w = f.find(L + ".weight");
  if (!w) return bad(f, L + ".weight", "missing (NVFP4 layer '" + st_printable(L) + "' needs its packed weight)");
  if (w->dtype != StDtype::kU8 || w->shape.size() != 2 || w->shape[0] <= 0 || w->shape[1] <= 0 ||
      w->shape[0] % 16 != 0 || (2 * w->shape[1]) % 16 != 0)
    return bad(f, w->name, std::string("dtype ") + to_string(w->dtype) + " " + shape_str(w->shape) +
                               ", expected U8 [N16, K16/2] with N16 and K16 multiples of 16");
  l.n16 = w->shape[0];
  l.k16 = 2 * w->shape[1];
  l.n = l.n16;
  l.k = l.k16;

  const std::string sn = L + ".weight_scale";
  const StTensor* s = f.find(sn);
  if (!s) return bad(f, sn, "missing (NVFP4 layer '" + st_printable(L) + "' needs its block scales)");
  const std::vector<int64_t> want = {roundup(l.n16, 128), roundup(l.k16 / 16, 4)};
  if ((s->dtype != StDtype::kF8E4M3 && s->dtype != StDtype::kU8) || s->shape != want)
    return bad(f, sn, std::string("dtype ") + to_string(s->dtype) + " " + shape_str(s->shape) + ", expected F8_E4M3 (or U8) " +
                          shape_str(want) + " for a weight " + shape_str(w->shape));
  l.scale_dtype = s->dtype;

  const std::string s2n = L + ".weight_scale_2";
  if (!f.find(s2n)) return bad(f, s2n, "missing (NVFP4 layer '" + st_printable(L) + "' needs its fp32 global scale)");
  NVFP4_ASSIGN_OR_RETURN(l.weight_scale_2, f32_scalar(f, s2n));
  if (std::string why = weight_global_scale_problem(l.weight_scale_2); !why.empty()) return bad(f, s2n, why);

  if (f.find(L + ".input_scale")) {
    NVFP4_ASSIGN_OR_RETURN(l.input_scale, f32_scalar(f, L + ".input_scale"));
    if (!std::isfinite(l.input_scale) || !(l.input_scale > 0))
      return bad(f, L + ".input_scale", "static activation scale " + scale_str(l.input_scale) + " is not finite and > 0");
    // Two finite scales can overflow their product, and every GEMM would apply that alpha: all
    // outputs Inf or NaN, which validate would even report as equal. Python's linear refuses the
    // same layer in these words.
    if (Result<float> a = finite_alpha(l.input_scale, l.weight_scale_2, "input_scale", "weight_scale_2"); !a.is_ok())
      return invalid_argument("'" + f.path() + "': layer '" + st_printable(L) + "': " + a.status().message());
    l.has_input_scale = true;
  }
  // A 1-D float vector whose length rounds up to the padded dimension: it gives the logical size.
  auto vec = [&](const char* suffix, int64_t padded, int64_t* logical) -> Status {
    const std::string name = L + "." + suffix;
    const StTensor* t = f.find(name);
    if (!t) return Status::ok();
    if (!is_float(t->dtype) || t->shape.size() != 1 || t->shape[0] <= 0 || roundup(t->shape[0], 16) != padded)
      return bad(f, name, std::string("dtype ") + to_string(t->dtype) + " " + shape_str(t->shape) +
                              ", expected a float vector of length L with roundup(L, 16) = " + std::to_string(padded));
    *logical = t->shape[0];
    return Status::ok();
  };
  NVFP4_TRY(vec("bias", l.n16, &l.n));
  NVFP4_TRY(vec("pre_quant_scale", l.k16, &l.k));
  l.has_bias = f.find(L + ".bias") != nullptr;
  l.has_pre_quant_scale = f.find(L + ".pre_quant_scale") != nullptr;
  return Status::ok();
}

Result<std::map<std::string, Json>> metadata_layers(const SafetensorsFile& f) {
  std::map<std::string, Json> out;
  const std::string* qm = f.metadata("_quantization_metadata");
  if (!qm) return out;
  auto j = Json::parse(*qm);
  if (!j.is_ok()) return invalid_argument("'" + f.path() + "': __metadata__ _quantization_metadata is not JSON: " + j.status().message());
  const Json& layers = (*j)["layers"];
  if (j->type() != Json::Type::kObject || layers.type() != Json::Type::kObject)
    return invalid_argument("'" + f.path() + "': __metadata__ _quantization_metadata has no \"layers\" object");
  for (const auto& [name, conf] : layers.members()) {
    if (conf.type() != Json::Type::kObject || conf["format"].type() != Json::Type::kString)
      return invalid_argument("'" + f.path() + "': _quantization_metadata layer '" + st_printable(name) +
                              "' has no string \"format\"");
    out.emplace(name, conf);
  }
  return out;
}

Result<CheckpointLayer> build_layer(const SafetensorsFile& f, const std::string& name, const Json* listed) {
  CheckpointLayer l;
  l.name = name;
  for (const char* s : kLayerSuffixes)
    if (const StTensor* t = f.find(name + "." + s)) {
      l.tensors.push_back(t->name);
      l.bytes += t->nbytes();
    }
  std::sort(l.tensors.begin(), l.tensors.end());
  if (f.find(name + ".comfy_quant")) {
    NVFP4_ASSIGN_OR_RETURN(l.config, comfy_quant_json(f, name + ".comfy_quant"));
    l.format = l.config["format"].as_string();
    if (listed && (*listed)["format"].as_string() != l.format)
      return bad(f, name + ".comfy_quant", "format '" + st_printable(l.format) +
                                               "' disagrees with _quantization_metadata's '" +
                                               st_printable((*listed)["format"].as_string()) + "'");
  } else {
    l.config = *listed;
    l.format = (*listed)["format"].as_string();
    if (!f.find(name + ".weight"))
      return bad(f, name + ".weight", "missing (layer '" + st_printable(name) + "' is listed in _quantization_metadata)");
  }
  if (l.format == "nvfp4") NVFP4_TRY(check_nvfp4(f, l));
  return l;
}

}  // namespace

Result<std::vector<CheckpointLayer>> checkpoint_layers(const SafetensorsFile& f) {
  NVFP4_ASSIGN_OR_RETURN(auto listed, metadata_layers(f));
  std::set<std::string> names;
  for (const auto& [n, _] : listed) names.insert(n);
  static const std::string kMarker = ".comfy_quant";
  for (const StTensor& t : f.tensors())
    if (t.name.size() > kMarker.size() && t.name.compare(t.name.size() - kMarker.size(), kMarker.size(), kMarker) == 0)
      names.insert(t.name.substr(0, t.name.size() - kMarker.size()));
  std::vector<CheckpointLayer> out;
  for (const std::string& n : names) {
    auto it = listed.find(n);
    NVFP4_ASSIGN_OR_RETURN(CheckpointLayer l, build_layer(f, n, it == listed.end() ? nullptr : &it->second));
    out.push_back(std::move(l));
  }
  return out;
}

Result<CheckpointLayer> checkpoint_layer(const SafetensorsFile& f, const std::string& name) {
  NVFP4_ASSIGN_OR_RETURN(auto listed, metadata_layers(f));
  auto it = listed.find(name);
  if (it == listed.end() && !f.find(name + ".comfy_quant")) {
    if (f.find(name + ".weight"))
      return invalid_argument("'" + f.path() + "': layer '" + st_printable(name) + "' is not quantized (no '" +
                              st_printable(name) + ".comfy_quant' and not in _quantization_metadata)");
    return invalid_argument("'" + f.path() + "': no layer '" + st_printable(name) + "' (no tensor '" + st_printable(name) +
                            ".weight')");
  }
  return build_layer(f, name, it == listed.end() ? nullptr : &it->second);
}

Result<Tensor> load_nvfp4_weight(const SafetensorsFile& f, const CheckpointLayer& l, int64_t n, int64_t k) {
  if (l.format != "nvfp4")
    return unsupported("'" + f.path() + "': layer '" + st_printable(l.name) + "' has format '" + st_printable(l.format) +
                       "', not nvfp4");
  if (n <= 0) n = l.n;
  if (k <= 0) k = l.k;
  if (roundup(n, 16) != l.n16 || roundup(k, 16) != l.k16)
    return invalid_argument("'" + f.path() + "': layer '" + st_printable(l.name) + "' holds a [" + std::to_string(l.n16) + ", " +
                            std::to_string(l.k16) + "] padded weight; shape [" + std::to_string(n) + ", " +
                            std::to_string(k) + "] does not pad to it");
  const StTensor* w = f.find(l.name + ".weight");
  const StTensor* s = f.find(l.name + ".weight_scale");
  std::vector<uint8_t> data(f.data(*w), f.data(*w) + w->nbytes());
  std::vector<uint8_t> scales(f.data(*s), f.data(*s) + s->nbytes());
  return Tensor::make(n, k, NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4, l.weight_scale_2, std::move(data),
                      std::move(scales));
}

const std::string& nvfp4_comfy_quant_json() {
  // What Python's json.dumps({"format": "nvfp4"}) writes, the spelling ComfyUI's tools use.
  static const std::string kJson = "{\"format\": \"nvfp4\"}";
  return kJson;
}

Result<Nvfp4Weight> quantize_linear_weight(const uint16_t* w, int64_t n, int64_t k, int threads) {
  QuantizeOptions qo;
  qo.recipe = Recipe::kComfyCuda;
  qo.nibbles = NibbleOrder::kHiFirst;
  qo.scale_layout = ScaleLayout::kSwizzled128x4;
  qo.pad = true;
  qo.threads = threads;
  const float s_w = global_scale_dynamic(w, n * k);
  Nvfp4Weight out;
  NVFP4_ASSIGN_OR_RETURN(out.t, quantize(w, n, k, s_w, qo));
  const std::string& j = nvfp4_comfy_quant_json();
  out.comfy_quant.assign(j.begin(), j.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
namespace {

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0x1F) return f32_from_bits(sign | 0x7F800000u | (m << 13));
  if (e != 0) return f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
  const float mag = static_cast<float>(m) * 0x1p-24f;  // subnormal: exact
  return sign ? -mag : mag;
}

// The weight as bf16 patterns: read in place from the mapping when it is bf16 at an aligned offset
// (the usual case: no copy of the largest tensor), else converted into `w`.
const uint16_t* weight_bf16(const SafetensorsFile& f, const StTensor& t, std::vector<uint16_t>& w) {
  const int64_t count = t.numel();
  const uint8_t* p = f.data(t);
  if (t.dtype == StDtype::kBF16 && reinterpret_cast<uintptr_t>(p) % alignof(uint16_t) == 0)
    return reinterpret_cast<const uint16_t*>(p);
  w.resize(static_cast<size_t>(count));
  if (t.dtype == StDtype::kBF16) {
    std::memcpy(w.data(), p, static_cast<size_t>(count) * 2);
  } else if (t.dtype == StDtype::kF16) {
    for (int64_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      w[i] = bf16_rn(f16_to_f32(h));
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      w[i] = bf16_rn(v);
    }
  }
  return w.data();
}

}  // namespace

Json QuantizeCheckpointResult::to_json() const {
  Json j = Json::object();
  j.set("quantized_layers", quantized).set("copied_tensors", copied);
  j.set("bytes_in", bytes_in).set("bytes_out", bytes_out);
  Json wider = Json::array();
  for (const auto& s : from_wider) wider.push(s);
  j.set("rounded_to_bf16_first", wider);
  return j;
}

Result<QuantizeCheckpointResult> quantize_checkpoint(const std::string& in, const std::string& out,
                                                     const QuantizeCheckpointOptions& opt) {
  NVFP4_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::open(in));
  NVFP4_ASSIGN_OR_RETURN(auto existing, checkpoint_layers(f));
  std::set<std::string> quantized_already;
  for (const auto& l : existing) quantized_already.insert(l.name);
  std::optional<std::regex> re;
  if (!opt.layers_regex.empty()) {
    try {
      re.emplace(opt.layers_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return invalid_argument("--layers: invalid regular expression '" + opt.layers_regex + "': " + e.what());
    }
  }

  struct Pending {
    std::string layer;
    const StTensor* w;
    std::optional<Tensor> q;  // between the weight and its scales being written
  };
  std::vector<std::shared_ptr<Pending>> todo;
  for (const StTensor& t : f.tensors()) {
    static const std::string kSuffix = ".weight";
    if (t.name.size() <= kSuffix.size() || t.name.compare(t.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      continue;
    const std::string L = t.name.substr(0, t.name.size() - kSuffix.size());
    if (t.shape.size() != 2 || !is_float(t.dtype) || t.shape[0] == 0 || t.shape[1] == 0 || quantized_already.count(L)) continue;
    if (re && !std::regex_search(L, *re)) continue;
    for (const char* s : {"weight_scale", "weight_scale_2", "comfy_quant"})
      if (f.find(L + "." + s))
        return invalid_argument("'" + in + "': cannot quantize layer '" + st_printable(L) + "': the file already has '" +
                                st_printable(L) + "." + s + "'");
    todo.push_back(std::make_shared<Pending>(Pending{L, &t, std::nullopt}));
  }
  if (opt.layers_regex.size() && todo.empty())
    return invalid_argument("'" + in + "': --layers '" + opt.layers_regex + "' matches no 2-D bf16/f16/f32 *.weight tensor");

  QuantizeCheckpointResult res;
  res.bytes_in = f.file_size();
  std::map<const StTensor*, std::shared_ptr<Pending>> by_weight;
  for (auto& p : todo) by_weight[p->w] = p;
  const std::string& marker = nvfp4_comfy_quant_json();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int64_t layers_done = 0;
  const int64_t layers_total = static_cast<int64_t>(todo.size());

  std::vector<StEntry> entries;
  for (const StTensor& t : f.tensors()) {
    auto it = by_weight.find(&t);
    if (it == by_weight.end()) {
      entries.push_back(StEntry{t.name, t.dtype, t.shape, f.data(t), {}});
      ++res.copied;
      continue;
    }
    std::shared_ptr<Pending> p = it->second;
    const int64_t n = t.shape[0], k = t.shape[1];
    const Geometry g = Geometry::of(n, k);
    if (t.dtype != StDtype::kBF16) res.from_wider.push_back(p->layer);
    entries.push_back(StEntry{p->layer + ".weight", StDtype::kU8, {g.rows16, g.cols16 / 2}, nullptr,
                              [&, p, n, k]() -> Result<std::vector<uint8_t>> {
                                const auto ts = elapsed();
                                std::vector<uint16_t> converted;
                                const uint16_t* w = weight_bf16(f, *p->w, converted);
                                auto q = quantize_linear_weight(w, n, k, opt.threads);
                                if (!q.is_ok())
                                  return invalid_argument("'" + in + "': tensor '" + st_printable(p->w->name) +
                                                          "': " + q.status().message());
                                p->q = std::move(q->t);
                                ++layers_done;
                                if (opt.progress) {
                                  char line[160];
                                  std::snprintf(line, sizeof line, "[%lld/%lld] [%lld, %lld] %s -> nvfp4 (%.2f s): ",
                                                static_cast<long long>(layers_done), static_cast<long long>(layers_total),
                                                static_cast<long long>(n), static_cast<long long>(k), to_string(p->w->dtype),
                                                elapsed() - ts);
                                  opt.progress(line + st_printable(p->layer));
                                }
                                return std::move(p->q->data);
                              }});
    entries.push_back(StEntry{p->layer + ".weight_scale", StDtype::kF8E4M3, {g.sf_rows_pad, g.sf_cols_pad}, nullptr,
                              [p]() -> Result<std::vector<uint8_t>> { return std::move(p->q->scales); }});
    entries.push_back(StEntry{p->layer + ".weight_scale_2", StDtype::kF32, {}, nullptr, [p]() -> Result<std::vector<uint8_t>> {
                                std::vector<uint8_t> b(4);
                                std::memcpy(b.data(), &p->q->global_scale, 4);
                                p->q.reset();  // the layer is complete: free it
                                return b;
                              }});
    entries.push_back(StEntry{p->layer + ".comfy_quant", StDtype::kU8, {static_cast<int64_t>(marker.size())},
                              reinterpret_cast<const uint8_t*>(marker.data()), {}});
  }

  // Metadata: copied, with the new layers added to _quantization_metadata.
  std::vector<std::pair<std::string, std::string>> meta = f.header().metadata;
  if (!todo.empty()) {
    Json qm = Json::object();
    qm.set("format_version", "1.0");
    if (const std::string* old = f.metadata("_quantization_metadata")) qm = Json::parse(*old).value();  // checked above
    Json layers = qm["layers"].type() == Json::Type::kObject ? qm["layers"] : Json::object();
    for (const auto& p : todo) layers.set(p->layer, Json::object().set("format", "nvfp4"));
    qm.set("layers", layers);
    bool replaced = false;
    for (auto& [k, v] : meta)
      if (k == "_quantization_metadata") { v = qm.dump(0); replaced = true; }
    if (!replaced) meta.emplace_back("_quantization_metadata", qm.dump(0));
  }
  double last = -1;
  auto bytes_progress = [&](uint64_t done, uint64_t total) {
    res.bytes_out = done;
    if (!opt.progress || (elapsed() - last < 2.0 && done != total)) return;
    last = elapsed();
    char line[128];
    std::snprintf(line, sizeof line, "written %.2f of %.2f GB (%d%%), %.1f s", static_cast<double>(done) / 1e9,
                  static_cast<double>(total) / 1e9, static_cast<int>(total ? 100 * done / total : 100), elapsed());
    opt.progress(line);
  };
  NVFP4_TRY(write_safetensors(out, entries, meta, bytes_progress));
  res.quantized = layers_total;
  std::error_code ec;
  res.bytes_out = std::filesystem::file_size(out, ec);
  return res;
}

}  // namespace nvfp4
