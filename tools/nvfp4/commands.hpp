// The nvfp4 subcommands; each returns the process exit code.
#pragma once

namespace nvfp4::cli {
int cmd_version(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_probe_cublaslt(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_quantize_checkpoint(int argc, char** argv);
}  // namespace nvfp4::cli
