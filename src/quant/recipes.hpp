// One 16-element block through each ComfyUI recipe (docs/numerics.md §2.1, §2.2). Internal.
#pragma once
#include <cstdint>

namespace nvfp4::detail {

constexpr int kBlock = 16;

// x16: 16 bf16 patterns (zeros past a padded edge). Writes 16 E2M1 codes and the UE4M3 byte.
// rcp_s is rcp_approx_ftz(s), hoisted out of the block loop as the CUDA kernel does.
void comfy_cuda_block(const uint16_t* x16, float s, float rcp_s, uint8_t* codes, uint8_t* sf);
// The same block with AVX2 (x86-64 only): bit-identical, used when the CPU has AVX2.
void comfy_cuda_block_avx2(const uint16_t* x16, float s, float rcp_s, uint8_t* codes, uint8_t* sf);
void comfy_eager_block(const uint16_t* x16, float s, bool on_cuda, uint8_t* codes, uint8_t* sf);

// torchao's _f32_to_floatx_unpacked for E2M1 on one fp32 pattern, including what its bit tricks do
// to NaN payloads (the eager recipe's "arbitrary" NaN code, §2.2 step 8).
uint8_t e2m1_torchao(uint32_t bits);

}  // namespace nvfp4::detail
