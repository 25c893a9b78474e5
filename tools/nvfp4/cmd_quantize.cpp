// nvfp4 version / nvfp4 quantize
#include <cmath>
#include <cstdio>
#include <cstring>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"

namespace nvfp4::cli {

namespace {
const char* kVersionHelp =
    "usage: nvfp4 version [--json]\n"
    "The library version, the CUDA runtime and driver, the GPUs found, the sm90 tile configurations built\n"
    "and the cuBLASLt library.\n"
    "  --json      one JSON document instead of the lines\n";
}

int cmd_version(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"json", "help"}, {});
  if (!args.is_ok()) return fail("version", args.status());
  if (args->has("help")) { std::fputs(kVersionHelp, stdout); return 0; }
  const CudaInfo ci = cuda_info();
  Json j = Json::object();
  j.set("version", NVFP4_VERSION);
  j.set("cuda_built", ci.built_with_cuda);
  j.set("cuda_targets", ci.built_targets);
  j.set("cuda_runtime", ci.runtime_version).set("cuda_driver", ci.driver_version);
  Json devs = Json::array();
  for (const auto& d : ci.devices) {
    Json dj = Json::object();
    dj.set("index", d.index).set("name", d.name).set("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    dj.set("sm_count", d.sm_count).set("memory_bytes", d.memory_bytes);
    devs.push(dj);
  }
  j.set("gpus", devs);
  Json cfgs = Json::array();
  for (const std::string& c : sm90_configs()) cfgs.push(c);
  j.set("sm90_configs", cfgs);  // the Hopper kernel's built tile configurations (NVFP4_SM90_CONFIG)
  if (!ci.error.empty()) j.set("gpu_note", ci.error);
  auto env = cublaslt_env();
  j.set("cublaslt", env.is_ok() ? env->library + " " + std::to_string(env->cublaslt_version) : env.status().message());
  if (args->has("json")) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("nvfp4 %s\n", NVFP4_VERSION);
  std::printf("CUDA: %s (targets %s), runtime %d, driver %d\n", ci.built_with_cuda ? "built" : "not built",
              ci.built_targets.empty() ? "-" : ci.built_targets.c_str(), ci.runtime_version, ci.driver_version);
  if (ci.devices.empty()) std::printf("GPUs: none (%s)\n", ci.error.c_str());
  for (const auto& d : ci.devices)
    std::printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB\n", d.index, d.name.c_str(), d.cc_major, d.cc_minor,
                d.sm_count, d.memory_bytes / 1073741824.0);
  std::printf("cuBLASLt: %s\n", j["cublaslt"].as_string().c_str());
  return 0;
}

namespace {
const char* kQuantizeHelp =
    "usage: nvfp4 quantize --input X.npy|X.bin --out PREFIX [options]\n"
    "  --input FILE        bf16 input: .npy ([R][C], dtype u2/bfloat16) or raw little-endian bf16 with --shape\n"
    "  --shape R,C         shape of a raw input\n"
    "  --out PREFIX        writes PREFIX.data.npy ([R16][C16/2] u8), PREFIX.scales.npy (u8), PREFIX.json\n"
    "  --recipe NAME       comfy-cuda (default) | comfy-eager-cuda | comfy-eager-cpu\n"
    "  --nibbles ORDER     hi_first (default, ComfyUI) | lo_first (PTX/cuBLAS/CUTLASS)\n"
    "  --scales LAYOUT     swizzled128x4 (default) | linear\n"
    "  --global-scale S    dynamic (default: f32(bf16(amax/2688)), as ComfyUI) | f32 (amax/2688) | an fp32 >= 0 (not -0),\n"
    "                      decimal (rounded to the nearest fp32) or a hex float that spells it exactly (0x1p-3)\n"
    "  --pad               zero-pad rows and columns to multiples of 16 (else they must divide)\n"
    "  --device cpu|gpu    where to quantize (gpu: comfy-cuda only)\n"
    "  --json              print the result's description as JSON\n";
}

int cmd_quantize(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"pad", "json", "help"},
                          {"input", "shape", "out", "recipe", "nibbles", "scales", "global-scale", "device"});
  if (!args.is_ok()) return fail("quantize", args.status());
  if (args->has("help")) { std::fputs(kQuantizeHelp, stdout); return 0; }
  if (!args->has("input") || !args->has("out"))
    return fail("quantize", invalid_argument("--input and --out are required (see --help)"));
  auto in_path = args->get_path("input", "");
  if (!in_path.is_ok()) return fail("quantize", in_path.status());
  auto out_prefix = args->get_path("out", "");
  if (!out_prefix.is_ok()) return fail("quantize", out_prefix.status());
  QuantizeOptions opt;
  opt.pad = args->has("pad");
  auto recipe = parse_recipe(args->get("recipe", "comfy-cuda"));
  if (!recipe.is_ok()) return fail("quantize", recipe.status());
  opt.recipe = recipe.value();
  auto nib = parse_nibble_order(args->get("nibbles", "hi_first"));
  if (!nib.is_ok()) return fail("quantize", nib.status());
  opt.nibbles = nib.value();
  auto lay = parse_scale_layout(args->get("scales", "swizzled128x4"));
  if (!lay.is_ok()) return fail("quantize", lay.status());
  opt.scale_layout = lay.value();
  const std::string device = args->get("device", "cpu");
  if (device != "cpu" && device != "gpu") return fail("quantize", invalid_argument("--device must be cpu or gpu"));
  // A global scale given as a number is checked with the other options, before the input is read.
  const std::string gs = args->get("global-scale", "dynamic");
  float given_scale = 0;
  if (gs != "dynamic" && gs != "f32") {
    auto v = args->get_f32("global-scale", 0, "dynamic, f32 or an fp32 >= 0");
    if (!v.is_ok()) return fail("quantize", v.status());
    // A global scale is finite and >= 0 (docs/numerics.md §7.3); get_f32 has refused inf and nan.
    // -0 compares equal to 0 but is no zero scale: its sign reaches every block scale (0xFE, where
    // 0 writes 448 = 0x7E, no UE4M3 byte) and the file's global_scale_bits.
    if (v.value() < 0) return fail("quantize", invalid_argument("--global-scale must be >= 0, got '" + printable(gs) + "'"));
    if (std::signbit(v.value()))
      return fail("quantize", invalid_argument("--global-scale must be >= 0 and not -0 (its sign would reach the block "
                                               "scales), got '" + printable(gs) + "'"));
    given_scale = v.value();
  }

  // Input
  const std::string in = in_path.value();
  std::vector<uint16_t> x;
  int64_t rows = 0, cols = 0;
  if (in.size() > 4 && in.substr(in.size() - 4) == ".npy") {
    auto a = read_npy(in);
    if (!a.is_ok()) return fail("quantize", a.status());
    if (a->dtype != "u2" || a->shape.size() != 2)
      return fail("quantize", invalid_argument("'" + in + "' must be a 2-D bf16 array (dtype u2 / bfloat16)"));
    rows = a->shape[0];
    cols = a->shape[1];
    x.resize(a->bytes.size() / 2);
    // An empty array (a zero dimension, refused by the quantizer below) has no data to copy, and
    // memcpy from its null pointer is undefined even for zero bytes.
    if (!a->bytes.empty()) std::memcpy(x.data(), a->bytes.data(), a->bytes.size());
  } else {
    if (!args->has("shape")) return fail("quantize", invalid_argument("a raw input needs --shape R,C"));
    auto dims = parse_dims(args->get("shape"), "--shape", 2);
    if (!dims.is_ok()) return fail("quantize", dims.status());
    rows = (*dims)[0];
    cols = (*dims)[1];
    auto bytes = read_file(in);
    if (!bytes.is_ok()) return fail("quantize", bytes.status());
    if (Status st = check_raw_size(bytes->size(), dims.value(), 2, in); !st.is_ok()) return fail("quantize", st);
    x.resize(bytes->size() / 2);
    std::memcpy(x.data(), bytes->data(), bytes->size());
  }
  // Global scale
  float s = given_scale;
  if (gs == "dynamic") s = global_scale_dynamic(x.data(), static_cast<int64_t>(x.size()));
  else if (gs == "f32") s = global_scale_f32(x.data(), static_cast<int64_t>(x.size()));
  auto t = device == "gpu" ? quantize_gpu(x.data(), rows, cols, s, opt) : quantize(x.data(), rows, cols, s, opt);
  if (!t.is_ok()) return fail("quantize", t.status());
  const Geometry& g = t->geom;
  const std::string out = out_prefix.value();
  Json meta = Json::object();
  meta.set("format", "nvfp4").set("shape", Json::array().push(rows).push(cols));
  meta.set("padded_shape", Json::array().push(g.rows16).push(g.cols16));
  meta.set("recipe", to_string(opt.recipe)).set("device", device);
  meta.set("nibbles", to_string(opt.nibbles)).set("scale_layout", to_string(opt.scale_layout));
  meta.set("global_scale", static_cast<double>(s));
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", f32_bits(s));
  meta.set("global_scale_bits", hex);
  meta.set("data", out + ".data.npy").set("scales", out + ".scales.npy");
  meta.set("data_shape", Json::array().push(g.rows16).push(g.cols16 / 2));
  const std::vector<int64_t> sshape = opt.scale_layout == ScaleLayout::kSwizzled128x4
                                          ? std::vector<int64_t>{g.sf_rows_pad, g.sf_cols_pad}
                                          : std::vector<int64_t>{g.rows16, g.sf_cols};
  meta.set("scales_shape", Json::array().push(sshape[0]).push(sshape[1]));
  meta.set("data_sha256", sha256_hex(t->data.data(), t->data.size()));
  meta.set("scales_sha256", sha256_hex(t->scales.data(), t->scales.size()));
  // Every output is written in full to its temporary before any is given its name, and commit_all
  // gives all the names or none, so an error leaves no partial output.
  Status st = [&]() -> Status {
    std::vector<AtomicFile> files;
    NVFP4_ASSIGN_OR_RETURN(AtomicFile fd, AtomicFile::create(out + ".data.npy"));
    NVFP4_TRY(write_npy(fd, "u1", {g.rows16, g.cols16 / 2}, t->data.data(), t->data.size()));
    files.push_back(std::move(fd));
    NVFP4_ASSIGN_OR_RETURN(AtomicFile fs, AtomicFile::create(out + ".scales.npy"));
    NVFP4_TRY(write_npy(fs, "u1", sshape, t->scales.data(), t->scales.size()));
    files.push_back(std::move(fs));
    NVFP4_ASSIGN_OR_RETURN(AtomicFile fj, AtomicFile::create(out + ".json"));
    const std::string text = meta.dump() + "\n";
    NVFP4_TRY(fj.write(text.data(), text.size()));
    files.push_back(std::move(fj));
    return commit_all(files);
  }();
  if (!st.is_ok()) return fail("quantize", st);
  if (args->has("json")) std::printf("%s\n", meta.dump().c_str());
  else
    std::printf("quantized [%lld, %lld] with %s (global scale %s) -> %s.{data,scales}.npy, %s.json\n",
                static_cast<long long>(rows), static_cast<long long>(cols), to_string(opt.recipe), hex, out.c_str(), out.c_str());
  return 0;
}

}  // namespace nvfp4::cli
