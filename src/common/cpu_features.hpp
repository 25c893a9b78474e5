// Which optional instruction sets the CPU we run on has (x86-64: AVX2 for the quantizer and the
// oracle's group sums; both have portable fallbacks that give the same bits).
#pragma once

namespace nvfp4::detail {

inline bool cpu_has_avx2() {
#if defined(__x86_64__)
  static const bool v = __builtin_cpu_supports("avx2");
  return v;
#else
  return false;
#endif
}

}  // namespace nvfp4::detail
