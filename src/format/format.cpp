// Formats: E4M3 rounding, nibble orders, scale layouts, the Tensor type (docs/numerics.md §1).
#include "nvfp4/format.hpp"
#include "nvfp4/limits.hpp"

#include <cmath>

namespace nvfp4 {

const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kIo: return "io error";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kCuda: return "cuda error";
    case ErrorCode::kMismatch: return "mismatch";
    case ErrorCode::kInternal: return "internal error";
  }
  return "?";
}

namespace {
// RN-even of |v| onto the E4M3 magnitude grid; returns 0..126 for finite results, 127 when the
// rounded value is past 448 (the NaN encoding), so callers choose saturation or NaN.
uint8_t e4m3_rn_magnitude(double a) {
  if (a < std::ldexp(1.0, -6)) {
    // Subnormal grid m * 2^-9; q = 8 rounds up into the first normal (code 0x08), as it should.
    return static_cast<uint8_t>(std::nearbyint(std::ldexp(a, 9)));
  }
  int e = 0;
  std::frexp(a, &e);        // a = f * 2^e, f in [0.5, 1)
  int exp = e - 1;          // a = 1.x * 2^exp
  if (exp > 8) return 127;
  double q = std::nearbyint(std::ldexp(a, 3 - exp));  // in [8, 16]
  if (q == 16.0) { q = 8.0; ++exp; }
  if (exp > 8) return 127;
  const int code = ((exp + 7) << 3) | (static_cast<int>(q) - 8);
  return code >= 0x7F ? 127 : static_cast<uint8_t>(code);
}
}  // namespace

uint8_t e4m3_rn_sat(float v) {
  // Bit arithmetic (the quantizers call this once per block): RN-even by adding 2^19 - 1 plus the
  // kept LSB below the 3 kept mantissa bits; subnormals by rint(|v| * 2^9) with a magic add.
  const uint32_t b = f32_bits(v), sign = (b >> 24) & 0x80u, a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;                        // NaN
  if (a >= 0x43E00000u) return static_cast<uint8_t>(sign | 0x7E);  // >= 448 (464 ties to 448): sat
  if (a < 0x3C800000u) {                                   // < 2^-6: subnormal grid m * 2^-9
    const float q = f32_from_bits(a) * 512.0f + 8388608.0f;  // |v| * 2^9 exact; one rounding, RN-even
    return static_cast<uint8_t>(sign | (f32_bits(q) - 0x4B000000u));  // 8 lands on the first normal
  }
  const uint32_t r = a + 0x7FFFFu + ((a >> 20) & 1u);
  return static_cast<uint8_t>(sign | ((r >> 20) - (120u << 3)));
}

uint8_t e4m3_rn_nosat(float v) {
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  if (std::isnan(v)) return sign | 0x7F;
  return sign | e4m3_rn_magnitude(std::fabs(static_cast<double>(v)));  // past 448 -> NaN (0x7F)
}

const char* to_string(NibbleOrder o) { return o == NibbleOrder::kHiFirst ? "hi_first" : "lo_first"; }
Result<NibbleOrder> parse_nibble_order(std::string_view s) {
  if (s == "hi_first" || s == "comfy") return NibbleOrder::kHiFirst;
  if (s == "lo_first" || s == "ptx" || s == "cutlass") return NibbleOrder::kLoFirst;
  return invalid_argument("unknown nibble order '" + std::string(s) + "' (expected hi_first or lo_first)");
}
void convert_nibble_order(uint8_t* bytes, int64_t n) {
  for (int64_t i = 0; i < n; ++i) bytes[i] = swap_nibbles(bytes[i]);
}

const char* to_string(ScaleLayout l) { return l == ScaleLayout::kSwizzled128x4 ? "swizzled128x4" : "linear"; }
Result<ScaleLayout> parse_scale_layout(std::string_view s) {
  if (s == "swizzled128x4" || s == "swizzled" || s == "128x4") return ScaleLayout::kSwizzled128x4;
  if (s == "linear") return ScaleLayout::kLinear;
  return invalid_argument("unknown scale layout '" + std::string(s) + "' (expected swizzled128x4 or linear)");
}

Geometry Geometry::of(int64_t rows, int64_t cols) {
  Geometry g;
  g.rows = rows;
  g.cols = cols;
  g.rows16 = roundup(rows, 16);
  g.cols16 = roundup(cols, 16);
  g.sf_cols = g.cols16 / 16;
  g.sf_rows_pad = roundup(g.rows16, 128);
  g.sf_cols_pad = roundup(g.sf_cols, 4);
  return g;
}

std::vector<uint8_t> scales_to_linear(const Geometry& g, const uint8_t* swizzled) {
  std::vector<uint8_t> out(static_cast<size_t>(g.rows16 * g.sf_cols));
  for (int64_t r = 0; r < g.rows16; ++r)
    for (int64_t c = 0; c < g.sf_cols; ++c)
      out[r * g.sf_cols + c] = swizzled[swizzled_offset(r, c, g.sf_cols_pad)];
  return out;
}

std::vector<uint8_t> scales_to_swizzled(const Geometry& g, const uint8_t* linear) {
  std::vector<uint8_t> out(static_cast<size_t>(g.sf_rows_pad * g.sf_cols_pad), 0);
  for (int64_t r = 0; r < g.rows16; ++r)
    for (int64_t c = 0; c < g.sf_cols; ++c)
      out[swizzled_offset(r, c, g.sf_cols_pad)] = linear[r * g.sf_cols + c];
  return out;
}

Status Tensor::check() const {
  const Geometry& g = geom;
  if (g.rows <= 0 || g.cols <= 0)
    return invalid_argument("tensor shape [" + std::to_string(g.rows) + ", " + std::to_string(g.cols) +
                            "] must be positive");
  NVFP4_TRY(check_dim(g.rows, "tensor rows"));
  NVFP4_TRY(check_dim(g.cols, "tensor cols"));
  if (g.rows16 != roundup(g.rows, 16) || g.cols16 != roundup(g.cols, 16))
    return invalid_argument("tensor geometry is inconsistent with its logical shape");
  if (static_cast<int64_t>(data.size()) != g.data_bytes())
    return invalid_argument("packed data has " + std::to_string(data.size()) + " bytes, shape [" +
                            std::to_string(g.rows) + ", " + std::to_string(g.cols) + "] needs " +
                            std::to_string(g.data_bytes()) + " ([rows16][cols16/2])");
  if (static_cast<int64_t>(scales.size()) != g.scale_bytes(scale_layout))
    return invalid_argument("block scales have " + std::to_string(scales.size()) + " bytes, " +
                            to_string(scale_layout) + " layout for shape [" + std::to_string(g.rows) +
                            ", " + std::to_string(g.cols) + "] needs " +
                            std::to_string(g.scale_bytes(scale_layout)));
  if (!std::isfinite(global_scale))
    return invalid_argument("global scale must be finite, got " + std::to_string(global_scale));
  return Status::ok();
}

Result<Tensor> Tensor::make(int64_t rows, int64_t cols, NibbleOrder o, ScaleLayout l, float global_scale,
                            std::vector<uint8_t> data, std::vector<uint8_t> scales) {
  Tensor t;
  t.geom = Geometry::of(rows, cols);
  t.nibbles = o;
  t.scale_layout = l;
  t.global_scale = global_scale;
  t.data = std::move(data);
  t.scales = std::move(scales);
  NVFP4_TRY(t.check());
  return t;
}

Tensor Tensor::with(NibbleOrder o, ScaleLayout l) const {
  Tensor t = *this;
  if (o != nibbles) {
    convert_nibble_order(t.data.data(), static_cast<int64_t>(t.data.size()));
    t.nibbles = o;
  }
  if (l != scale_layout) {
    t.scales = l == ScaleLayout::kLinear ? scales_to_linear(geom, scales.data())
                                         : scales_to_swizzled(geom, scales.data());
    t.scale_layout = l;
  }
  return t;
}

}  // namespace nvfp4
