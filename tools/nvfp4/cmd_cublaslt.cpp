// nvfp4 probe-cublaslt: the plan cuBLASLt picks for ComfyUI's NVFP4 call (docs/numerics.md §6)
#include <cstdio>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4::cli {

namespace {
const char* kHelp =
    "usage: nvfp4 probe-cublaslt [options]\n"
    "For each shape, the heuristic's plans for comfy-kitchen's NVFP4 cuBLASLt call with every algo-config\n"
    "attribute, the cuBLASLt version, driver and SM count, and the reduction contract each plan maps to.\n"
    "  --shapes LIST          NAME:N:K or NxK or MiniMax names (default: the four MiniMax H3 linears)\n"
    "  --rows M               activation rows (default 128)\n"
    "  --workspace BYTES      MAX_WORKSPACE_BYTES (default 33554432, as comfy-kitchen)\n"
    "  --top N                heuristic results to list (default 8)\n"
    "  --force-splitk S       set SPLITK_NUM on every plan (checked with cublasLtMatmulAlgoCheck)\n"
    "  --force-reduction R    set REDUCTION_SCHEME: none|inplace|compute|output\n"
    "  --no-splitk            forbid split-K (PREF_REDUCTION_SCHEME_MASK = NONE)\n"
    "  --bias                 EPILOGUE_BIAS instead of DEFAULT\n"
    "  --compare              run each plan on the synthetic inputs (seeded as in validate) and report\n"
    "                         which oracle contract reproduces its output bit for bit (nvfp4 explain)\n"
    "  --seed S               inputs seed for --compare (default 1234)\n"
    "  --out FILE             also write the JSON to FILE\n";
}

int cmd_probe_cublaslt(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"no-splitk", "bias", "compare", "help"},
                          {"shapes", "rows", "workspace", "top", "force-splitk", "force-reduction", "seed", "out"});
  if (!args.is_ok()) return fail("probe-cublaslt", args.status());
  if (args->has("help")) { std::fputs(kHelp, stdout); return 0; }
  CublasLtPlanRequest req;
  // The workspace is allocated on the GPU: 1 TiB is above any GPU's memory.
  auto ws = args->get_int("workspace", req.workspace_bytes, 0, int64_t{1} << 40);
  auto top = args->get_int("top", 8, 1, 1024);
  auto rows = args->get_int("rows", 128, 1, kMaxDim);
  auto seed = args->get_int("seed", 1234, 0, kMaxSeed);
  // -1, the default, is the library's "not forced"; a given value must force something.
  auto fsk = args->get_int("force-splitk", -1, 1, 1024);
  for (auto* r : {&ws, &top, &rows, &seed, &fsk})
    if (!r->is_ok()) return fail("probe-cublaslt", r->status());
  auto out_path = args->get_path("out", "");
  if (!out_path.is_ok()) return fail("probe-cublaslt", out_path.status());
  req.workspace_bytes = ws.value();
  req.requested = static_cast<int>(top.value());
  req.force_splitk = static_cast<int>(fsk.value());
  req.forbid_splitk = args->has("no-splitk");
  req.bias = args->has("bias");
  if (args->has("force-reduction")) {
    const std::string r = args->get("force-reduction");
    req.force_reduction_scheme = r == "none" ? 0 : r == "inplace" ? 1 : r == "compute" ? 2 : r == "output" ? 4 : -2;
    if (req.force_reduction_scheme == -2)
      return fail("probe-cublaslt", invalid_argument("--force-reduction must be none, inplace, compute or output"));
  }
  std::vector<LinearShape> shapes = minimax_h3_linears();
  if (args->has("shapes")) {
    auto s = parse_shapes(args->get("shapes"));
    if (!s.is_ok()) return fail("probe-cublaslt", s.status());
    shapes = s.value();
  }
  // Every entry point first checks that this machine can run NVFP4 cuBLASLt at all.
  auto env = cublaslt_env();
  if (!env.is_ok()) return fail("probe-cublaslt", env.status());
  Status sup = cublaslt_nvfp4_supported(env.value());
  if (!sup.is_ok()) {
    auto probe = cublaslt_probe(rows.value(), shapes.front().n, shapes.front().k, req);
    const std::string what = probe.is_ok() ? "the heuristic nevertheless returned plans" : probe.status().message();
    return fail("probe-cublaslt", unsupported(sup.message() + "; heuristic on " + shapes.front().name + ": " + what));
  }
  Json out = Json::object();
  out.set("environment", env->to_json());
  out.set("request", Json::object()
                         .set("workspace_bytes", req.workspace_bytes)
                         .set("force_splitk", req.force_splitk)
                         .set("force_reduction_scheme", req.force_reduction_scheme)
                         .set("forbid_splitk", req.forbid_splitk)
                         .set("epilogue", req.bias ? "BIAS" : "DEFAULT")
                         .set("pointer_mode", "DEVICE"));
  Json list = Json::array();
  bool all_ok = true;
  for (const auto& l : shapes) {
    Json sj = Json::object();
    sj.set("linear", l.name).set("mnk", Json::array().push(rows.value()).push(l.n).push(l.k));
    auto plans = cublaslt_probe(rows.value(), l.n, l.k, req);
    if (!plans.is_ok()) {
      sj.set("error", plans.status().message());
      all_ok = false;
      list.push(sj);
      continue;
    }
    Json pj = Json::array();
    for (const auto& p : plans.value()) pj.push(p.to_json());
    sj.set("plans", pj);
    std::printf("%s (%lld x %lld x %lld): %zu plan(s); heuristic[0]: algo %lld tile %lld stages %lld splitK %lld reduction %lld -> %s\n",
                l.name.c_str(), static_cast<long long>(rows.value()), static_cast<long long>(l.n), static_cast<long long>(l.k),
                plans->size(), static_cast<long long>(plans->front().algo_id), static_cast<long long>(plans->front().tile_id),
                static_cast<long long>(plans->front().stages_id), static_cast<long long>(plans->front().splitk_num),
                static_cast<long long>(plans->front().reduction_scheme), plans->front().contract.c_str());
    if (args->has("compare")) {
      auto prob = prepare_layer(l, rows.value(), static_cast<uint64_t>(seed.value()), "");
      if (!prob.is_ok()) return fail("probe-cublaslt", prob.status());
      Json cj = Json::array();
      for (size_t i = 0; i < plans->size(); ++i) {
        CublasLtPlanRequest r = req;
        r.heuristic_index = static_cast<int>(i);
        r.requested = static_cast<int>(plans->size());
        auto run = cublaslt_gemm(prob->a, prob->w, prob->alpha, nullptr, r);
        Json c = Json::object();
        c.set("plan", static_cast<int64_t>(i));
        if (!run.is_ok()) {
          c.set("error", run.status().message());
          cj.push(c);
          continue;
        }
        std::vector<uint32_t> dump(run->out.begin(), run->out.end());
        auto ex = explain_contract(prob->a, prob->w, prob->alpha, nullptr, dump, true, ExplainOptions{});
        if (!ex.is_ok()) return fail("probe-cublaslt", ex.status());
        c.set("kernel_ms", run->kernel_ms).set("explain", ex->to_json());
        std::printf("  plan %zu: %s\n", i, ex->to_json()["verdict"].as_string().c_str());
        cj.push(c);
      }
      sj.set("compare", cj);
    }
    list.push(sj);
  }
  out.set("shapes", list);
  if (args->has("out")) {
    Status st = write_text(out_path.value(), out.dump() + "\n");
    if (!st.is_ok()) return fail("probe-cublaslt", st);
  }
  std::printf("%s\n", out.dump().c_str());
  return all_ok ? 0 : 3;
}

}  // namespace nvfp4::cli
