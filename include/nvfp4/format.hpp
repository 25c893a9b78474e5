// NVFP4 formats: E2M1 codes, UE4M3 block scales, bf16, nibble orders, scale layouts.
// Every rule here implements docs/numerics.md §1 (formats) unless a comment names another section.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "nvfp4/error.hpp"

namespace nvfp4 {

// ---------------------------------------------------------------------------------------------
// Bit casts and small helpers
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
constexpr int64_t roundup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
constexpr int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// ---------------------------------------------------------------------------------------------
// E2M1 (spec §1 "E2M1"): codes 0-7 = 0, .5, 1, 1.5, 2, 3, 4, 6; 8-15 negatives (0x8 = -0).
constexpr float kE2M1Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
// Twice the value: an exact small integer, what the integer GEMM paths multiply.
constexpr int8_t kE2M1Twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

inline float e2m1_decode(uint8_t code) { return kE2M1Values[code & 0xF]; }

// e2m1_rn_sat (spec §1 "Rounding to E2M1"): RN-even on the code grid, saturate to ±6, keep the
// sign (-0 and tiny negatives give 0x8). NaN gives +6 (0x7), the comfy-cuda kernel's answer (§2.1).
inline uint8_t e2m1_rn_sat(float v) {
  if (std::isnan(v)) return 0x7;
  const uint8_t sign = std::signbit(v) ? 0x8 : 0x0;
  const float a = std::fabs(v);
  uint8_t c;
  if (a <= 0.25f) c = 0;
  else if (a < 0.75f) c = 1;
  else if (a <= 1.25f) c = 2;
  else if (a < 1.75f) c = 3;
  else if (a <= 2.5f) c = 4;
  else if (a < 3.5f) c = 5;
  else if (a <= 5.0f) c = 6;
  else c = 7;
  return sign | c;
}

// ---------------------------------------------------------------------------------------------
// E4M3 / UE4M3 (spec §1): bias 7, max 448, subnormals m/8 * 2^-6, 0x7F/0xFF NaN.
inline float e4m3_decode(uint8_t b) {
  const uint32_t e = (b >> 3) & 0xF, m = b & 7;
  if (e == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
  // Subnormals m * 2^-9 (an exact product); normals straight from the fields.
  const float mag = e == 0 ? static_cast<float>(m) * 0x1p-9f : f32_from_bits(((e + 120) << 23) | (m << 20));
  return (b & 0x80) ? -mag : mag;
}
// UE4M3: the sign bit is ignored.
inline float ue4m3_decode(uint8_t b) { return e4m3_decode(b & 0x7F); }
inline bool ue4m3_is_nan(uint8_t b) { return (b & 0x7F) == 0x7F; }

// e4m3_rn_sat: RN-even, saturating finite values to ±448, NaN -> 0x7F
// (cvt.rn.satfinite.e4m3x2.f32 semantics; spec §1 "Rounding to E4M3").
uint8_t e4m3_rn_sat(float v);
// e4m3_rn_nosat: RN-even, out-of-range -> NaN (0x7F | sign): PyTorch's float8_e4m3fn cast (§2.2).
uint8_t e4m3_rn_nosat(float v);

// ---------------------------------------------------------------------------------------------
// bf16: raw 16-bit patterns.
inline float bf16_to_f32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }
// bf16_rn: RN-even; NaN stays NaN (quiet bit forced), Inf stays Inf.
inline uint16_t bf16_rn(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// ---------------------------------------------------------------------------------------------
// Nibble order (spec §1 "Nibble order").
enum class NibbleOrder : uint8_t {
  kLoFirst,  // element 2j in bits 3:0 (PTX, cuBLAS, CUTLASS, PyTorch float4_e2m1fn_x2)
  kHiFirst,  // element 2j in bits 7:4 (ComfyUI / comfy-kitchen)
};
const char* to_string(NibbleOrder o);
Result<NibbleOrder> parse_nibble_order(std::string_view s);

constexpr uint8_t swap_nibbles(uint8_t b) { return static_cast<uint8_t>((b << 4) | (b >> 4)); }
inline uint8_t nibble_get(const uint8_t* row, int64_t k, NibbleOrder o) {
  const uint8_t b = row[k >> 1];
  const bool high = ((k & 1) == 0) == (o == NibbleOrder::kHiFirst);
  return high ? (b >> 4) : (b & 0xF);
}
inline uint8_t pack_pair(uint8_t even, uint8_t odd, NibbleOrder o) {
  return o == NibbleOrder::kHiFirst ? static_cast<uint8_t>((even << 4) | (odd & 0xF))
                                    : static_cast<uint8_t>((odd << 4) | (even & 0xF));
}
void convert_nibble_order(uint8_t* bytes, int64_t n);  // in place, either direction

// ---------------------------------------------------------------------------------------------
// Scale layouts (spec §1 "Block-scale layout").
enum class ScaleLayout : uint8_t {
  kSwizzled128x4,  // cuBLASLt VEC16_UE4M3 / comfy to_blocked / CUTLASS Sm1xxBlockScaledConfig
  kLinear,         // [R16][C16/16], row-major
};
const char* to_string(ScaleLayout l);
Result<ScaleLayout> parse_scale_layout(std::string_view s);

// Padded geometry of one NVFP4 matrix of logical shape [rows][cols].
struct Geometry {
  int64_t rows = 0, cols = 0;  // logical
  int64_t rows16 = 0, cols16 = 0;  // data padding (spec §1 "Tensor shapes")
  int64_t sf_cols = 0;          // cols16 / 16: logical scale columns
  int64_t sf_rows_pad = 0;      // roundup(rows16, 128)
  int64_t sf_cols_pad = 0;      // roundup(cols16/16, 4)
  static Geometry of(int64_t rows, int64_t cols);
  int64_t data_bytes() const { return rows16 * cols16 / 2; }
  int64_t row_bytes() const { return cols16 / 2; }
  int64_t scale_bytes(ScaleLayout l) const {
    return l == ScaleLayout::kSwizzled128x4 ? sf_rows_pad * sf_cols_pad : rows16 * sf_cols;
  }
};

// Byte offset of logical scale (r, c) in the swizzled buffer whose padded scale width is cp.
constexpr int64_t swizzled_offset(int64_t r, int64_t c, int64_t cp) {
  return ((r / 128) * (cp / 4) + (c / 4)) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}
inline int64_t scale_offset(const Geometry& g, ScaleLayout l, int64_t r, int64_t c) {
  return l == ScaleLayout::kSwizzled128x4 ? swizzled_offset(r, c, g.sf_cols_pad) : r * g.sf_cols + c;
}
// Layout conversion; the swizzled side always has zero bytes outside the logical scales.
std::vector<uint8_t> scales_to_linear(const Geometry& g, const uint8_t* swizzled);
std::vector<uint8_t> scales_to_swizzled(const Geometry& g, const uint8_t* linear);

// ---------------------------------------------------------------------------------------------
// An NVFP4 matrix: packed codes, block scales, global decode scale, and how its bytes are laid out.
struct Tensor {
  Geometry geom;
  NibbleOrder nibbles = NibbleOrder::kHiFirst;
  ScaleLayout scale_layout = ScaleLayout::kSwizzled128x4;
  float global_scale = 1.0f;     // decode scale s: value = e2m1 * ue4m3 * s
  std::vector<uint8_t> data;     // [rows16][cols16/2] u8, `nibbles` order, zero padded
  std::vector<uint8_t> scales;   // `scale_layout`, zero outside the logical [rows16][cols16/16]

  // Builds a tensor and checks every size and the global scale; a clear error otherwise.
  static Result<Tensor> make(int64_t rows, int64_t cols, NibbleOrder o, ScaleLayout l,
                             float global_scale, std::vector<uint8_t> data,
                             std::vector<uint8_t> scales);
  Status check() const;
  uint8_t code(int64_t r, int64_t k) const { return nibble_get(&data[r * geom.row_bytes()], k, nibbles); }
  uint8_t scale(int64_t r, int64_t c) const { return scales[scale_offset(geom, scale_layout, r, c)]; }
  // Same values, other byte conventions.
  Tensor with(NibbleOrder o, ScaleLayout l) const;
};

}  // namespace nvfp4
