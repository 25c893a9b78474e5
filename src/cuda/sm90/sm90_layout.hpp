// Data layouts shared by the sm90 kernels and their host launcher (docs/hopper-exact-path.md):
// the per-row check records the activation pre-pass writes, and the weight codes prepacked into
// the register order of the wgmma A fragment.
#pragma once
#include <cstdint>
#include <cmath>
#include <cstring>
#include <vector>

#include "../../model/hopper_exact.hpp"
#include "nvfp4/format.hpp"

namespace nvfp4::cuda::sm90 {

constexpr int kTileN = 128;            // weight rows per CTA: two consumer warpgroups of 64
constexpr int kChunkK = 64;            // K per pipeline stage = one §3 step
constexpr int kWCodeBytes = kTileN * kChunkK / 2;  // prepacked codes of one (n tile, chunk)
constexpr int kWScaleBytes = 512;      // one 128x4 swizzle tile: 128 rows x 4 scales of one chunk
constexpr int kThreads = 384;          // producer warpgroup + two consumer warpgroups
static_assert(kWCodeBytes == 2 * 128 * 16, "each consumer thread takes 16 bytes of codes per chunk");

// One activation token in one chunk: what the per-element test and the slow path need.
struct TokenRec {
  float mag[4];   // hopper::RowChunk::mag
  uint32_t sf;    // the four UE4M3 scale bytes (block g in byte g)
  int16_t lo, hi;
  uint8_t nan;
  uint8_t pad[7];
};
// The tokens one consumer thread holds (8j + 2t and 8j + 2t + 1 of a tile) in one chunk:
// hopper::RowGroup, for the per-thread test.
struct GroupRec {
  float mag[4];
  int16_t lo, hi, spread, lo_max;
  uint8_t nan;
  uint8_t pad[7];
};
// One weight row in one chunk: hopper::weight_chunk, precomputed when the weight is prepacked
// (weights are static; the kernel would otherwise decode every scale byte of every row each time).
// mag holds fp16 bit patterns; the values (0.75 * sig * 2^k) are exact in fp16 or +Inf (which fails
// the chain test: conservative).
struct WRec {
  uint16_t mag[4];
  int16_t lo, hi;
  uint8_t nan;
  uint8_t pad[3];
};
static_assert(sizeof(TokenRec) == 32 && sizeof(GroupRec) == 32 && sizeof(WRec) == 16, "records are aligned vector loads");
constexpr int kWRecBytes = kTileN * static_cast<int>(sizeof(WRec));

// Byte offset of row r's four chunk scales inside a 512-byte swizzle tile (§1 layout).
inline constexpr int scale_offset_in_tile(int r) { return (r % 32) * 16 + ((r % 128) / 32) * 4; }

// Weight codes in wgmma A-fragment order: for n tile nt and chunk c, 2 warpgroups x 128 threads x
// 16 bytes; thread (warp w, lane 4 g + t) of warpgroup h covers rows r0 = 64 h + 16 w + g and
// r1 = r0 + 8; its word j (K block j) holds, byte by byte, row r0 K 16j+2t..+1, row r1 the same,
// row r0 K 16j+2t+8..+9, row r1 the same, two codes per byte with the lower K in the low nibble:
// exactly the f16 pairs a0..a3 of the fragment once each nibble is decoded.
// lo_first: rows of the weight in lo_first order, pitch bytes per row (K padded to 64).
inline void prepack_weight_codes(const uint8_t* lo_first, int64_t n, int64_t pitch, int64_t chunks,
                                 std::vector<uint8_t>& out) {
  const int64_t ntiles = (n + kTileN - 1) / kTileN;
  out.assign(static_cast<size_t>(ntiles * chunks * kWCodeBytes), 0);
  for (int64_t nt = 0; nt < ntiles; ++nt)
    for (int64_t c = 0; c < chunks; ++c) {
      uint8_t* dst = &out[static_cast<size_t>((nt * chunks + c) * kWCodeBytes)];
      for (int th = 0; th < 256; ++th) {
        const int h = th / 128, w = (th % 128) / 32, g = (th % 32) / 4, t = th % 4;
        const int64_t r0 = nt * kTileN + 64 * h + 16 * w + g, r1 = r0 + 8;
        for (int j = 0; j < 4; ++j) {
          const int64_t byte = c * 32 + 8 * j + t;
          auto at = [&](int64_t r, int64_t b) -> uint8_t { return r < n ? lo_first[r * pitch + b] : 0; };
          uint8_t* o = dst + th * 16 + 4 * j;
          o[0] = at(r0, byte);
          o[1] = at(r1, byte);
          o[2] = at(r0, byte + 4);
          o[3] = at(r1, byte + 4);
        }
      }
    }
}

// fp16 bits of a non-negative fp32 value, rounded up (+Inf past 65504).
inline uint16_t f16_bits_up(float v) {
  if (!(v <= 65504.0f)) return 0x7C00;
  if (v == 0.0f) return 0;
  int e = 0;
  const double fr = std::frexp(static_cast<double>(v), &e);  // v = fr * 2^e, fr in [0.5, 1)
  if (e - 1 < -14) return static_cast<uint16_t>(std::ceil(std::ldexp(static_cast<double>(v), 24)));  // subnormal
  const double mant = std::ceil((fr * 2.0 - 1.0) * 1024.0);
  if (mant >= 1024.0) return static_cast<uint16_t>((e - 1 + 1 + 15) << 10);
  return static_cast<uint16_t>(((e - 1 + 15) << 10) | static_cast<int>(mant));
}

// The weight records [n tile][chunk][128 rows] from the 128x4 swizzled scales (rows padded to 128).
inline void prepack_weight_records(const uint8_t* sf_swizzled, int64_t n, int64_t chunks, std::vector<WRec>& out) {
  const int64_t ntiles = (n + kTileN - 1) / kTileN;
  out.assign(static_cast<size_t>(ntiles * chunks * kTileN), WRec{});
  for (int64_t nt = 0; nt < ntiles; ++nt)
    for (int64_t c = 0; c < chunks; ++c)
      for (int r = 0; r < kTileN; ++r) {
        uint32_t sw;
        std::memcpy(&sw, sf_swizzled + (nt * chunks + c) * kWScaleBytes + scale_offset_in_tile(r), 4);
        const hopper::RowChunk rc = hopper::weight_chunk(sw);
        WRec& w = out[static_cast<size_t>((nt * chunks + c) * kTileN + r)];
        for (int g = 0; g < 4; ++g) w.mag[g] = f16_bits_up(rc.mag[g]);
        w.lo = static_cast<int16_t>(rc.lo);
        w.hi = static_cast<int16_t>(rc.hi);
        w.nan = rc.nan;
      }
}

}  // namespace nvfp4::cuda::sm90
