// One k64 step's inputs taken from Tensors, and its exact group sums: shared by the per-element
// reference chain and the fast-path statistics (the oracle's own hot loop uses unpacked rows).
#pragma once
#include <cstdint>

#include "nvfp4/format.hpp"

namespace nvfp4::detail {

constexpr int kChunkK = 64;

// Row `row` of t, K chunk q: 64 codes in logical K order and the 4 block scales; zero past K
// (exactly the zero padding a kernel sees).
inline void load_chunk(const Tensor& t, int64_t row, int64_t q, uint8_t (&codes)[kChunkK], uint8_t (&sf)[4]) {
  for (int k = 0; k < kChunkK; ++k) {
    const int64_t kk = q * kChunkK + k;
    codes[k] = kk < t.geom.cols16 ? t.code(row, kk) : 0;
  }
  for (int g = 0; g < 4; ++g) {
    const int64_t gi = q * 4 + g;
    sf[g] = gi < t.geom.sf_cols ? t.scale(row, gi) : 0;
  }
}

// p4[g] = 4 * (exact sum of block g's 16 E2M1 products); any[g]: some product is non-zero.
inline void group_sums(const uint8_t* a64, const uint8_t* b64, int32_t (&p4)[4], bool (&any)[4]) {
  for (int g = 0; g < 4; ++g) {
    int32_t s = 0;
    bool nz = false;
    for (int k = 16 * g; k < 16 * g + 16; ++k) {
      const int32_t prod = kE2M1Twice[a64[k] & 0xF] * kE2M1Twice[b64[k] & 0xF];  // 4 * product, exact
      s += prod;
      nz = nz || prod != 0;
    }
    p4[g] = s;
    any[g] = nz;
  }
}

}  // namespace nvfp4::detail
