// Device arithmetic with the rounding named: every step the GPU paths take is one PTX instruction
// chosen here, never a compiler contraction (the build has no --use_fast_math, and a*b+c is never
// written where two roundings are meant).
#pragma once
#include <cstdint>

#include "../../common/e2m1_bits.hpp"

namespace nvfp4::cuda {

// mul.rn.ftz.f32: IEEE multiply, subnormal inputs and outputs flushed (docs/numerics.md §2.1 fmul_ftz)
__device__ __forceinline__ float fmul_rn_ftz(float a, float b) {
  float d;
  asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
// max.u16x2: two unsigned 16-bit maxima (bf16 magnitudes compare as their patterns)
__device__ __forceinline__ uint32_t max_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
// prmt.b32: bytes of {b, a} picked by sel's four nibbles
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}
// rcp.approx.ftz.f32 (MUFU.RCP): the instruction the comfy-cuda kernel's fast-math reciprocal became
__device__ __forceinline__ float rcp_approx_ftz(float a) {
  float d;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}
// min.ftz.f32: a NaN operand yields the other operand
__device__ __forceinline__ float fmin_ftz(float a, float b) {
  float d;
  asm("min.ftz.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
// cvt.rn.satfinite.e4m3x2.f32 on one value: e4m3_rn_sat (§1). The instruction packs two; we
// keep the low byte, which comes from the second source operand.
__device__ __forceinline__ uint8_t e4m3_rn_sat(float v) {
  uint16_t packed;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(packed) : "f"(0.0f), "f"(v));
  return static_cast<uint8_t>(packed & 0xFF);
}
// E4M3 byte -> fp32, exact: cvt.rn.f16x2.e4m3x2 (sm_89+; every E4M3 value is an fp16 value)
// then fp16 -> fp32. The byte goes in both halves so the lane order of the pair does not matter.
__device__ __forceinline__ float e4m3_to_f32(uint8_t b) {
  const uint16_t pair = static_cast<uint16_t>(b | (b << 8));
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(pair));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<uint16_t>(h2 & 0xFFFFu)));
  return f;
}
// e2m1_rn_sat (§1) by integer arithmetic on the bits (src/common/e2m1_bits.hpp explains it).
__device__ __forceinline__ uint32_t e2m1_rn_sat(float v) { return detail::e2m1_rn_sat_bits(__float_as_uint(v)); }

// The value of an E2M1 code (§1) as fp32, built from its bits: codes 2..7 are 2^(e-1) (1 + m/2),
// codes 0/1 are 0 and 0.5; bit 3 is the sign.
__device__ __forceinline__ float e2m1_value(uint32_t code) {
  const uint32_t mag = code & 7u, e = mag >> 1;
  uint32_t bits = e ? ((126u + e) << 23) | ((mag & 1u) << 22) : (mag ? 0x3F000000u : 0u);
  return __uint_as_float(bits | ((code & 8u) << 28));
}

// bf16_rn with the same bit recipe as the host (format.hpp), so NaN payloads agree too.
__device__ __forceinline__ uint16_t bf16_rn(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
__device__ __forceinline__ float bf16_to_f32(uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); }
// Two bf16_rn values as one word, lo in bits 0-15: what bf16x2_rn_non_nan must equal, and what
// callers use where a value may be a NaN.
__device__ __forceinline__ uint32_t bf16_rn_pair(float lo, float hi) {
  return bf16_rn(lo) | static_cast<uint32_t>(bf16_rn(hi)) << 16;
}
// bf16_rn of two floats in one instruction (cvt.rn.bf16x2.f32), lo in bits 0-15: equal to
// bf16_rn_pair for every input that is not a NaN (Gpu.Bf16PairInstructionEqualsBf16RnOnEveryNonNanFloat
// runs all 2^32 patterns); a NaN becomes the canonical 0x7FFF, not bf16_rn's payload, so callers
// send NaNs to bf16_rn_pair.
__device__ __forceinline__ uint32_t bf16x2_rn_non_nan(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// comfy-cuda steps 2-6 (docs/numerics.md §2.1) for one 16-element block with the given amax: the
// UE4M3 scale byte and the encode factor e that step 7 multiplies every element by.
struct BlockEncoding {
  uint8_t sf;
  float e;
};
__device__ __forceinline__ BlockEncoding comfy_block_encoding(float amax, float s, float rcp_s) {
  float d = fmul_rn_ftz(amax, 0x1.555556p-3f);    // step 2: * fl32(1/6), what "/6" became under fast-math
  d = fmul_rn_ftz(d, rcp_s);                      // step 3
  d = fmin_ftz(d, 448.0f);                        // step 4: NaN -> 448
  const uint8_t sf = e4m3_rn_sat(d);              // step 5
  const float t = fmul_rn_ftz(s, e4m3_to_f32(sf));                       // step 6
  return {sf, fmin_ftz(rcp_approx_ftz(t), 3.40282347e38f)};              // t = 0 gives +Inf, clamped
}

// The dynamic activation scale of §2.4 from amax's bf16 pattern: f32(bf16_rn(f32(amax) * fl32(1/2688))).
__device__ __forceinline__ float dynamic_global_scale(uint32_t amax_bf16_bits) {
  return bf16_to_f32(bf16_rn(__fmul_rn(bf16_to_f32(static_cast<uint16_t>(amax_bf16_bits)), 1.0f / 2688.0f)));
}

// The alpha of a GEMM on packed operands (§2.4): f32_rn(*scale_a * *scale_w) from the two fp32 global
// scales in device memory when they are given (comfy-kitchen holds them on the GPU: read there, the
// host never waits for them), else the host's alpha. Not checked: a non-finite product is applied as
// ComfyUI's own GEMM applies it.
__device__ __forceinline__ float gemm_alpha(const float* scale_a, const float* scale_w, float alpha) {
  return scale_a ? __fmul_rn(*scale_a, *scale_w) : alpha;
}

// alpha-before-bf16 epilogue (§4): two separately rounded operations, never an FMA.
__device__ __forceinline__ float epilogue_alpha_bias_f32(float acc, float alpha, float bias) {
  return __fadd_rn(__fmul_rn(alpha, acc), bias);
}
__device__ __forceinline__ uint16_t epilogue_alpha_before_bf16(float acc, float alpha, float bias) {
  return bf16_rn(epilogue_alpha_bias_f32(acc, alpha, bias));
}

// ---------------------------------------------------------------------------------------------
// Exact group sums from packed lo_first E2M1 bytes: each byte becomes two int8 "2 * value"
// (exact small integers) and dp4a sums products (|4 * product| <= 144, group sums <= 2304).
__device__ __forceinline__ uint32_t unpack_2x_e2m1_pair(uint32_t byte) {
  // 2 * e2m1 value of one nibble as an int8 byte: codes 0..7 -> 0,1,2,3,4,6,8,12; sign bit negates.
  auto one = [](uint32_t n) -> uint32_t {
    const uint32_t mag = (0xC8643210u >> (4 * (n & 7))) & 0xF;  // nibble table of 0,1,2,3,4,6,8,12
    return ((n & 8) ? (0u - mag) : mag) & 0xFFu;
  };
  return one(byte & 0xF) | (one(byte >> 4) << 8);
}
// 4 packed bytes (8 codes) -> two words of four int8 each
__device__ __forceinline__ void unpack_word(uint32_t w, uint32_t& lo, uint32_t& hi) {
  lo = unpack_2x_e2m1_pair(w & 0xFF) | (unpack_2x_e2m1_pair((w >> 8) & 0xFF) << 16);
  hi = unpack_2x_e2m1_pair((w >> 16) & 0xFF) | (unpack_2x_e2m1_pair(w >> 24) << 16);
}
// Exact sum of 4 * products over 8 codes held in one packed word of each operand.
__device__ __forceinline__ int32_t dot8(uint32_t a, uint32_t b) {
  uint32_t a0, a1, b0, b1;
  unpack_word(a, a0, a1);
  unpack_word(b, b0, b1);
  return __dp4a(static_cast<int>(a0), static_cast<int>(b0), __dp4a(static_cast<int>(a1), static_cast<int>(b1), 0));
}
// Whether any of the 8 products of two packed words is non-zero (a code is zero iff its low 3
// bits are): the zero rule of §3 step 3 needs to tell all-zero groups from cancelling ones.
__device__ __forceinline__ bool any_product8(uint32_t a, uint32_t b) {
  const uint32_t na = (a | (a >> 1) | (a >> 2)) & 0x11111111u;
  const uint32_t nb = (b | (b >> 1) | (b >> 2)) & 0x11111111u;
  return (na & nb) != 0;
}

}  // namespace nvfp4::cuda
