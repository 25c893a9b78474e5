// nvfp4: the command-line tool. `nvfp4 --help` lists the commands.
#include "commands.hpp"

int main(int argc, char** argv) { return nvfp4::cli::run(argc, argv); }
