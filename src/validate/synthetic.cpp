// MiniMax H3 shapes and seeded synthetic tensors (docs/numerics.md §8).
#include <charconv>
#include <cmath>
#include <sstream>

#include "../common/parallel.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/validate.hpp"

namespace nvfp4 {

const std::vector<LinearShape>& minimax_h3_linears() {
  static const std::vector<LinearShape> kLinears = {
      {"attn_qkv_proj", 21504, 5376},
      {"attn_out_proj", 5376, 7168},
      {"mlp_fc1", 28672, 5376},
      {"mlp_fc2", 5376, 14336},
  };
  return kLinears;
}

Result<LinearShape> find_linear(const std::string& name) {
  static const std::pair<const char*, const char*> kAlias[] = {
      {"qkv", "attn_qkv_proj"}, {"out", "attn_out_proj"}, {"fc1", "mlp_fc1"}, {"fc2", "mlp_fc2"}};
  std::string full = name;
  for (auto [a, f] : kAlias)
    if (name == a) full = f;
  for (const auto& l : minimax_h3_linears())
    if (l.name == full) return l;
  return invalid_argument("unknown linear '" + printable(name) + "' (expected attn_qkv_proj, attn_out_proj, mlp_fc1, mlp_fc2 or qkv/out/fc1/fc2)");
}

Result<std::vector<LinearShape>> parse_shapes(const std::string& spec) {
  std::vector<LinearShape> out;
  std::stringstream ss(spec);
  std::string item;
  // A whole decimal integer, nothing before or after it ("12abc" is not 12).
  auto number = [](std::string_view t, int64_t& v) {
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    return r.ec == std::errc() && r.ptr == t.data() + t.size() && !t.empty();
  };
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto bad = [&] { return invalid_argument("bad shape '" + printable(item) + "' (expected NAME, NAME:N:K or NxK)"); };
    LinearShape l;
    const std::string_view it(item);
    const auto c1 = it.find(':');
    const auto x = it.find('x');
    if (c1 != std::string_view::npos) {
      const auto c2 = it.find(':', c1 + 1);
      if (c2 == std::string_view::npos || c1 == 0) return bad();
      l.name = item.substr(0, c1);
      if (!number(it.substr(c1 + 1, c2 - c1 - 1), l.n) || !number(it.substr(c2 + 1), l.k)) return bad();
    } else if (x != std::string_view::npos && std::isdigit(static_cast<unsigned char>(item[0]))) {
      if (!number(it.substr(0, x), l.n) || !number(it.substr(x + 1), l.k)) return bad();
      l.name = "n" + std::to_string(l.n) + "_k" + std::to_string(l.k);
    } else {
      NVFP4_ASSIGN_OR_RETURN(l, find_linear(item));
    }
    if (l.n <= 0 || l.k <= 0) return bad();
    NVFP4_TRY(check_dim(l.n, "N of shape '" + printable(item) + "'"));
    NVFP4_TRY(check_dim(l.k, "K of shape '" + printable(item) + "'"));
    out.push_back(l);
  }
  if (out.empty()) return invalid_argument("no shapes given");
  return out;
}

namespace {
inline uint64_t mix(uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// An approximately normal deviate from four 16-bit uniforms (Irwin-Hall), exact integer arithmetic
// and one fp32 multiply: the same bits on every machine and compiler.
inline float normalish(uint64_t r, float scale) {
  const int32_t sum = static_cast<int32_t>(r & 0xFFFF) + static_cast<int32_t>((r >> 16) & 0xFFFF) +
                      static_cast<int32_t>((r >> 32) & 0xFFFF) + static_cast<int32_t>(r >> 48) - 2 * 65535;
  return static_cast<float>(sum) * scale;  // sum has <= 19 bits: exact in fp32
}
constexpr float kUnitStd = 1.0f / 37837.22f;  // std of the centred sum of four U[0, 65535]

// Activations look like an MLP's inner activations (silu(gate) * up): the product of two normals
// (heavy tails), per-channel magnitudes spread over 2^-3..2^3, and ~1% outlier channels x32. The
// spread of block scales over many binades is what makes fp32 accumulation inexact and a shape's
// bits depend on the reduction order, as on real data; N(0,1) alone quantizes to sums that fp32
// holds exactly. Weights: N(0, 0.02) with per-row magnitudes over 2^-2..2^2.
std::vector<uint16_t> generate(int64_t rows, int64_t cols, uint64_t seed, float std_dev, bool activation) {
  std::vector<uint16_t> x(static_cast<size_t>(rows * cols));
  const float scale = kUnitStd * std_dev;
  detail::parallel_for(rows, 64, 0, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      uint64_t state = mix(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(r) + 1);
      const int row_exp = activation ? 0 : static_cast<int>(mix(seed ^ (0x3C3C3C3Cull + static_cast<uint64_t>(r))) % 5) - 2;
      for (int64_t c = 0; c < cols; ++c) {
        state += 0x9E3779B97F4A7C15ull;
        float v = normalish(mix(state), scale);
        if (activation) {
          const uint64_t ch = mix(seed ^ (0xA5A5A5A5ull + static_cast<uint64_t>(c)));
          state += 0x9E3779B97F4A7C15ull;
          v = v * normalish(mix(state), kUnitStd);                    // product of two normals, rn
          v = std::ldexp(v, static_cast<int>((ch >> 8) % 7) - 3);     // exact
          if (ch % 100 == 0) v *= 32.0f;                              // outlier channel
        } else {
          v = std::ldexp(v, row_exp);
        }
        x[r * cols + c] = bf16_rn(v);
      }
    }
  });
  return x;
}
}  // namespace

std::vector<uint16_t> synthetic_activation(int64_t rows, int64_t cols, uint64_t seed) {
  return generate(rows, cols, seed, 1.0f, true);
}

std::vector<uint16_t> synthetic_activation(int64_t rows, int64_t cols, uint64_t seed, ActivationKind kind) {
  if (kind == ActivationKind::kMiniMax) return synthetic_activation(rows, cols, seed);
  std::vector<uint16_t> x(static_cast<size_t>(rows * cols));
  detail::parallel_for(rows, 64, 0, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      uint64_t state = mix(seed * 0xD1B54A32D192ED03ull + static_cast<uint64_t>(r) + 7);
      for (int64_t c = 0; c < cols; ++c) {
        state += 0x9E3779B97F4A7C15ull;
        float v = normalish(mix(state), kUnitStd);
        if (kind == ActivationKind::kOutlierChannels) {
          state += 0x9E3779B97F4A7C15ull;
          v = v * (0.6f + 0.8f * std::fabs(normalish(mix(state), kUnitStd)));
          const uint64_t ch = mix(seed ^ (0x77AA77AAull + static_cast<uint64_t>(c)));
          if (ch % 700 == 0) v *= static_cast<float>(30 + (ch >> 20) % 31);
        }
        x[r * cols + c] = bf16_rn(v);
      }
    }
  });
  return x;
}

Result<ActivationKind> parse_activation_kind(const std::string& s) {
  if (s == "minimax") return ActivationKind::kMiniMax;
  if (s == "normal") return ActivationKind::kNormal;
  if (s == "outliers") return ActivationKind::kOutlierChannels;
  return invalid_argument("unknown activation kind '" + s + "' (expected minimax, normal or outliers)");
}
std::vector<uint16_t> synthetic_weight(int64_t rows, int64_t cols, uint64_t seed) {
  return generate(rows, cols, seed ^ 0x5757575757575757ull, 0.02f, false);
}

}  // namespace nvfp4
