// CPU benchmarks: the comfy-cuda quantizer's bf16 throughput and the GEMM oracle's multiply-adds
// per second, median of several runs after a warm-up. Prints one line each and a JSON report.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "nvfp4/io.hpp"
#include "nvfp4/model.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

namespace {
template <typename F>
double median_s(int runs, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  std::string out;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--quick") quick = true;
    else {
      std::fprintf(stderr, "usage: nvfp4_cpu_bench [--quick] [--out FILE]\n");
      return 2;
    }
  }
  Json j = Json::object();
  j.set("threads", static_cast<int64_t>(std::thread::hardware_concurrency()));
  // Quantizer: 16384 x 5376 bf16 (a long video activation), comfy-cuda, all cores.
  {
    const int64_t R = quick ? 2048 : 16384, C = 5376;
    const auto x = synthetic_activation(R, C, 3);
    const float s = global_scale_dynamic(x.data(), R * C);
    QuantizeOptions opt;
    const double sec = median_s(quick ? 3 : 5, [&] { auto t = quantize(x.data(), R, C, s, opt); });
    const double gbs = R * C * 2 / sec * 1e-9;
    std::printf("quantize comfy-cuda %lldx%lld bf16 | %.1f ms | %.2f GB/s of bf16 input\n", static_cast<long long>(R),
                static_cast<long long>(C), sec * 1e3, gbs);
    j.set("quantizer", Json::object().set("shape", Json::array().push(R).push(C)).set("seconds", sec).set("bf16_gb_per_s", gbs));
  }
  // Oracle: one MiniMax shape at M = 128, sequential K.
  {
    const LinearShape l = quick ? LinearShape{"attn_out_proj_1024", 1024, 7168} : minimax_h3_linears()[1];
    auto p = prepare_layer(l, 128, 1234, "");
    if (!p.is_ok()) {
      std::fprintf(stderr, "%s\n", p.status().message().c_str());
      return 4;
    }
    GemmSpec spec;
    spec.alpha = p->alpha;
    const double sec = median_s(3, [&] { auto r = gemm_oracle(p->a, p->w, spec); });
    const double macs = 128.0 * l.n * l.k;
    std::printf("oracle sequential %s 128x%lldx%lld | %.2f s | %.2f G multiply-adds/s\n", l.name.c_str(),
                static_cast<long long>(l.n), static_cast<long long>(l.k), sec, macs / sec * 1e-9);
    j.set("oracle", Json::object().set("linear", l.name).set("mnk", Json::array().push(128).push(l.n).push(l.k))
                        .set("seconds", sec).set("multiply_adds_per_s", macs / sec));
  }
  if (!out.empty()) {
    Status st = write_text(out, j.dump() + "\n");
    if (!st.is_ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 4;
    }
  }
  return 0;
}
