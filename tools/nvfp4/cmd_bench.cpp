// nvfp4 bench: GPU kernels against cuBLAS bf16 of the same shape, in the same process
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/bench.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/limits.hpp"

namespace nvfp4::cli {

namespace {
const char* kHelp =
    "usage: nvfp4 bench [options]\n"
    "  --rows M            activation rows (default 128)\n"
    "  --shapes LIST       NAME:N:K / NxK / MiniMax names (default: the four MiniMax H3 linears)\n"
    "  --backend LIST      sm90,sm90-stream,comfy-hopper,cublas-fp8,gpu-model,sm120-emulated,sm120-native,\n"
    "                      sm120p-emulated,sm120p-native,sm120p-proxy,cublaslt (default: all this GPU runs);\n"
    "                      sm120p-proxy times the pipelined kernel's data path alone (MMA replaced by a\n"
    "                      register-only stand-in) against a copy of the weights\n"
    "  --activations KIND  outliers (default), normal or minimax (validate's synthetic inputs)\n"
    "  --sm90-config LIST  sm90 tile configurations to time, BMxRWxTWxNH[xKS] (tokens per warpgroup x 64-row blocks x\n"
    "                      token blocks per CTA x MMA chains [x K-split warpgroups]), e.g. 256x2x1x2,16x1x1x1x2\n"
    "                      (default: the launcher's choice)\n"
    "  --contract C        reduction contract of the gpu-model, sm120-* and sm120p-* rows (default sequential),\n"
    "                      e.g. split_k:2:grain=256:cublas:fp32; split-K rows time the kernel and the merge\n"
    "  --iters N           timed runs per measurement, median reported (default 30)\n"
    "  --warmup N          untimed runs first (default 5)\n"
    "  --timing MODE       queued (default: runs enqueued back to back as a forward pass does: GPU time)\n"
    "                      or sync (each run alone after a synchronize, its host launch work counted); every row\n"
    "                      of the run, baselines included, is timed the same way\n"
    "  --no-quantizer      skip the quantizer benchmark\n"
    "  --no-gemm           skip the GEMM benchmarks\n"
    "  --commit HASH       recorded in the JSON\n"
    "  --out FILE          write the JSON report\n";
}

int cmd_bench(int argc, char** argv) {
  auto args = Args::parse(argc, argv, 2, {"no-quantizer", "no-gemm", "help"},
                          {"rows", "shapes", "backend", "iters", "warmup", "commit", "out", "sm90-config", "activations", "timing", "contract"});
  if (!args.is_ok()) return fail("bench", args.status());
  if (args->has("help")) { std::fputs(kHelp, stdout); return 0; }
  auto out = args->get_path("out", "");
  if (!out.is_ok()) return fail("bench", out.status());
  BenchOptions opt;
  auto rows = args->get_int("rows", 128, 1, kMaxDim), iters = args->get_int("iters", 30, 1, 1000000),
       warm = args->get_int("warmup", 5, 0, 1000000);
  for (auto* r : {&rows, &iters, &warm})
    if (!r->is_ok()) return fail("bench", r->status());
  opt.rows = rows.value();
  opt.iters = static_cast<int>(iters.value());
  opt.warmup = static_cast<int>(warm.value());
  if (args->has("timing")) {
    const std::string t = args->get("timing");
    if (t != "sync" && t != "queued") return fail("bench", invalid_argument("--timing must be sync or queued, not '" + t + "'"));
    opt.queued_timing = t == "queued";
  }
  opt.quantizer = !args->has("no-quantizer");
  opt.commit = args->get("commit");
  if (args->has("shapes")) {
    auto s = parse_shapes(args->get("shapes"));
    if (!s.is_ok()) return fail("bench", s.status());
    opt.linears = s.value();
  }
  if (args->has("no-gemm")) opt.linears.clear();  // after --shapes, which must not bring them back
  if (args->has("backend")) {
    opt.backends.clear();
    opt.backends_explicit = true;
    std::stringstream ss(args->get("backend"));
    std::string b;
    while (std::getline(ss, b, ',')) {
      if (b != "gpu-model" && b != "sm120-emulated" && b != "sm120-native" && b != "sm120p-emulated" &&
          b != "sm120p-native" && b != "sm120p-proxy" && b != "cublaslt" && b != "sm90" && b != "sm90-stream" &&
          b != "comfy-hopper" && b != "cublas-fp8")
        return fail("bench", invalid_argument("unknown backend '" + b + "'"));
      opt.backends.push_back(b);
    }
  }
  if (args->has("activations")) {
    auto kind = parse_activation_kind(args->get("activations"));
    if (!kind.is_ok()) return fail("bench", kind.status());
    opt.activations = args->get("activations");
  }
  if (args->has("contract")) {
    auto c = ReductionContract::parse(args->get("contract"));
    if (!c.is_ok()) return fail("bench", c.status());
    opt.contract = c.value();
  }
  // A contract no kernel can run on a shape (S above its k64 chunk count): refused here, in every
  // build, before anything is measured.
  for (const LinearShape& l : opt.linears)
    if (Status st = check_gpu_contract(GpuGemmKernel::kModel, opt.contract, l.k); !st.is_ok()) return fail("bench", st);
  if (args->has("sm90-config")) {
    std::stringstream ss(args->get("sm90-config"));
    std::string v;
    while (std::getline(ss, v, ',')) opt.sm90_configs.push_back(v);  // checked against the built ones by the launcher
  }
  for (int i = 0; i < argc; ++i) {
    if (i) opt.command += ' ';
    opt.command += argv[i];
  }
  auto j = run_bench(opt, [](const std::string& s) { std::printf("%s\n", s.c_str()); std::fflush(stdout); });
  if (!j.is_ok()) return fail("bench", j.status());
  if (args->has("out")) {
    Status st = write_text(out.value(), j->dump() + "\n");
    if (!st.is_ok()) return fail("bench", st);
  }
  return 0;
}

}  // namespace nvfp4::cli
