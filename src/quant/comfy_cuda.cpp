// Recipe comfy-cuda: the shipped comfy-kitchen CUDA kernel, step for step (NVFP4-SPEC.md §2.1).
#include <cfloat>

#include "nvfp4/format.hpp"
#include "nvfp4/quant.hpp"
#include "recipes.hpp"

namespace nvfp4::detail {

namespace {
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6) = 0x3E2AAAAB: nvcc turned "/6" into this
static_assert(sizeof(float) == 4 && sizeof(uint32_t) == 4, "fp32 bit patterns are assumed");

inline float ftz(float v) { return (v < 0x1p-126f && v > -0x1p-126f) ? v * 0.0f : v; }
inline float fmul_ftz_fast(float a, float b) { return ftz(ftz(a) * ftz(b)); }
}  // namespace

void comfy_cuda_block(const uint16_t* x16, float s, float rcp_s, uint8_t* codes, uint8_t* sf) {
  float xf[kBlock];
  float amax = 0.0f;
  for (int i = 0; i < kBlock; ++i) {
    xf[i] = bf16_to_f32(x16[i]);
    const float a = std::fabs(xf[i]);
    amax = a > amax ? a : amax;  // step 1: a NaN never compares greater, so it is ignored
  }
  float d = fmul_ftz_fast(amax, kOneSixth);  // step 2
  d = fmul_ftz_fast(d, rcp_s);               // step 3
  d = d < 448.0f ? d : 448.0f;               // step 4: min.ftz, a NaN d becomes 448
  const uint8_t sfb = e4m3_rn_sat(d);        // step 5: cvt.rn.satfinite.e4m3x2.f32
  *sf = sfb;
  const float t = fmul_ftz_fast(s, e4m3_decode(sfb));       // step 6
  float e = rcp_approx_ftz(t);
  e = e < FLT_MAX ? e : FLT_MAX;                            // t = 0 gives +Inf, clamped
  for (int i = 0; i < kBlock; ++i) codes[i] = e2m1_rn_sat(fmul_ftz_fast(e, xf[i]));  // step 7
}

}  // namespace nvfp4::detail
