// The fast, integer model of one block-scaled MMA (NVFP4-SPEC.md §3): exact group sums from E2M1
// codes, then mma_step.hpp's accumulation.
#include "mma_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

float mma_element(const uint8_t* a64, const uint8_t* b64, const uint8_t* sfa4, const uint8_t* sfb4, float c) {
  int32_t p4[4];
  bool any[4];
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
  return model::mma_element(p4, any, sfa4, sfb4, c);
}

void mma_m16n8k64(const uint8_t* a, const uint8_t* b, const uint8_t* sfa, const uint8_t* sfb, const float* c,
                  float* d) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      d[i * 8 + j] = mma_element(a + i * 64, b + j * 64, sfa + i * 4, sfb + j * 4, c[i * 8 + j]);
}

}  // namespace nvfp4
