// nvfp4 inspect / nvfp4 quantize-checkpoint: ComfyUI NVFP4 checkpoints (docs/numerics.md §7)
#include <cstdio>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/checkpoint.hpp"

namespace nvfp4::cli {

namespace {
const char* kInspectHelp =
    "usage: nvfp4 inspect MODEL.safetensors [--json] [--tensors]\n"
    "Checks the whole file (header, offsets, every quantized layer) and lists each quantized layer:\n"
    "format, logical and padded shape, scale dtype, weight_scale_2 and input_scale (value and bits), bytes.\n"
    "  --json      one JSON document instead of the table\n"
    "  --tensors   also list every tensor (name, dtype, shape, bytes)\n";

const char* kQuantizeCkptHelp =
    "usage: nvfp4 quantize-checkpoint IN.safetensors OUT.safetensors [--layers REGEX] [--threads N] [--quiet] [--json]\n"
    "Turns each 2-D BF16 (F16/F32: rounded to bf16 first) tensor <L>.weight into ComfyUI's NVFP4 layer:\n"
    "<L>.weight U8 [N16, K16/2] hi_first, <L>.weight_scale F8_E4M3 swizzled 128x4, <L>.weight_scale_2 F32\n"
    "s_w = f32(bf16(amax/2688)), <L>.comfy_quant {\"format\": \"nvfp4\"}; the comfy-cuda recipe, so the bytes\n"
    "equal comfy-kitchen's. Everything else is copied unchanged; _quantization_metadata lists the new layers.\n"
    "  --layers REGEX   only layers <L> in which REGEX (ECMAScript) matches; default every candidate\n"
    "  --threads N      quantizer threads, 1..1024 (default, or 0: all cores)\n"
    "  --quiet          no progress on stderr\n"
    "  --json           print the summary as JSON\n";

std::string hex32(float v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", f32_bits(v));
  return b;
}

Json shape_json(const std::vector<int64_t>& s) {
  Json j = Json::array();
  for (int64_t d : s) j.push(d);
  return j;
}
}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"json", "tensors", "help"}, {}, 1);
  if (!args.is_ok()) return fail("inspect", args.status());
  if (args->has("help")) { std::fputs(kInspectHelp, stdout); return 0; }
  if (args->positional().size() != 1) return fail("inspect", invalid_argument("expects one MODEL.safetensors (see --help)"));
  auto path = args->positional_path(0, "MODEL.safetensors");
  if (!path.is_ok()) return fail("inspect", path.status());
  auto f = SafetensorsFile::open(path.value());
  if (!f.is_ok()) return fail("inspect", f.status());
  auto layers = checkpoint_layers(f.value());
  if (!layers.is_ok()) return fail("inspect", layers.status());

  uint64_t quant_bytes = 0;
  Json jl = Json::array();
  for (const auto& l : layers.value()) {
    quant_bytes += l.bytes;
    Json j = Json::object();
    j.set("name", l.name).set("format", l.format).set("config", l.config);
    if (l.format == "nvfp4") {
      j.set("shape", Json::array().push(l.n).push(l.k)).set("padded_shape", Json::array().push(l.n16).push(l.k16));
      j.set("scale_dtype", to_string(l.scale_dtype));
      j.set("weight_scale_2", static_cast<double>(l.weight_scale_2)).set("weight_scale_2_bits", hex32(l.weight_scale_2));
      if (l.has_input_scale) j.set("input_scale", static_cast<double>(l.input_scale)).set("input_scale_bits", hex32(l.input_scale));
      else j.set("input_scale", Json());
      j.set("bias", l.has_bias).set("pre_quant_scale", l.has_pre_quant_scale);
    }
    Json t = Json::array();
    for (const auto& n : l.tensors) t.push(n);
    j.set("tensors", t).set("bytes", l.bytes);
    jl.push(j);
  }
  uint64_t data_bytes = 0;
  for (const auto& t : f->tensors()) data_bytes += t.nbytes();
  Json meta = Json::object();
  for (const auto& [k, v] : f->header().metadata) meta.set(k, v);

  if (args->has("json")) {
    Json j = Json::object();
    j.set("file", f->path()).set("file_bytes", f->file_size()).set("header_bytes", f->header().header_len);
    j.set("tensor_count", static_cast<int64_t>(f->tensors().size()));
    j.set("quantized_layers", jl);
    j.set("quantized_bytes", quant_bytes).set("other_bytes", data_bytes - quant_bytes);
    j.set("metadata", meta);
    if (args->has("tensors")) {
      Json ts = Json::array();
      for (const auto& t : f->tensors())
        ts.push(Json::object().set("name", t.name).set("dtype", to_string(t.dtype)).set("shape", shape_json(t.shape)).set("bytes", t.nbytes()));
      j.set("tensors", ts);
    }
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: %llu bytes, %zu tensors, %zu quantized layers (%llu bytes), %llu bytes in other tensors\n",
              f->path().c_str(), static_cast<unsigned long long>(f->file_size()), f->tensors().size(), layers->size(),
              static_cast<unsigned long long>(quant_bytes), static_cast<unsigned long long>(data_bytes - quant_bytes));
  if (!layers->empty())
    std::printf("%-44s %-14s %-14s %-8s %-26s %-26s %s\n", "layer", "format", "shape [N, K]", "scales", "weight_scale_2",
                "input_scale", "bytes");
  for (const auto& l : layers.value()) {
    if (l.format != "nvfp4") {
      std::printf("%-44s %-14s %-14s %-8s %-26s %-26s %llu\n", l.name.c_str(), l.format.c_str(), "-", "-", "-", "-",
                  static_cast<unsigned long long>(l.bytes));
      continue;
    }
    char shape[48], s2[48], is[48];
    std::snprintf(shape, sizeof shape, "%lld x %lld", static_cast<long long>(l.n), static_cast<long long>(l.k));
    std::snprintf(s2, sizeof s2, "%.9g (%s)", l.weight_scale_2, hex32(l.weight_scale_2).c_str());
    if (l.has_input_scale) std::snprintf(is, sizeof is, "%.9g (%s)", l.input_scale, hex32(l.input_scale).c_str());
    else std::snprintf(is, sizeof is, "dynamic");
    std::printf("%-44s %-14s %-14s %-8s %-26s %-26s %llu\n", l.name.c_str(), l.format.c_str(), shape,
                to_string(l.scale_dtype), s2, is, static_cast<unsigned long long>(l.bytes));
  }
  if (args->has("tensors"))
    for (const auto& t : f->tensors()) {
      std::string shape;
      for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
      std::printf("  %-60s %-8s [%s] %llu\n", t.name.c_str(), to_string(t.dtype), shape.c_str(),
                  static_cast<unsigned long long>(t.nbytes()));
    }
  return 0;
}

int cmd_quantize_checkpoint(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"json", "quiet", "help"}, {"layers", "threads"}, 2);
  if (!args.is_ok()) return fail("quantize-checkpoint", args.status());
  if (args->has("help")) { std::fputs(kQuantizeCkptHelp, stdout); return 0; }
  if (args->positional().size() != 2)
    return fail("quantize-checkpoint", invalid_argument("expects IN.safetensors OUT.safetensors (see --help)"));
  // 1024 is above any core count this runs on.
  auto threads = args->get_int("threads", 0, 0, 1024, "0: all cores");
  if (!threads.is_ok()) return fail("quantize-checkpoint", threads.status());
  QuantizeCheckpointOptions opt;
  opt.layers_regex = args->get("layers");
  opt.threads = static_cast<int>(threads.value());
  if (args->has("layers") && opt.layers_regex.empty())
    return fail("quantize-checkpoint", invalid_argument("--layers needs a non-empty regular expression"));
  if (!args->has("quiet")) opt.progress = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
  auto in_path = args->positional_path(0, "IN.safetensors");
  if (!in_path.is_ok()) return fail("quantize-checkpoint", in_path.status());
  auto out_path = args->positional_path(1, "OUT.safetensors");
  if (!out_path.is_ok()) return fail("quantize-checkpoint", out_path.status());
  const std::string in = in_path.value(), out = out_path.value();
  auto r = quantize_checkpoint(in, out, opt);
  if (!r.is_ok()) return fail("quantize-checkpoint", r.status());
  if (args->has("json")) {
    Json j = r->to_json();
    j.set("input", in).set("output", out);
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s -> %s: %lld layers quantized to nvfp4, %lld tensors copied, %llu -> %llu bytes\n", in.c_str(), out.c_str(),
                static_cast<long long>(r->quantized), static_cast<long long>(r->copied),
                static_cast<unsigned long long>(r->bytes_in), static_cast<unsigned long long>(r->bytes_out));
    if (!r->from_wider.empty())
      std::printf("note: %zu layers were F16/F32 and were rounded to bf16 before quantizing (bit-identity with "
                  "comfy-kitchen is claimed for bf16 weights)\n", r->from_wider.size());
  }
  return 0;
}

}  // namespace nvfp4::cli
