// Recipe comfy-cuda: the shipped comfy-kitchen CUDA kernel, step for step (docs/numerics.md §2.1).
#include <cfloat>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "nvfp4/format.hpp"
#include "nvfp4/quant.hpp"
#include "../common/e2m1_bits.hpp"
#include "../common/gpu_arith.hpp"
#include "recipes.hpp"

namespace nvfp4::detail {

namespace {
constexpr float kOneSixth = 0x1.555556p-3f;  // fl32(1/6) = 0x3E2AAAAB: nvcc turned "/6" into this
static_assert(sizeof(float) == 4 && sizeof(uint32_t) == 4, "fp32 bit patterns are assumed");

inline float fmul_ftz_fast(float a, float b) { return f32_from_bits(fmul_ftz_bits(f32_bits(a), f32_bits(b))); }
}  // namespace

namespace {
// Steps 1-6 for one block: the UE4M3 scale byte and the encode factor e.
inline float block_scale(const uint16_t* x16, float s, float rcp_s, uint8_t* sf) {
  // step 1: max of |x| with NaN ignored. On bf16 patterns with the sign cleared the integer order
  // is the value order, and NaN patterns (above 0x7F80) are skipped.
  uint32_t amax_bits = 0;
  for (int i = 0; i < kBlock; ++i) {
    const uint32_t a = x16[i] & 0x7FFFu;
    amax_bits = (a <= 0x7F80u && a > amax_bits) ? a : amax_bits;
  }
  const float amax = bf16_to_f32(static_cast<uint16_t>(amax_bits));
  float d = fmul_ftz_fast(amax, kOneSixth);  // step 2
  d = fmul_ftz_fast(d, rcp_s);               // step 3
  d = d < 448.0f ? d : 448.0f;               // step 4: min.ftz, a NaN d becomes 448
  const uint8_t sfb = e4m3_rn_sat(d);        // step 5: cvt.rn.satfinite.e4m3x2.f32
  *sf = sfb;
  const float t = fmul_ftz_fast(s, e4m3_decode(sfb));  // step 6
  const float e = rcp_approx_ftz(t);
  return e < FLT_MAX ? e : FLT_MAX;                    // t = 0 gives +Inf, clamped
}

#if defined(__x86_64__)
// Subnormal fp32 lanes -> zero of their sign.
__attribute__((target("avx2"))) inline __m256i ftz8(__m256i b) {
  const __m256i is_sub = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7F800000)), _mm256_setzero_si256());
  return _mm256_blendv_epi8(b, _mm256_and_si256(b, _mm256_set1_epi32(static_cast<int>(0x80000000u))), is_sub);
}

// Step 7 on eight elements at once, lane for lane the scalar fmul_ftz_bits + e2m1_rn_sat_bits.
__attribute__((target("avx2"))) inline __m256i codes8_avx2(const uint16_t* x8, float e) {
  const __m256i expo = _mm256_set1_epi32(0x7F800000), abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i xb = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x8))), 16);
  const __m256 p = _mm256_mul_ps(_mm256_set1_ps(e), _mm256_castsi256_ps(ftz8(xb)));  // rn
  __m256i pb = ftz8(_mm256_castps_si256(p));
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(pb, abs_mask), expo);
  pb = _mm256_blendv_epi8(pb, abs_mask, is_nan);  // canonical NaN 0x7FFFFFFF
  const __m256i a = _mm256_and_si256(pb, abs_mask);
  __m256i hi = _mm256_add_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(static_cast<int>(0xC11FFFFFu))),
                                _mm256_and_si256(_mm256_srli_epi32(a, 22), _mm256_set1_epi32(1)));
  hi = _mm256_min_epu32(_mm256_srli_epi32(hi, 22), _mm256_set1_epi32(7));
  const __m256 r = _mm256_add_ps(_mm256_add_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(a)), _mm256_set1_ps(8388608.0f));
  const __m256i lo = _mm256_sub_epi32(_mm256_castps_si256(r), _mm256_set1_epi32(0x4B000000));
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3F800000), a);
  const __m256i code = _mm256_blendv_epi8(hi, lo, small);
  return _mm256_or_si256(code, _mm256_and_si256(_mm256_srli_epi32(pb, 28), _mm256_set1_epi32(8)));
}
#endif
}  // namespace

void comfy_cuda_block(const uint16_t* x16, float s, float rcp_s, uint8_t* codes, uint8_t* sf) {
  const float e = block_scale(x16, s, rcp_s, sf);
  // step 7: the same integer E2M1 rounding the GPU kernel runs (equal to e2m1_rn_sat, tested)
  for (int i = 0; i < kBlock; ++i)
    codes[i] = static_cast<uint8_t>(e2m1_rn_sat_bits(fmul_ftz_bits(f32_bits(e), static_cast<uint32_t>(x16[i]) << 16)));
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void comfy_cuda_block_avx2(const uint16_t* x16, float s, float rcp_s, uint8_t* codes,
                                                          uint8_t* sf) {
  const float e = block_scale(x16, s, rcp_s, sf);
  const __m256i c0 = codes8_avx2(x16, e), c1 = codes8_avx2(x16 + 8, e);
  // 32-bit lanes -> 16 bytes in element order
  const __m256i w = _mm256_packus_epi32(c0, c1);                  // [c0 0-3, c1 0-3 | c0 4-7, c1 4-7]
  const __m256i w2 = _mm256_permute4x64_epi64(w, 0xD8);           // [c0 0-3, c0 4-7 | c1 0-3, c1 4-7]
  const __m128i b = _mm_packus_epi16(_mm256_castsi256_si128(w2), _mm256_extracti128_si256(w2, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), b);
}
#endif


}  // namespace nvfp4::detail
