// The nvfp4 subcommands; each returns the process exit code.
#pragma once

#include "nvfp4/io.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4::cli {
// The whole command line (argv[0] is the program name, argv[1] the command): what `nvfp4` runs,
// and what `python -m nvfp4_exact` runs.
int run(int argc, char** argv);

int cmd_version(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_probe_cublaslt(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_quantize_checkpoint(int argc, char** argv);

// The work of `validate` and `explain` without the printing, for the Python binding: the same
// options, the same reports (argv as for the commands, argv[1] being the command name).
Result<ValidateReport> validate_from_args(int argc, char** argv);
Result<Json> explain_from_args(int argc, char** argv);
}  // namespace nvfp4::cli
