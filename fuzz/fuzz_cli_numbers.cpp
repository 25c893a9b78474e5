// Numeric command-line options (tools/nvfp4/args.cpp): the input is an argv, NUL separated, parsed
// with the option set of `nvfp4 validate`/`explain`/`bench`; every numeric option is then read the
// way the commands read it (bounded integers, numbers, integer lists, dimensions).
#include <cmath>
#include <string>
#include <vector>

#include "args.hpp"
#include "fuzz_check.hpp"
#include "nvfp4/limits.hpp"

using namespace nvfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1, "nvfp4");
  words.emplace_back("validate");
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  words.push_back(cur);
  if (words.size() > 64) return 0;
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  auto a = cli::Args::parse(static_cast<int>(words.size()), argv.data(), 2, {"quiet", "json", "help", "pad"},
                            {"rows", "seed", "sample", "iters", "warmup", "global-scale", "splits", "grains", "shape"});
  if (!a.is_ok()) {
  FUZZ_CHECK(a.status().message().find('\n') == std::string::npos);  // one-line errors, whatever the input
    return 0;
  }
  for (const char* k : {"rows", "seed", "sample", "iters", "warmup"}) {
    auto v = a->get_int(k, -1, 1, kMaxDim);
    if (!v.is_ok()) FUZZ_CHECK(v.status().message().find('\n') == std::string::npos);
    if (v.is_ok() && !a->has(k)) FUZZ_CHECK(v.value() == -1);
    if (v.is_ok() && a->has(k)) FUZZ_CHECK(v.value() >= 1 && v.value() <= kMaxDim);
  }
  auto g = a->get_f32("global-scale", 0.5f);
  if (g.is_ok() && !a->has("global-scale")) FUZZ_CHECK(g.value() == 0.5f);
  if (g.is_ok()) FUZZ_CHECK(std::isfinite(g.value()));  // no inf, nan or overflow gets through
  if (!g.is_ok()) FUZZ_CHECK(g.status().message().find('\n') == std::string::npos);
  auto sp = cli::parse_int_list(a->get("splits", "2"), 2, 64, "--splits");
  if (!sp.is_ok()) FUZZ_CHECK(sp.status().message().find('\n') == std::string::npos);
  if (sp.is_ok())
    for (int v : sp.value()) FUZZ_CHECK(v >= 2 && v <= 64);
  auto gr = cli::parse_int_list(a->get("grains", "64"), 64, 1 << 20, "--grains");
  if (gr.is_ok()) FUZZ_CHECK(!gr->empty());
  auto d = parse_dims(a->get("shape", "1,1"), "--shape", 2);
  if (!d.is_ok()) FUZZ_CHECK(d.status().message().find('\n') == std::string::npos);
  if (d.is_ok()) FUZZ_CHECK(d->size() == 2 && (*d)[0] >= 1 && (*d)[1] >= 1);
  return 0;
}
