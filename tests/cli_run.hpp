// Runs the nvfp4 tool as a user would (stdout and stderr together) for the CLI tests.
#pragma once
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#ifndef NVFP4_CLI
#error "NVFP4_CLI must name the nvfp4 executable"
#endif

struct Run {
  int code;
  std::string out;
};

// prefix: what goes before the binary on the shell line (a ulimit, environment variables).
inline Run run(const std::string& args, const std::string& prefix = "") {
  const std::string cmd = prefix + std::string(NVFP4_CLI) + " " + args + " 2>&1";
  Run r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// A path in a per-suite scratch directory under the system's temporary directory.
inline std::string scratch(const std::string& suite, const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / suite;
  std::filesystem::create_directories(d);
  return (d / name).string();
}
