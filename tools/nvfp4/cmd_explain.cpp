// nvfp4 explain: which reduction contract reproduces a reference output (e.g. cuBLASLt's on a GB10)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4::cli {

namespace {
const char* kHelp =
    "usage: nvfp4 explain --linear NAME (--reference DUMP | --plant CONTRACT) [options]\n"
    "Searches sequential K and split-K S = 2..8, grains 64..1024, both partition rules and all merge\n"
    "modes, with and without alpha fusion, for the contracts that reproduce DUMP bit for bit.\n"
    "  --linear NAME         MiniMax H3 linear (qkv, out, fc1, fc2, or NAME:N:K)\n"
    "  --rows M --seed S     synthetic inputs, the same tensors `nvfp4 validate` uses (default 128, 1234)\n"
    "  --inputs DIR          DIR/<name>.x.npy (bf16) and the weight as checkpoint arrays (<name>.weight.npy,\n"
    "                        .weight_scale.npy, .weight_scale_2.npy) or bf16 <name>.w.npy, instead\n"
    "  --reference FILE      the output to explain: .npy [M][N] (u2 = bf16 layer output, f4 = fp32 raw) or raw\n"
    "                        little-endian [M][N] with --dtype bf16|f32\n"
    "  --dtype T             bf16 | f32, for a raw --reference file\n"
    "  --plant CONTRACT      make the reference with the oracle under CONTRACT (a self-test of the search)\n"
    "  --plant-epilogue E    alpha_before_bf16 (default) | alpha_after_bf16\n"
    "  --plant-raw           plant the fp32 raw output instead of bf16\n"
    "  --save-reference F    write the planted reference as .npy\n"
    "  --splits LIST --grains LIST   narrow or widen the search (defaults 2..8 and 64,128,256,512,1024)\n"
    "  --sample N            outputs used to screen candidates (default 2048)\n"
    "  --json                print the result as JSON\n";


Result<Args> parse_args(int argc, char** argv) {
  return Args::parse(argc, argv, 2, {"json", "plant-raw", "help"},
                     {"linear", "rows", "seed", "inputs", "reference", "dtype", "plant", "plant-epilogue",
                      "save-reference", "splits", "grains", "sample"});
}

// The search and its JSON report; the printing is cmd_explain's.
Result<Json> explain_json(const Args& args_ref) {
  const Args* args = &args_ref;
  if (!args->has("linear")) return invalid_argument("--linear is required (see --help)");
  if (args->has("reference") == args->has("plant"))
    return invalid_argument("give exactly one of --reference FILE or --plant CONTRACT");
  auto shapes = parse_shapes(args->get("linear"));
  if (!shapes.is_ok()) return shapes.status();
  if (shapes->size() != 1) return invalid_argument("--linear takes one linear");
  NVFP4_ASSIGN_OR_RETURN(const std::string save_path, args->get_path("save-reference", ""));
  // Checked with the options, before the inputs are made: an empty one is the caller's mistake.
  NVFP4_ASSIGN_OR_RETURN(const std::string reference_path, args->get_path("reference", ""));
  auto rows = args->get_int("rows", 128, 1, kMaxDim);
  auto seed = args->get_int("seed", 1234, 0, kMaxSeed);
  auto sample = args->get_int("sample", 2048, 1, kMaxDim);
  for (auto* r : {&rows, &seed, &sample})
    if (!r->is_ok()) return r->status();
  ExplainOptions eo;
  eo.sample = sample.value();
  if (args->has("splits")) {
    auto v = parse_int_list(args->get("splits"), 2, 64, "--splits");
    if (!v.is_ok()) return v.status();
    eo.splits = v.value();
  }
  if (args->has("grains")) {
    auto v = parse_int_list(args->get("grains"), 64, 1 << 20, "--grains");
    if (!v.is_ok()) return v.status();
    eo.grains = v.value();
  }
  // An empty --inputs would silently mean the synthetic inputs.
  NVFP4_ASSIGN_OR_RETURN(const std::string inputs, args->get_path("inputs", ""));
  auto prob = prepare_layer(shapes->front(), rows.value(), static_cast<uint64_t>(seed.value()), inputs);
  if (!prob.is_ok()) return prob.status();
  const int64_t M = prob->m, N = prob->shape.n;
  // The dump, the search's full outputs and the planted reference are held at once.
  if (Status st = check_gemm_problem(M, N, prob->shape.k, 3, "explain " + prob->shape.name); !st.is_ok())
    return st;

  std::vector<uint32_t> dump(M * N);
  bool bf16 = true;
  if (args->has("plant")) {
    auto c = ReductionContract::parse(args->get("plant"));
    if (!c.is_ok()) return c.status();
    auto e = parse_epilogue(args->get("plant-epilogue", "alpha_before_bf16"));
    if (!e.is_ok()) return e.status();
    GemmSpec spec;
    spec.alpha = prob->alpha;
    spec.contracts = {c.value()};
    spec.epilogues = {e.value()};
    auto r = gemm_oracle(prob->a, prob->w, spec);
    if (!r.is_ok()) return r.status();
    bf16 = !args->has("plant-raw");
    for (int64_t i = 0; i < M * N; ++i) dump[i] = bf16 ? (*r)[0].out[i] : f32_bits((*r)[0].raw[i]);
    if (args->has("save-reference")) {
      Status st = bf16 ? write_npy(save_path, "u2", {M, N}, (*r)[0].out.data(), M * N * 2)
                       : write_npy(save_path, "f4", {M, N}, (*r)[0].raw.data(), M * N * 4);
      if (!st.is_ok()) return st;
    }
  } else {
    const std::string& f = reference_path;
    std::vector<uint8_t> bytes;
    if (f.size() > 4 && f.substr(f.size() - 4) == ".npy") {
      auto a = read_npy(f);
      if (!a.is_ok()) return a.status();
      if (a->dtype != "u2" && a->dtype != "f4") return invalid_argument("'" + f + "' must be bf16 (u2) or f32 (f4)");
      // The shape, not only the count: a transposed [N][M] or flat dump has M*N values too, and read
      // as [M][N] it matches no contract, a wrong verdict instead of an error.
      if (a->shape != std::vector<int64_t>{M, N}) {
        std::string given = "[";
        for (size_t i = 0; i < a->shape.size(); ++i) given += (i ? ", " : "") + std::to_string(a->shape[i]);
        return invalid_argument("'" + f + "' is " + given + "], expected [M, N] = [" + std::to_string(M) + ", " +
                                std::to_string(N) + "]");
      }
      bf16 = a->dtype == "u2";
      bytes = std::move(a->bytes);
    } else {
      const std::string dt = args->get("dtype");
      if (dt != "bf16" && dt != "f32") return invalid_argument("a raw --reference needs --dtype bf16|f32");
      bf16 = dt == "bf16";
      auto b = read_file(f);
      if (!b.is_ok()) return b.status();
      if (Status st = check_raw_size(b->size(), {M, N}, bf16 ? 2 : 4, f); !st.is_ok()) return st;
      bytes = std::move(b.value());
    }
    for (int64_t i = 0; i < M * N; ++i) {
      uint32_t v = 0;
      std::memcpy(&v, &bytes[i * (bf16 ? 2 : 4)], bf16 ? 2 : 4);
      dump[i] = v;
    }
  }
  auto res = explain_contract(prob->a, prob->w, prob->alpha, nullptr, dump, bf16, eo);
  if (!res.is_ok()) return res.status();
  Json j = res->to_json();
  j.set("linear", prob->shape.name).set("mnk", Json::array().push(M).push(N).push(prob->shape.k));
  j.set("inputs", prob->inputs);
  if (args->has("plant")) j.set("planted", args->get("plant"));
  return j;
}
}  // namespace

Result<Json> explain_from_args(int argc, char** argv) {
  NVFP4_ASSIGN_OR_RETURN(Args args, parse_args(argc, argv));
  if (args.has("help")) return invalid_argument("--help is for the command line");
  return explain_json(args);
}

int cmd_explain(int argc, char** argv) {
  auto args = parse_args(argc, argv);
  if (!args.is_ok()) return fail("explain", args.status());
  if (args->has("help")) { std::fputs(kHelp, stdout); return 0; }
  auto rj = explain_json(args.value());
  if (!rj.is_ok()) return fail("explain", rj.status());
  const Json& j = rj.value();
  if (args->has("json")) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    const Json& mnk = j["mnk"];
    std::printf("%s %lldx%lldx%lld: %lld candidate (contract, epilogue) pairs searched\n", j["linear"].as_string().c_str(),
                static_cast<long long>(mnk.items()[0].as_int()), static_cast<long long>(mnk.items()[1].as_int()),
                static_cast<long long>(mnk.items()[2].as_int()), static_cast<long long>(j["candidates_searched"].as_int()));
    std::printf("%-44s %-18s %-14s %s\n", "contract", "epilogue", "sample_diff", "all_outputs_diff");
    for (const Json& c : j["closest"].items()) {
      const Json* full = c.find("full_differing");
      std::printf("%-44s %-18s %-14lld %s\n", c["contract"].as_string().c_str(), c["epilogue"].as_string().c_str(),
                  static_cast<long long>(c["sample_differing"].as_int()), full ? std::to_string(full->as_int()).c_str() : "-");
    }
    std::printf("verdict: %s\n", j["verdict"].as_string().c_str());
  }
  return j["exact"].size() == 0 ? 1 : 0;
}

}  // namespace nvfp4::cli
