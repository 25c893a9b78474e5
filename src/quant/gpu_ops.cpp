// CPU emulations of the GPU arithmetic the comfy-cuda recipe runs (NVFP4-SPEC.md §2.1 "Notation"
// and "rcp.approx off the GPU").
#include <cmath>
#include <cstring>

#include "nvfp4/quant.hpp"

extern "C" const uint8_t nvfp4_rcp_table_begin[];
extern "C" const uint8_t nvfp4_rcp_table_end[];

namespace nvfp4 {

const uint8_t* rcp_table_bytes() { return nvfp4_rcp_table_begin; }
int64_t rcp_table_size() { return nvfp4_rcp_table_end - nvfp4_rcp_table_begin; }

namespace {
constexpr float kMinNormal = 1.17549435e-38f;  // 2^-126
inline float ftz(float v) { return std::fabs(v) < kMinNormal ? std::copysign(0.0f, v) : v; }
inline bool table_bit(uint32_t m) {
  return (nvfp4_rcp_table_begin[m >> 3] >> (m & 7)) & 1u;  // little-endian words == byte order
}
}  // namespace

float fmul_ftz(float a, float b) { return ftz(ftz(a) * ftz(b)); }

float rcp_approx_ftz(float x) {
  const uint32_t u = f32_bits(x);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t biased = (u >> 23) & 0xFF;
  if (std::isnan(x)) return f32_from_bits(0x7FFFFFFFu);
  if (biased == 0) return f32_from_bits(sign | 0x7F800000u);  // ±0 and flushed subnormals -> ±Inf
  if (biased == 0xFF) return f32_from_bits(sign);                 // ±Inf -> ±0
  const uint32_t m = u & 0x7FFFFF;
  const float mant = f32_from_bits(0x3F800000u | m);  // 1.m in [1, 2)
  float r = 1.0f / mant;                              // rn: IEEE division, r in (0.5, 1]
  if (table_bit(m)) {
    // The hardware returned RN's other neighbour: the float on the other side of the exact 1/1.m.
    // Exact side test: compare (1.m * 2^23) * (r * 2^24) with 2^47 in integers.
    const uint64_t a = 0x800000u | m;
    const uint64_t b = static_cast<uint64_t>(std::ldexp(static_cast<double>(r), 24));
    const bool r_above = a * b > (uint64_t{1} << 47);
    r = std::nextafter(r, r_above ? 0.0f : 2.0f);
  }
  // Scale by 2^-e exactly; a result below 2^-126 is flushed (ftz).
  const float res = std::ldexp(r, 127 - static_cast<int>(biased));
  return f32_from_bits(f32_bits(ftz(res)) | sign);
}

}  // namespace nvfp4
