// Recipe comfy-eager: comfy-kitchen's PyTorch quantize_nvfp4 (docs/numerics.md §2.2), on CPU tensors
// (IEEE division, x86 NaN propagation) and on CUDA tensors (x * fl32(1/6), canonical NaNs).
#include <cmath>

#include "nvfp4/format.hpp"
#include "recipes.hpp"

namespace nvfp4::detail {

namespace {
constexpr uint32_t kCudaNaN = 0x7FFFFFFFu;     // every NaN an fp32 CUDA instruction produces
constexpr uint32_t kX86DefaultNaN = 0xFFC00000u;  // x86 "real indefinite": 0/0, 0*Inf, ...
constexpr uint32_t kQuiet = 0x00400000u;
constexpr float kOneSixth = 0x1.555556p-3f;

// fp32 arithmetic with the NaN payloads of the device the recipe ran on, because the torchao
// E2M1 bit tricks below turn a NaN's payload into a code. x86 returns the first NaN operand
// (quieted), else the second, else its default NaN; CUDA returns its canonical NaN.
struct Arith {
  bool cuda;
  float nan_or(float r, float a, float b) const {
    if (!std::isnan(r)) return r;
    if (cuda) return f32_from_bits(kCudaNaN);
    if (std::isnan(a)) return f32_from_bits(f32_bits(a) | kQuiet);
    if (std::isnan(b)) return f32_from_bits(f32_bits(b) | kQuiet);
    return f32_from_bits(kX86DefaultNaN);
  }
  float mul(float a, float b) const { return nan_or(a * b, a, b); }  // rn
  float div(float a, float b) const { return nan_or(a / b, a, b); }  // rn
};

// c10's float8_e4m3fn -> float: the NaN byte becomes 0x7FF00000 with the byte's sign.
float c10_e4m3_to_f32(uint8_t b) {
  if ((b & 0x7F) == 0x7F) return f32_from_bits(0x7FF00000u | (static_cast<uint32_t>(b & 0x80) << 24));
  return e4m3_decode(b);
}
}  // namespace

uint8_t e2m1_torchao(uint32_t bits) {
  // Constants of _f32_to_floatx_unpacked(ebits = 2, mbits = 1).
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t mag_bits = bits ^ sign;
  const float x = f32_from_bits(mag_bits);
  const bool saturate = x >= 6.0f;               // false for NaN
  const bool denormal = !saturate && x < 1.0f;   // false for NaN
  uint8_t code;
  if (saturate) {
    code = 7;
  } else if (denormal) {
    // Adds 2^-? magic so the FPU rounds (RN-even) into the 0.5 grid, then subtracts the bias.
    const float magic = f32_from_bits(149u << 23);  // denorm_exp = (127-1) + (23-1) + 1 = 149
    const uint32_t y = f32_bits(x + magic) - (149u << 23);
    code = static_cast<uint8_t>(y);
  } else {
    // Normal path (NaN lands here too): exponent rebias, RN-even by a magic adder, keep 3 bits.
    const uint32_t mant_odd = (mag_bits >> 22) & 1u;
    uint32_t y = mag_bits + static_cast<uint32_t>(static_cast<int32_t>((1 - 127) * (1 << 23)) + ((1 << 21) - 1));
    y += mant_odd;
    code = static_cast<uint8_t>(y >> 22);  // int32 -> uint8 wraps, exactly as torch's .to(uint8)
  }
  return static_cast<uint8_t>(code | (sign >> 28));
}

void comfy_eager_block(const uint16_t* x16, float s, bool on_cuda, uint8_t* codes, uint8_t* sf) {
  const Arith ar{on_cuda};
  // 1. amax = torch.amax(|x|) in bf16: a NaN element wins (abs cleared its sign, payload kept).
  float amax = 0.0f;
  for (int i = 0; i < kBlock; ++i) {
    const float a = f32_from_bits(f32_bits(bf16_to_f32(x16[i])) & 0x7FFFFFFFu);
    if (std::isnan(amax)) break;
    amax = (std::isnan(a) || a > amax) ? a : amax;
  }
  // 2. / 6: a multiply by fl32(1/6) on CUDA tensors, an IEEE division on CPU tensors. 3. / s.
  float bs = on_cuda ? ar.mul(amax, kOneSixth) : ar.div(amax, 6.0f);
  bs = ar.div(bs, s);
  bs = bs > 448.0f ? 448.0f : bs;               // 4. clamp(max=448): NaN passes through
  const uint8_t sfb = e4m3_rn_nosat(bs);        // 5. torch's float8_e4m3fn cast (sign kept on NaN)
  *sf = sfb;
  const float t = ar.mul(s, c10_e4m3_to_f32(sfb));  // 6. total scale, rn
  for (int i = 0; i < kBlock; ++i) {
    if (t == 0.0f) {                            // 7. zero total scale: +0 codes
      codes[i] = 0;
      continue;
    }
    float v = ar.div(bf16_to_f32(x16[i]), t);   // rn
    if (!std::isnan(v)) v = v > 6.0f ? 6.0f : (v < -6.0f ? -6.0f : v);  // 8. clamp ±6, NaN kept
    codes[i] = e2m1_torchao(f32_bits(v));
  }
}

}  // namespace nvfp4::detail
