// The 128x4 block-scale swizzle (docs/numerics.md §1) on the device.
#pragma once
#include <cstdint>

namespace nvfp4::cuda {
// Offset of logical scale (r, c) in a swizzled buffer whose padded scale width is cp (all three
// non-negative). In unsigned arithmetic: shifts and masks, where the signed int64 divisions and
// remainders took ~20 instructions more (the sm90 pre-pass, results v20).
__device__ __forceinline__ int64_t swizzled_offset(int64_t r, int64_t c, int64_t cp) {
  const uint64_t ur = static_cast<uint64_t>(r), uc = static_cast<uint64_t>(c), ucp = static_cast<uint64_t>(cp);
  return static_cast<int64_t>(((ur >> 7) * (ucp >> 2) + (uc >> 2)) * 512 + (ur & 31) * 16 + ((ur >> 5) & 3) * 4 + (uc & 3));
}
// The four scales of row r for K chunk q (64 elements) are contiguous: one 32-bit load, byte j =
// K block j, which is exactly the scale register the block-scaled MMA takes.
__device__ __forceinline__ uint32_t load_chunk_scales(const uint8_t* sf, int64_t r, int64_t q, int64_t cp) {
  return *reinterpret_cast<const uint32_t*>(sf + swizzled_offset(r, 4 * q, cp));
}
}  // namespace nvfp4::cuda
