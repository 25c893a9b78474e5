// Data layouts shared by the sm90 kernels and their host launcher (docs/hopper-exact-path.md):
// the per-row check records the activation pre-pass writes, and the weight codes prepacked into
// the register order of the wgmma A fragment.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

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
  int16_t lo, hi, spread;
  uint8_t nan;
  uint8_t pad[9];
};
static_assert(sizeof(TokenRec) == 32 && sizeof(GroupRec) == 32, "records are 32-byte aligned loads");

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

}  // namespace nvfp4::cuda::sm90
