// Exact unsigned division by a run-time constant with one multiply-high and one shift
// (Granlund & Montgomery's round-up method), shared by the GPU quantizer's index math and the host
// test that checks it. Valid for dividends below 2^31 and divisors 1 .. 2^31-1.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define NVFP4_DIV_HD __host__ __device__ __forceinline__
#else
#define NVFP4_DIV_HD inline
#endif

namespace nvfp4::detail {

struct FastDiv {
  uint32_t d = 1, magic = 0, shift = 0;  // magic = ceil(2^(31+l) / d), shift = l - 1, 2^(l-1) < d <= 2^l
};

inline FastDiv make_fast_div(uint32_t d) {
  FastDiv f;
  f.d = d;
  if (d <= 1) return f;  // magic 0 marks the identity
  uint32_t l = 0;
  while ((uint64_t{1} << l) < d) ++l;
  const uint64_t p = uint64_t{1} << (31 + l);
  f.magic = static_cast<uint32_t>((p + d - 1) / d);
  f.shift = l - 1;
  return f;
}

NVFP4_DIV_HD uint32_t fast_div(uint32_t n, const FastDiv& f) {
  if (f.magic == 0) return n;
#if defined(__CUDA_ARCH__)
  return __umulhi(n, f.magic) >> f.shift;
#else
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * f.magic) >> 32) >> f.shift;
#endif
}

}  // namespace nvfp4::detail
