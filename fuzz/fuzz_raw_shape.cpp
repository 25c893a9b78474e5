// Raw bf16 arrays with --shape (what `nvfp4 quantize --input x.bin --shape R,C` does): the first
// line is the --shape text, the rest the file. Accepted inputs are quantized and dequantized with
// every recipe, so arbitrary bf16 bit patterns (NaN, Inf, subnormals) go through the quantizer.
#include <cstring>
#include <string_view>

#include "fuzz_check.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"

using namespace nvfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return 0;
  auto dims = parse_dims(in.substr(0, nl), "--shape", 2);
  if (!dims.is_ok()) return 0;
  const size_t raw = size - nl - 1;
  if (!check_raw_size(raw, dims.value(), 2, "fuzz.bin").is_ok()) return 0;
  const int64_t rows = (*dims)[0], cols = (*dims)[1];
  FUZZ_CHECK(rows >= 1 && cols >= 1 && static_cast<uint64_t>(rows * cols * 2) == raw);
  std::vector<uint16_t> x(static_cast<size_t>(rows * cols));
  std::memcpy(x.data(), data + nl + 1, raw);
  const float s = global_scale_dynamic(x.data(), rows * cols);
  for (Recipe r : {Recipe::kComfyCuda, Recipe::kComfyEagerCuda, Recipe::kComfyEagerCpu}) {
    QuantizeOptions o;
    o.recipe = r;
    o.pad = true;
    o.threads = 1;
    o.scale_layout = (raw & 2) ? ScaleLayout::kLinear : ScaleLayout::kSwizzled128x4;
    auto t = quantize(x.data(), rows, cols, s, o);
    if (!t.is_ok()) continue;
    FUZZ_CHECK(t->check().is_ok());
    const auto back = dequantize(t.value(), r == Recipe::kComfyCuda ? DequantRecipe::kComfyCuda : DequantRecipe::kComfyEager);
    FUZZ_CHECK(static_cast<int64_t>(back.size()) == t->geom.rows16 * t->geom.cols16);
  }
  return 0;
}
