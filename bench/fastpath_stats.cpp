// How often the exact Hopper fast path (docs/hopper-exact-path.md) applies on the MiniMax H3
// linears, per activation family, and a bit-for-bit check of it against the §3 model wherever it
// applies (plus the exactness premise on an emulated Hopper chain). Every token of an M-row
// activation against sampled weight rows.
// Weight rows are taken as blocks of --tile-rows consecutive rows spread over the layer; the tile
// test is evaluated on tiles of --tile-rows rows x --tile-tokens tokens, as the kernel tiles them.
// Usage: nvfp4_fastpath_stats [--tokens M] [--weight-rows N] [--tile-tokens T] [--tile-rows R]
//                             [--kind minimax|normal|outliers|all] [--out FILE]
#include <cstdio>
#include <string>

#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

int main(int argc, char** argv) {
  int64_t tokens = 128, wrows = 256, tile_tokens = 128, tile_rows = 16;
  std::string out, kinds = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tokens" && i + 1 < argc) tokens = std::stoll(argv[++i]);
    else if (a == "--weight-rows" && i + 1 < argc) wrows = std::stoll(argv[++i]);
    else if (a == "--tile-tokens" && i + 1 < argc) tile_tokens = std::stoll(argv[++i]);
    else if (a == "--tile-rows" && i + 1 < argc) tile_rows = std::stoll(argv[++i]);
    else if (a == "--kind" && i + 1 < argc) kinds = argv[++i];
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else {
      std::fprintf(stderr, "usage: nvfp4_fastpath_stats [--tokens M] [--weight-rows N] [--tile-tokens T] [--tile-rows R] "
                           "[--kind minimax|normal|outliers|all] [--out FILE]\n");
      return 2;
    }
  }
  std::vector<std::string> kind_list = kinds == "all" ? std::vector<std::string>{"outliers", "normal", "minimax"}
                                                      : std::vector<std::string>{kinds};
  Json j = Json::array();
  if (tile_rows <= 0 || wrows % tile_rows != 0 || tile_tokens <= 0) {
    std::fprintf(stderr, "--weight-rows must be a positive multiple of --tile-rows\n");
    return 2;
  }
  std::printf("%-14s %-9s %12s %9s %9s %9s %6s %6s\n", "linear", "acts", "steps", "element", "tile", "T_fp32", "fastx", "unsound");
  int rc = 0;
  for (const std::string& kname : kind_list) {
    auto kind = parse_activation_kind(kname);
    if (!kind.is_ok()) {
      std::fprintf(stderr, "%s\n", kind.status().message().c_str());
      return 2;
    }
    for (const auto& l : minimax_h3_linears()) {
      auto p = prepare_layer(l, tokens, 1234, "");
      if (!p.is_ok()) {
        std::fprintf(stderr, "%s\n", p.status().message().c_str());
        return 4;
      }
      Tensor a = p->a;
      if (kind.value() != ActivationKind::kMiniMax) {
        const auto x = synthetic_activation(tokens, l.k, 99, kind.value());
        auto q = quantize(x.data(), tokens, l.k, global_scale_dynamic(x.data(), x.size()), QuantizeOptions{});
        if (!q.is_ok()) return 4;
        a = q.value();
      }
      std::vector<int64_t> rows;
      const int64_t blocks = wrows / tile_rows;
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t r = 0; r < tile_rows; ++r) rows.push_back(b * (l.n / blocks) / tile_rows * tile_rows + r);
      auto s = hopper_fastpath_stats(a, p->w, rows, static_cast<int>(tile_tokens), static_cast<int>(tile_rows));
      if (!s.is_ok()) {
        std::fprintf(stderr, "%s\n", s.status().message().c_str());
        return 4;
      }
      const double n = static_cast<double>(s->steps), nt = static_cast<double>(s->tile_steps);
      std::printf("%-14s %-9s %12lld %8.4f%% %8.4f%% %8.4f%% %6lld %6lld\n", l.name.c_str(), kname.c_str(),
                  static_cast<long long>(s->steps), 100.0 * s->fast / n, 100.0 * s->tile_fast / nt,
                  100.0 * s->exact_sum_fp32 / n, static_cast<long long>(s->fast_mismatches + s->chain_mismatches),
                  static_cast<long long>(s->tile_unsound));
      j.push(Json::object().set("linear", l.name).set("activations", kname).set("tokens", tokens).set("weight_rows", wrows)
                 .set("tile_tokens", tile_tokens).set("tile_rows", tile_rows)
                 .set("steps", s->steps).set("fast", s->fast).set("tile_steps", s->tile_steps).set("tile_fast", s->tile_fast)
                 .set("exact_sum_fp32", s->exact_sum_fp32).set("fast_mismatches", s->fast_mismatches)
                 .set("chain_checked", s->chain_checked).set("chain_mismatches", s->chain_mismatches)
                 .set("tile_unsound", s->tile_unsound));
      if (s->fast_mismatches || s->chain_mismatches || s->tile_unsound) rc = 1;
    }
  }
  if (!out.empty()) write_text(out, j.dump() + "\n");
  return rc;
}
