// mul.ftz.f32 on fp32 bit patterns, branch-free: the one CPU emulation of the GPU multiply the
// comfy-cuda recipe runs (docs/numerics.md §2.1 "Notation"). Subnormal inputs and results become a
// zero of their sign; any NaN result is the GPU's positive canonical NaN 0x7FFFFFFF.
#pragma once
#include <cstdint>

#include "nvfp4/format.hpp"

namespace nvfp4::detail {

inline uint32_t ftz_bits(uint32_t b) { return b & ((b & 0x7F800000u) ? 0xFFFFFFFFu : 0x80000000u); }

inline uint32_t fmul_ftz_bits(uint32_t ab, uint32_t bb) {
  const uint32_t r = ftz_bits(f32_bits(f32_from_bits(ftz_bits(ab)) * f32_from_bits(ftz_bits(bb))));
  return (r & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : r;
}

}  // namespace nvfp4::detail
