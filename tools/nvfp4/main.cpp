// nvfp4: the command-line tool. `nvfp4 --help` lists the commands.
#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"

// Errors are values everywhere below; this is the last line of defence, so that an allocation the
// size checks did not foresee still ends in one line and exit code 4, not an abort.
int main(int argc, char** argv) {
  const char* cmd = argc > 1 ? argv[1] : "";
  try {
    return nvfp4::cli::run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nvfp4 %s: error: out of memory\n", cmd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvfp4 %s: error: %s\n", cmd, e.what());
  } catch (...) {
    std::fprintf(stderr, "nvfp4 %s: error: unexpected failure\n", cmd);
  }
  return 4;
}
