// The weight decode in registers (layout and bit patterns: sm90_layout.hpp), shared by the sm90 GEMM
// and the probes that time its chunk work (bench/sm90_dsmem_probe.cu).
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "sm90_layout.hpp"

namespace nvfp4::cuda::sm90 {

__device__ __forceinline__ __half2 as_h2(uint32_t u) { return *reinterpret_cast<__half2*>(&u); }
__device__ __forceinline__ uint32_t as_u32(__half2 h) { return *reinterpret_cast<uint32_t*>(&h); }

// Word w of K block j -> the fragment registers a0..a3 (rows r0, r1, r0, r1) times the row
// multipliers (sm90_layout.hpp's scale_multiplier_fp16): e2m1 * 2^-14 * s * 2^7, exact (<= 6 significant bits; HMUL2 keeps fp16 subnormals).
__device__ __forceinline__ void decode_word(uint32_t w, __half2 m0, __half2 m1, uint32_t (&a)[4]) {
  uint32_t h[4];
  code_word_fp16(w, h);
  a[0] = as_u32(__hmul2(as_h2(h[0]), m0));
  a[1] = as_u32(__hmul2(as_h2(h[1]), m1));
  a[2] = as_u32(__hmul2(as_h2(h[2]), m0));
  a[3] = as_u32(__hmul2(as_h2(h[3]), m1));
}

}  // namespace nvfp4::cuda::sm90
