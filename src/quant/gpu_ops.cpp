// CPU emulations of the GPU arithmetic the comfy-cuda recipe runs (docs/numerics.md §2.1 "Notation"
// and "rcp.approx off the GPU").
#include <cmath>
#include <cstring>

#include "common/gpu_arith.hpp"
#include "nvfp4/quant.hpp"

extern "C" const uint8_t nvfp4_rcp_table_begin[];
extern "C" const uint8_t nvfp4_rcp_table_end[];

namespace nvfp4 {

const uint8_t* rcp_table_bytes() { return nvfp4_rcp_table_begin; }
int64_t rcp_table_size() { return nvfp4_rcp_table_end - nvfp4_rcp_table_begin; }

namespace {
inline bool table_bit(uint32_t m) {
  return (nvfp4_rcp_table_begin[m >> 3] >> (m & 7)) & 1u;  // little-endian words == byte order
}
}  // namespace

float fmul_ftz(float a, float b) { return f32_from_bits(detail::fmul_ftz_bits(f32_bits(a), f32_bits(b))); }

float rcp_approx_ftz(float x) {
  const uint32_t u = f32_bits(x);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t biased = (u >> 23) & 0xFF;
  if (biased == 0xFF) return (u & 0x7FFFFF) ? f32_from_bits(0x7FFFFFFFu) : f32_from_bits(sign);  // NaN; ±Inf -> ±0
  if (biased == 0) return f32_from_bits(sign | 0x7F800000u);  // ±0 and flushed subnormals -> ±Inf
  const uint32_t m = u & 0x7FFFFF;
  uint32_t r = f32_bits(1.0f / f32_from_bits(0x3F800000u | m));  // rn: IEEE division, in (0.5, 1]
  if (table_bit(m)) {
    // The hardware returned RN's other neighbour: the float on the other side of the exact 1/1.m.
    // Exact side test: (1.m * 2^23) * (r * 2^24) against 2^47, in integers (r in [0.5, 1)).
    const uint64_t a = 0x800000u | m, rb = 0x800000u | (r & 0x7FFFFF);
    r += a * rb > (uint64_t{1} << 47) ? -1 : 1;  // one ulp towards the exact value
  }
  // Scale by 2^-e exactly: exponent field arithmetic. A result below 2^-126 is flushed (ftz).
  const int e = static_cast<int>((r >> 23) & 0xFF) + 127 - static_cast<int>(biased);
  if (e <= 0) return f32_from_bits(sign);
  return f32_from_bits(sign | (static_cast<uint32_t>(e) << 23) | (r & 0x7FFFFF));
}

}  // namespace nvfp4
