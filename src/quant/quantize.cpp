// Driver shared by every recipe: argument checks, zero padding to 16, block loop over rows on all
// cores, nibble packing and scale placement (docs/numerics.md §1 "Tensor shapes", §2).
#include <cmath>
#include <cstdio>
#include <cstring>

#include "../common/cpu_features.hpp"
#include "../common/parallel.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"
#include "recipes.hpp"

namespace nvfp4 {

const char* to_string(Recipe r) {
  switch (r) {
    case Recipe::kComfyCuda: return "comfy-cuda";
    case Recipe::kComfyEagerCuda: return "comfy-eager-cuda";
    case Recipe::kComfyEagerCpu: return "comfy-eager-cpu";
  }
  return "?";
}

Result<Recipe> parse_recipe(std::string_view s) {
  if (s == "comfy-cuda" || s == "cuda") return Recipe::kComfyCuda;
  if (s == "comfy-eager-cuda" || s == "eager-cuda") return Recipe::kComfyEagerCuda;
  if (s == "comfy-eager-cpu" || s == "eager-cpu" || s == "comfy-eager") return Recipe::kComfyEagerCpu;
  return invalid_argument("unknown recipe '" + std::string(s) +
                          "' (expected comfy-cuda, comfy-eager-cuda or comfy-eager-cpu)");
}

Result<Tensor> quantize(const uint16_t* x, int64_t rows, int64_t cols, float global_scale,
                        const QuantizeOptions& opt) {
  // The shape first: an empty array (a (0, 32) .npy) has no data pointer, and its zero dimension is
  // what the caller needs to hear about.
  NVFP4_TRY(check_dim(rows, "quantize: rows"));
  NVFP4_TRY(check_dim(cols, "quantize: cols"));
  if (x == nullptr) return invalid_argument("quantize: input pointer is null");
  NVFP4_TRY(check_gemm_problem(rows, 1, cols, 1, "quantize"));
  if (!opt.pad && (rows % 16 != 0 || cols % 16 != 0))
    return invalid_argument("quantize: shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                            "] is not a multiple of 16; ask for padding (--pad) to zero-fill to 16");
  // s = 0 is legal: it is what an all-zero tensor's dynamic scale is, and the recipes define it.
  if (!std::isfinite(global_scale) || global_scale < 0.0f)
    return invalid_argument("quantize: global scale must be finite and >= 0, got " + std::to_string(global_scale));

  Tensor t;
  t.geom = Geometry::of(rows, cols);
  t.nibbles = opt.nibbles;
  t.scale_layout = opt.scale_layout;
  t.global_scale = global_scale;
  const Geometry& g = t.geom;
  t.data.assign(static_cast<size_t>(g.data_bytes()), 0);
  t.scales.assign(static_cast<size_t>(g.scale_bytes(opt.scale_layout)), 0);

  const float rcp_s = rcp_approx_ftz(global_scale);
  const Recipe recipe = opt.recipe;
#if defined(__x86_64__)
  const bool avx2 = detail::cpu_has_avx2();
#endif
  detail::parallel_for(g.rows16, 8, opt.threads, [&](int64_t r0, int64_t r1, int) {
    uint16_t blk[detail::kBlock];
    uint8_t codes[detail::kBlock];
    for (int64_t r = r0; r < r1; ++r) {
      uint8_t* out_row = &t.data[r * g.row_bytes()];
      for (int64_t c = 0; c < g.sf_cols; ++c) {
        const int64_t k0 = c * detail::kBlock;
        const uint16_t* src;
        if (r < rows && k0 + detail::kBlock <= cols) {
          src = x + r * cols + k0;
        } else {  // padded edge: zeros, exactly what F.pad feeds the reference
          std::memset(blk, 0, sizeof(blk));
          if (r < rows)
            for (int64_t k = k0; k < std::min(cols, k0 + detail::kBlock); ++k) blk[k - k0] = x[r * cols + k];
          src = blk;
        }
        uint8_t sf;
        if (recipe == Recipe::kComfyCuda) {
#if defined(__x86_64__)
          if (avx2) detail::comfy_cuda_block_avx2(src, global_scale, rcp_s, codes, &sf);
          else
#endif
            detail::comfy_cuda_block(src, global_scale, rcp_s, codes, &sf);
        }
        else detail::comfy_eager_block(src, global_scale, recipe == Recipe::kComfyEagerCuda, codes, &sf);
        for (int i = 0; i < detail::kBlock; i += 2)
          out_row[(k0 + i) / 2] = pack_pair(codes[i], codes[i + 1], opt.nibbles);
        t.scales[scale_offset(g, opt.scale_layout, r, c)] = sf;
      }
    }
  });
  return t;
}

uint16_t amax_bf16(const uint16_t* x, int64_t n) {
  uint16_t best = 0;  // |x| compared as sign-cleared patterns: monotone for non-NaN bf16
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t a = x[i] & 0x7FFF;
    if (a > 0x7F80) continue;  // NaN skipped
    best = a > best ? a : best;
  }
  return best;
}

float global_scale_dynamic(const uint16_t* x, int64_t n) {
  // §2.4: torch.amax(|x|) / 2688.0 evaluated in bf16, then cast to fp32.
  const float amax = bf16_to_f32(amax_bf16(x, n));
  return bf16_to_f32(bf16_rn(amax * (1.0f / 2688.0f)));
}

float global_scale_f32(const uint16_t* x, int64_t n) {
  return bf16_to_f32(amax_bf16(x, n)) / 2688.0f;
}

Result<float> finite_alpha(float s_x, float s_w, const char* x_name, const char* w_name) {
  const float alpha = s_x * s_w;  // f32_rn
  if (std::isfinite(alpha)) return alpha;
  char why[200];
  std::snprintf(why, sizeof why, "alpha = f32(%s * %s) must be finite, got %g (%.9g * %.9g)", x_name, w_name,
                static_cast<double>(alpha), static_cast<double>(s_x), static_cast<double>(s_w));
  return invalid_argument(why);
}

Result<DequantRecipe> parse_dequant_recipe(std::string_view s) {
  if (s == "comfy-cuda" || s == "cuda") return DequantRecipe::kComfyCuda;
  if (s == "comfy-eager" || s == "eager" || s == "comfy-eager-cuda" || s == "comfy-eager-cpu")
    return DequantRecipe::kComfyEager;
  return invalid_argument("unknown dequantization recipe '" + std::string(s) + "' (expected comfy-cuda or comfy-eager)");
}

std::vector<uint16_t> dequantize(const Tensor& t, DequantRecipe r) {
  const Geometry& g = t.geom;
  std::vector<uint16_t> out(static_cast<size_t>(g.rows16 * g.cols16));
  const float s = t.global_scale;
  const float s_bf16 = bf16_to_f32(bf16_rn(s));
  detail::parallel_for(g.rows16, 16, 0, [&](int64_t r0, int64_t r1, int) {
    for (int64_t row = r0; row < r1; ++row)
      for (int64_t c = 0; c < g.sf_cols; ++c) {
        const float sf = ue4m3_decode(t.scale(row, c));
        // comfy-cuda: one fp32 decode scale; comfy-eager: everything rounded to bf16 on the way.
        const float total = r == DequantRecipe::kComfyCuda ? fmul_ftz(s, sf) : bf16_to_f32(bf16_rn(s_bf16 * sf));
        for (int64_t k = c * 16; k < c * 16 + 16; ++k) {
          const float v = e2m1_decode(t.code(row, k));
          out[row * g.cols16 + k] = bf16_rn(r == DequantRecipe::kComfyCuda ? fmul_ftz(total, v) : v * total);
        }
      }
  });
  return out;
}

}  // namespace nvfp4
