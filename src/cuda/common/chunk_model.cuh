// One output's k64 step of the block-scaled MMA from packed operands: exact group sums (dp4a) and
// the §3 model step (model/mma_step.hpp). Shared by the model GEMM kernel and the SM120 kernel's
// emulated MMA, so both run the steps the CPU oracle runs.
#pragma once
#include <cstdint>

#include "../../model/mma_step.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

// a, b: 8 packed lo_first words each (word j = K 8j..8j+7 of one row / column); sa, sb: the four
// UE4M3 scales of the chunk, byte j = K block j; c: the accumulator.
__device__ __forceinline__ float chunk_element(const uint32_t (&a)[8], const uint32_t (&b)[8], uint32_t sa,
                                               uint32_t sb, float c) {
  int32_t p4[4];
  bool any[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    p4[g] = dot8(a[2 * g], b[2 * g]) + dot8(a[2 * g + 1], b[2 * g + 1]);
    any[g] = any_product8(a[2 * g], b[2 * g]) || any_product8(a[2 * g + 1], b[2 * g + 1]);
  }
  const uint8_t sab[4] = {uint8_t(sa), uint8_t(sa >> 8), uint8_t(sa >> 16), uint8_t(sa >> 24)};
  const uint8_t sbb[4] = {uint8_t(sb), uint8_t(sb >> 8), uint8_t(sb >> 16), uint8_t(sb >> 24)};
  return model::mma_element(p4, any, sab, sbb, c);
}

}  // namespace nvfp4::cuda
