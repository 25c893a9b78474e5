// nvfp4: the command-line tool. `nvfp4 --help` lists the commands.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "commands.hpp"

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
    "  probe-cublaslt   the plan cuBLASLt picks for ComfyUI's NVFP4 call, and which contract it follows\n"
    "  bench            timings of the GPU kernels against cuBLAS bf16 in the same process\n"
    "  version          library version, CUDA runtime and driver, GPUs found\n"
    "\n"
    "exit codes: 0 success, 1 bits differ, 2 bad arguments or input, 3 unsupported here, 4 I/O or CUDA failure\n";


int run(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  using namespace nvfp4::cli;
  if (cmd == "version" || cmd == "--version") return cmd_version(argc, argv);
  if (cmd == "quantize") return cmd_quantize(argc, argv);
  if (cmd == "validate") return cmd_validate(argc, argv);
  if (cmd == "explain") return cmd_explain(argc, argv);
  if (cmd == "probe-cublaslt") return cmd_probe_cublaslt(argc, argv);
  if (cmd == "bench") return cmd_bench(argc, argv);
  std::fprintf(stderr, "nvfp4: error: unknown command '%s' (see nvfp4 --help)\n", cmd.c_str());
  return 2;
}
}  // namespace

// Errors are values everywhere below; this is the last line of defence, so that an allocation the
// size checks did not foresee still ends in one line and exit code 4, not an abort.
int main(int argc, char** argv) {
  const char* cmd = argc > 1 ? argv[1] : "";
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nvfp4 %s: error: out of memory\n", cmd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvfp4 %s: error: %s\n", cmd, e.what());
  } catch (...) {
    std::fprintf(stderr, "nvfp4 %s: error: unexpected failure\n", cmd);
  }
  return 4;
}
