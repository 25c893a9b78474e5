// The nvfp4 command dispatcher, shared by the `nvfp4` executable and `python -m nvfp4_exact`.
#include <cstdio>
#include <cstring>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "nvfp4/limits.hpp"

namespace {
const char* kHelp =
    "nvfp4 " NVFP4_VERSION " - bit-exact NVFP4 linear layers (CPU reference, Hopper, SM120/SM121)\n"
    "\n"
    "usage: nvfp4 <command> [options]      (nvfp4 <command> --help for its options)\n"
    "\n"
    "commands:\n"
    "  validate         the P0 harness: candidate vs reference GEMM on the MiniMax H3 linears, JSON report\n"
    "  explain          find the reduction contract that reproduces a reference output bit for bit\n"
    "  quantize         bf16 -> NVFP4 with a ComfyUI recipe (comfy-cuda, comfy-eager-cuda, comfy-eager-cpu)\n"
    "  inspect          the layers of a ComfyUI checkpoint (.safetensors): format, shape, global scales, bytes\n"
    "  quantize-checkpoint  bf16 Linear weights of a .safetensors -> ComfyUI NVFP4 layers (comfy-cuda, bit-exact)\n"
    "  probe-cublaslt   the plan cuBLASLt picks for ComfyUI's NVFP4 call, and which contract it follows\n"
    "  bench            timings of the GPU kernels against cuBLAS bf16 in the same process\n"
    "  version          library version, CUDA runtime and driver, GPUs found\n"
    "\n"
    "exit codes: 0 success, 1 bits differ, 2 bad arguments or input (a malformed file too), 3 unsupported here,\n"
    "            4 I/O (a file that cannot be opened, read or written) or CUDA failure\n";
}

namespace nvfp4::cli {

int run(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  // Checked before any command runs: a limit the user set but mistyped must not go unnoticed.
  if (Status st = check_memory_limit_env(); !st.is_ok()) return fail(cmd, st);
  if (cmd == "version" || cmd == "--version") return cmd_version(argc, argv);
  if (cmd == "quantize") return cmd_quantize(argc, argv);
  if (cmd == "validate") return cmd_validate(argc, argv);
  if (cmd == "explain") return cmd_explain(argc, argv);
  if (cmd == "probe-cublaslt") return cmd_probe_cublaslt(argc, argv);
  if (cmd == "bench") return cmd_bench(argc, argv);
  if (cmd == "inspect") return cmd_inspect(argc, argv);
  if (cmd == "quantize-checkpoint") return cmd_quantize_checkpoint(argc, argv);
  std::fprintf(stderr, "nvfp4: error: unknown command '%s' (see nvfp4 --help)\n", cmd.c_str());
  return 2;
}

}  // namespace nvfp4::cli
