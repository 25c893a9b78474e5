// nvfp4 validate: the P0 harness (see include/nvfp4/validate.hpp)
#include <cstdio>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4::cli {

namespace {
const char* kHelp =
    "usage: nvfp4 validate [options]\n"
    "Default: the four MiniMax H3 linears at 128 rows, seeded synthetic bf16 inputs quantized with\n"
    "comfy-cuda (dynamic activation scale), every GPU backend of this machine vs the CPU oracle; on a\n"
    "machine without a GPU, the fast CPU oracle vs the independent per-element reference on a sample.\n"
    "  --rows M              activation rows (default 128)\n"
    "  --linear NAMES        comma list: attn_qkv_proj,attn_out_proj,mlp_fc1,mlp_fc2 (or qkv,out,fc1,fc2)\n"
    "  --shapes LIST         other shapes: NAME:N:K or NxK, comma separated\n"
    "  --seed S              input seed (default 1234)\n"
    "  --candidate B[,B..]   backends: cpu-oracle, cpu-reference, sm90 (Hopper), sm90-stream, gpu-model,\n"
    "                        sm120-emulated, sm120-native, sm120-stream-emulated, sm120-stream-native\n"
    "                        (*-stream: A quantized inside the kernel from the bf16 activation),\n"
    "                        sm120p-emulated, sm120p-native (the pipelined SM120 kernel),\n"
    "                        sm120p-stream-emulated, sm120p-stream-native, cublaslt;\n"
    "                        all but cpu-reference and cublaslt take @CONTRACT (sm90: sequential only)\n"
    "  --reference B         the reference backend (default cpu-oracle, or cpu-reference for cpu-oracle)\n"
    "  --contract C          the contract of every side without its own @CONTRACT (not cpu-reference or cublaslt):\n"
    "                        a contract, or cublaslt[:grain=G][:cublas|cutlass] = per linear, the plan cuBLASLt's\n"
    "                        heuristic picks for ComfyUI's call, mapped as probe-cublaslt maps it (a split-K plan\n"
    "                        needs the K grain, which probe-cublaslt --compare pins down; exit 3 where it does not map)\n"
    "  --sensitivity C       the contract compared with sequential per linear (default split_k:2:grain=256:cublas:fp32)\n"
    "  --sample N            outputs compared when a side is sampled (default 4096)\n"
    "  --inputs DIR          read DIR/<linear>.x.npy (bf16 activation) and the weight as checkpoint arrays\n"
    "                        (<linear>.weight.npy, .weight_scale.npy, .weight_scale_2.npy) or bf16 <linear>.w.npy\n"
    "  --checkpoint FILE     validate a real layer of a ComfyUI NVFP4 checkpoint (.safetensors) ...\n"
    "  --layer NAME          ... this one: its stored weight, scales and input_scale (if any); the activation\n"
    "                        is synthetic ([--rows][K]) unless --inputs names a bf16 [M][K] x.npy (or a DIR\n"
    "                        with NAME.x.npy)\n"
    "  --out DIR             where the JSON reports go (default validate-out)\n"
    "  --quiet               no progress lines\n"
    "Contracts: sequential | split_k:S[:grain=G][:cublas|cutlass][:fp32|bf16_partials|bf16_serial]\n";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) if (!t.empty()) out.push_back(t);
  return out;
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

Result<Args> parse_args(int argc, char** argv) {
  return Args::parse(argc, argv, 2, {"quiet", "help"},
                     {"rows", "linear", "shapes", "seed", "candidate", "reference", "sensitivity", "contract", "sample",
                      "inputs", "out", "checkpoint", "layer"});
}

Result<ValidateOptions> options_from(const Args& args) {
  ValidateOptions opt;
  auto rows = args.get_int("rows", 128, 1, kMaxDim);
  auto seed = args.get_int("seed", 1234, 0, kMaxSeed);
  auto sample = args.get_int("sample", 4096, 1, kMaxDim);
  if (!rows.is_ok()) return rows.status();
  if (!seed.is_ok()) return seed.status();
  if (!sample.is_ok()) return sample.status();
  opt.rows = rows.value();
  opt.seed = static_cast<uint64_t>(seed.value());
  opt.sample = sample.value();
  auto out = args.get_path("out", "validate-out");
  if (!out.is_ok()) return out.status();
  opt.out_dir = out.value();
  // An empty --inputs or --checkpoint (an unset shell variable) meant "not given": synthetic inputs,
  // the default linears, and a report that looks like the one asked for.
  NVFP4_ASSIGN_OR_RETURN(opt.inputs_dir, args.get_path("inputs", ""));
  if (args.has("linear") && args.has("shapes")) return invalid_argument("give --linear or --shapes, not both");
  NVFP4_ASSIGN_OR_RETURN(opt.checkpoint, args.get_path("checkpoint", ""));
  opt.layer = args.get("layer");
  if (args.has("checkpoint") != args.has("layer")) return invalid_argument("--checkpoint and --layer go together");
  if (args.has("checkpoint") && (args.has("linear") || args.has("shapes")))
    return invalid_argument("--checkpoint takes its shape from the file; drop --linear/--shapes");
  if (args.has("linear") || args.has("shapes")) {
    auto shapes = parse_shapes(args.get(args.has("linear") ? "linear" : "shapes"));
    if (!shapes.is_ok()) return shapes.status();
    opt.linears = shapes.value();
  }
  for (const auto& c : split(args.get("candidate"))) {
    auto b = parse_backend(c);
    if (!b.is_ok()) return b.status();
    opt.candidates.push_back(b.value());
  }
  if (args.has("reference")) {
    auto b = parse_backend(args.get("reference"));
    if (!b.is_ok()) return b.status();
    opt.reference = b.value();
    opt.reference_given = true;
  }
  if (args.has("sensitivity")) {
    auto c = ReductionContract::parse(args.get("sensitivity"));
    if (!c.is_ok()) return c.status();
    opt.sensitivity = c.value();
  }
  opt.contract = args.get("contract");
  if (!args.has("quiet")) opt.progress = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
  return opt;
}
}  // namespace

Result<ValidateReport> validate_from_args(int argc, char** argv) {
  NVFP4_ASSIGN_OR_RETURN(Args args, parse_args(argc, argv));
  if (args.has("help")) return invalid_argument("--help is for the command line");
  NVFP4_ASSIGN_OR_RETURN(ValidateOptions opt, options_from(args));
  return run_validate(opt);
}

int cmd_validate(int argc, char** argv) {
  auto args = parse_args(argc, argv);
  if (!args.is_ok()) return fail("validate", args.status());
  if (args->has("help")) { std::fputs(kHelp, stdout); return 0; }
  auto opt = options_from(args.value());
  if (!opt.is_ok()) return fail("validate", opt.status());
  auto rep = run_validate(opt.value());
  if (!rep.is_ok()) return fail("validate", rep.status());
  const int64_t rows = opt->rows;
  const Json& sum = rep->summary;
  std::printf("device: %s (%s)   rows: %lld   reference: %s\n", sum["device"].as_string().c_str(),
              sum["compute_capability"].as_string().c_str(), static_cast<long long>(rows),
              sum["reference"].as_string().c_str());
  std::printf("%-16s %-28s %-22s %-6s %-12s %-6s %-12s %-10s %s\n", "linear", "candidate", "mnk", "raw", "raw_max_abs", "fused",
              "fused_max", "compared", "split2 sensitivity (raw / bf16 differing)");
  for (const auto& lr : rep->linears) {
    const Json& j = lr.json;
    const std::string mnk = std::to_string(lr.m) + "x" + std::to_string(lr.n) + "x" + std::to_string(lr.k);
    std::printf("%-16s %-28s %-22s %-6s %-12s %-6s %-12s %-10lld %lld / %lld\n", lr.linear.c_str(),
                j["candidate"].as_string().c_str(), mnk.c_str(), !lr.cmp.raw_available ? "n/a" : lr.cmp.raw_equal ? "EQUAL" : "DIFF", fmt(lr.cmp.raw_max_abs).c_str(),
                lr.cmp.fused_equal ? "EQUAL" : "DIFF", fmt(lr.cmp.fused_max_abs).c_str(), static_cast<long long>(lr.cmp.compared),
                static_cast<long long>(lr.sensitivity["raw_differing"].as_int()),
                static_cast<long long>(lr.sensitivity["fused_alpha_differing"].as_int()));
  }
  std::printf("status: %s\nreports: %s/summary.json (%.1f s)\n", sum["status"].as_string().c_str(), opt->out_dir.c_str(),
              sum["total_seconds"].as_number());
  return rep->pass ? 0 : 1;
}

}  // namespace nvfp4::cli
