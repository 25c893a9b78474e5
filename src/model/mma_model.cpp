// The fast, integer model of one block-scaled MMA (docs/numerics.md §3): exact group sums from E2M1
// codes, then mma_step.hpp's accumulation.
#include "chunk.hpp"
#include "mma_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

float mma_element(const uint8_t* a64, const uint8_t* b64, const uint8_t* sfa4, const uint8_t* sfb4, float c) {
  int32_t p4[4];
  bool any[4];
  detail::group_sums(a64, b64, p4, any);
  return model::mma_element(p4, any, sfa4, sfb4, c);
}

void mma_m16n8k64(const uint8_t* a, const uint8_t* b, const uint8_t* sfa, const uint8_t* sfb, const float* c,
                  float* d) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      d[i * 8 + j] = mma_element(a + i * 64, b + j * 64, sfa + i * 4, sfb + j * 4, c[i * 8 + j]);
}

}  // namespace nvfp4
