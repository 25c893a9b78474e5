// The split-K merge and the epilogue of docs/numerics.md §4 on one output, shared by the CPU oracle
// (merge_partials) and the GPU merge kernel, so both finish a split-K GEMM with the very same
// roundings in the very same order. Every multiply and add is rounded on its own: on the device
// through __fmul_rn/__fadd_rn (nvcc contracts a*b+c into an FMA otherwise), on the host through
// plain operators (the project builds with -ffp-contract=off).
#pragma once
#include <cstdint>

#include "mma_step.hpp"

namespace nvfp4::model {

NVFP4_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
NVFP4_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
// bf16 RN-even with the project's NaN rule (quiet bit forced), as nvfp4::bf16_rn.
NVFP4_HD uint16_t bf16_round(float f) {
  uint32_t u = as_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
NVFP4_HD float bf16_value(uint16_t h) { return from_bits(static_cast<uint32_t>(h) << 16); }

// The values of nvfp4::MergeMode and nvfp4::Epilogue (model.hpp), which device code cannot include.
enum class Merge : uint8_t { kFp32 = 0, kBf16Partials = 1, kBf16Serial = 2 };
enum class Epi : uint8_t { kAlphaBeforeBf16 = 0, kAlphaAfterBf16 = 1 };

// The epilogue on one fp32 accumulator value, bias after the alpha multiply (-0 = no bias).
NVFP4_HD uint16_t epilogue_step(float acc, Epi e, float alpha, float bias) {
  if (e == Epi::kAlphaBeforeBf16) return bf16_round(add_rn(mul_rn(alpha, acc), bias));
  return bf16_round(add_rn(mul_rn(bf16_value(bf16_round(acc)), alpha), bias));
}

struct Merged {
  float raw;       // the block-scaled product without alpha (bf16 merges: with alpha = 1)
  uint16_t bf16;   // the layer output
};

// Finishes one output from its n >= 1 K-slice partials, partial(j) for slice j in K order.
template <typename Partial>
NVFP4_HD Merged merge_step(Partial partial, int n, Merge m, Epi e, float alpha, float bias) {
  constexpr float kNoBias = -0.0f;
  Merged out{};
  if (m == Merge::kFp32) {
    float acc = partial(0);
    for (int j = 1; j < n; ++j) acc = add_rn(acc, partial(j));  // forward fp32 sum
    out.raw = acc;
    out.bf16 = epilogue_step(acc, e, alpha, bias);
  } else if (m == Merge::kBf16Partials) {
    float acc = 0.0f, raw = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float p = partial(j);
      const float v = bf16_value(epilogue_step(p, e, alpha, kNoBias)), r = bf16_value(bf16_round(p));
      acc = j == 0 ? v : add_rn(acc, v);
      raw = j == 0 ? r : add_rn(raw, r);
    }
    out.raw = bf16_value(bf16_round(raw));
    out.bf16 = bf16_round(add_rn(acc, bias));
  } else {  // kBf16Serial: a chain in the output type
    const float p0 = partial(0);
    uint16_t acc = epilogue_step(p0, e, alpha, kNoBias);
    uint16_t raw = bf16_round(p0);
    for (int j = 1; j < n; ++j) {
      const float p = partial(j);
      acc = bf16_round(add_rn(bf16_value(acc), bf16_value(epilogue_step(p, e, alpha, kNoBias))));
      raw = bf16_round(add_rn(bf16_value(raw), p));
    }
    out.raw = bf16_value(raw);
    out.bf16 = bias == 0.0f ? acc : bf16_round(add_rn(bf16_value(acc), bias));
  }
  return out;
}

}  // namespace nvfp4::model
