// How often the exact Hopper fast path (docs/hopper-exact-path.md) would apply on the MiniMax H3
// linears with the synthetic inputs `nvfp4 validate` uses, and a bit-for-bit check of the path
// against the §3 model wherever it applies. Usage: nvfp4_fastpath_stats [--outputs N] [--out FILE]
#include <cstdio>
#include <string>

#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

int main(int argc, char** argv) {
  int64_t outputs = 4096;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--outputs" && i + 1 < argc) outputs = std::stoll(argv[++i]);
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else {
      std::fprintf(stderr, "usage: nvfp4_fastpath_stats [--outputs N] [--out FILE]\n");
      return 2;
    }
  }
  Json j = Json::array();
  std::printf("%-14s %12s %9s %9s %9s %s\n", "linear", "steps", "tc_exact", "no_trunc", "fast", "fast_mismatches");
  int rc = 0;
  for (const auto& l : minimax_h3_linears()) {
    auto p = prepare_layer(l, 128, 1234, "");
    if (!p.is_ok()) {
      std::fprintf(stderr, "%s\n", p.status().message().c_str());
      return 4;
    }
    auto s = hopper_fastpath_stats(p->a, p->w, sample_coords(128, l.n, outputs, 5));
    if (!s.is_ok()) {
      std::fprintf(stderr, "%s\n", s.status().message().c_str());
      return 4;
    }
    const double n = static_cast<double>(s->steps);
    std::printf("%-14s %12lld %8.2f%% %8.2f%% %8.2f%% %lld\n", l.name.c_str(), static_cast<long long>(s->steps),
                100.0 * s->tc_exact / n, 100.0 * s->no_truncation / n, 100.0 * s->fast / n,
                static_cast<long long>(s->fast_mismatches));
    j.push(Json::object().set("linear", l.name).set("steps", s->steps).set("tc_exact", s->tc_exact)
               .set("no_truncation", s->no_truncation).set("fast", s->fast).set("fast_mismatches", s->fast_mismatches));
    if (s->fast_mismatches) rc = 1;
  }
  if (!out.empty()) write_text(out, j.dump() + "\n");
  return rc;
}
