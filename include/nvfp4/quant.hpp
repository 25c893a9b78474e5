// Quantization bit-identical to ComfyUI's (comfy-kitchen) recipes, and dequantization
// (docs/numerics.md §2).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/format.hpp"

namespace nvfp4 {

enum class Recipe : uint8_t {
  kComfyCuda,       // §2.1: the shipped CUDA kernel (fast-math: rcp.approx, ftz)
  kComfyEagerCuda,  // §2.2 on CUDA tensors: /6 as a multiply by fl32(1/6), canonical NaNs
  kComfyEagerCpu,   // §2.2 on CPU tensors: IEEE division
};
const char* to_string(Recipe r);
Result<Recipe> parse_recipe(std::string_view s);  // comfy-cuda | comfy-eager-cuda | comfy-eager-cpu

struct QuantizeOptions {
  Recipe recipe = Recipe::kComfyCuda;
  NibbleOrder nibbles = NibbleOrder::kHiFirst;
  ScaleLayout scale_layout = ScaleLayout::kSwizzled128x4;
  bool pad = false;  // pad rows and cols to 16 with zeros (comfy's pad_16x); else they must divide
  int threads = 0;   // 0 = all cores
};

// Quantizes bf16 x [rows][cols] (raw u16 patterns) with decode global scale s.
Result<Tensor> quantize(const uint16_t* x, int64_t rows, int64_t cols, float global_scale,
                        const QuantizeOptions& opt);

// Global scales (§2.4). amax over the whole [rows][cols] input; NaN elements are skipped.
uint16_t amax_bf16(const uint16_t* x, int64_t n);
float global_scale_dynamic(const uint16_t* x, int64_t n);  // f32(bf16_rn(f32(amax) * fl32(1/2688)))
float global_scale_f32(const uint16_t* x, int64_t n);      // f32(amax) / 2688 in fp32
// A linear's alpha = f32_rn(s_x * s_w) (§2.4), refused unless finite: two finite scales can overflow
// it, and a GEMM would apply it, every output Inf or NaN (which two sides would even compare equal).
// The message names the operands as x_name and w_name ("alpha = f32(input_scale * weight_scale_2)
// must be finite, got inf (a * b)"); callers put their context in front. Python uses the same words.
Result<float> finite_alpha(float s_x, float s_w, const char* x_name, const char* w_name);

enum class DequantRecipe : uint8_t {
  kComfyCuda,   // bf16_rn(fmul_ftz(fmul_ftz(s, sf), v))
  kComfyEager,  // bf16_rn(v * bf16_rn(bf16_rn(s) * sf))
};
Result<DequantRecipe> parse_dequant_recipe(std::string_view s);
// Returns bf16 [rows16][cols16].
std::vector<uint16_t> dequantize(const Tensor& t, DequantRecipe r);

// Exact CPU emulations of the GPU instructions the comfy-cuda recipe uses (§2.1).
float fmul_ftz(float a, float b);       // mul.ftz.f32 (RN, subnormals in and out flushed, canonical NaN)
float rcp_approx_ftz(float x);          // rcp.approx.ftz.f32, from the measured sm_90 table
const uint8_t* rcp_table_bytes();       // the 2^23-bit table (1 MiB) the emulation uses
int64_t rcp_table_size();

}  // namespace nvfp4
