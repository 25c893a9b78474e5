// Data layouts shared by the sm90 kernels, the weight prepack (host and device) and the host
// launcher (docs/hopper-exact-path.md): the weight blocks the GEMM streams, the activation records
// the pre-pass writes, and the tile configurations.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../../model/hopper_exact.hpp"
#include "nvfp4/format.hpp"

namespace nvfp4::cuda::sm90 {

constexpr int kRowsWG = 64;            // weight rows per consumer warpgroup: the wgmma M
constexpr int kChunkK = 64;            // K per pipeline stage = one §3 step
constexpr int kCodeBytes = kRowsWG * kChunkK / 2;   // 2048: 128 threads x 16 bytes
constexpr int kMultBytes = kRowsWG * 8;             // 512: [32 row pairs][2 rows][4 f16 multipliers]
constexpr int kAccShift = -7;          // the kernel's accumulators are the §3 values times 2^-7 (exact)

// Maxima of a tile of rows in one chunk (hopper::TileChunk), as the kernel loads them: 48 bytes.
struct TileRec {
  float mag_n[4];
  float mag[4];
  int16_t lo, hi;
  uint8_t nan;
  uint8_t pad[11];
};
static_assert(sizeof(TileRec) == 48, "tile records are three 16-byte vectors (bulk copies move multiples of 16)");

// One weight block: 64 rows x one chunk, everything a consumer warpgroup reads for it, contiguous
// so that the blocks of a CTA's rows for one chunk are one bulk copy. Blocks are stored
// [chunk][n64 block]. The rows' scales are stored as the decode's multipliers (scale_multiplier_fp16,
// below) rather than as UE4M3 bytes: 256 more bytes per block, and 15 fewer instructions per warp
// and chunk in the hot loop at 16x3x1x1, where the decode keeps the ALU pipe the busiest (0.5-6 %
// faster, results v27; docs/hopper-exact-path.md). The slow paths read the bytes back
// (row_scale_word).
constexpr int kWBlockCodes = 0;
constexpr int kWBlockMults = kCodeBytes;
constexpr int kWBlockTile = kCodeBytes + kMultBytes;
constexpr int kWBlockBytes = kWBlockTile + static_cast<int>(sizeof(TileRec));  // 2608
static_assert(kWBlockBytes % 16 == 0, "weight blocks are bulk-copied: 16-byte multiples");

// One activation token in one chunk: what the per-element test and the slow path need.
struct TokenRec {
  float mag[4];   // hopper::RowChunk::mag
  uint32_t sf;    // the four UE4M3 scale bytes (block g in byte g)
  int16_t lo, hi;
  uint8_t nan;
  uint8_t pad[7];
};
static_assert(sizeof(TokenRec) == 32, "token records are two 16-byte vectors");

// A consumer thread (warp w, lane 4 g + t of its warpgroup) holds weight rows r0 = 16 w + g and
// r1 = r0 + 8, and of K block j the elements 2t, 2t+1 (fragment registers a0: row r0, a1: row r1)
// and 2t+8, 2t+9 (a2: r0, a3: r1). Its 16 code bytes per chunk are one 32-bit word per block j:
//   byte 0: P = (r0, 2t)   Q = (r0, 2t+8)      byte 1: P = (r0, 2t+1)  Q = (r0, 2t+9)
//   byte 2: P = (r1, 2t)   Q = (r1, 2t+8)      byte 3: P = (r1, 2t+1)  Q = (r1, 2t+9)
// each byte holding two E2M1 codes (sign s, exponent/mantissa bits eem) as s_P.s_Q.eem_P.eem_Q
// (bit 7 .. bit 0). Then (w & 0x80808080) | ((w >> 2) & 0x0E0E0E0E) puts the P codes and
// (w << 1) & 0x8E8E8E8E the Q codes into s...eem. form, the high byte of an fp16 whose value is
// e2m1 * 2^-14 (codes 0 and 1 are fp16 subnormals, the rest normal), five integer instructions for
// eight elements and no conversion instruction (those are slow on Hopper).
NVFP4_HD uint8_t code_pair_byte(uint8_t p, uint8_t q) {  // p, q: E2M1 codes (sign in bit 3)
  return static_cast<uint8_t>(((p & 8) << 4) | ((q & 8) << 3) | ((p & 7) << 3) | (q & 7));
}
// prmt.b32 in its default mode for selectors 0..7 (bytes of a, then of b): one PRMT on the GPU.
NVFP4_HD uint32_t prmt_b32(uint32_t a, uint32_t b, uint32_t sel) {
#if defined(__CUDA_ARCH__)
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
#else
  const uint64_t ab = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) d |= static_cast<uint32_t>((ab >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return d;
#endif
}
// A thread's code word of K block j -> the f16x2 bit patterns of its fragment registers a0..a3
// (rows r0, r1, r0, r1; lower K in the low half), each value e2m1 * 2^-14.
NVFP4_HD void code_word_fp16(uint32_t w, uint32_t (&h)[4]) {
  const uint32_t hp = (w & 0x80808080u) | ((w >> 2) & 0x0E0E0E0Eu);  // P codes: s...eem. (fp16 high bytes)
  const uint32_t hq = (w << 1) & 0x8E8E8E8Eu;                        // Q codes
  h[0] = prmt_b32(hp, 0u, 0x1404u);  // bytes 0, 1 -> high bytes of the two halves
  h[1] = prmt_b32(hp, 0u, 0x3424u);  // bytes 2, 3
  h[2] = prmt_b32(hq, 0u, 0x1404u);
  h[3] = prmt_b32(hq, 0u, 0x3424u);
}
// A UE4M3 scale byte (sign ignored, as everywhere: docs/numerics.md) -> the fp16 bits of its
// multiplier s * 2^7, which the decode multiplies the codes' e2m1 * 2^-14 by (e2m1 * s * 2^-7: the
// §3 products times 2^-7, kAccShift). Every multiplier is an fp16 normal in [0.25, 61440] with at
// most four significant bits, so it is exact. A NaN byte (0x7F) gives 61440: such rows take the slow
// path, which reads the byte back and reports NaN.
NVFP4_HD uint16_t scale_multiplier_fp16(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  if (e > 0) return static_cast<uint16_t>(((e + 15) << 10) | (m << 7));  // 2^e (1 + m/8)
  if (m == 0) return 0;
  const int l = m >= 4 ? 2 : (m >= 2 ? 1 : 0);  // subnormal: m/8 * 2^-6 * 2^7 = m/4 = 2^(l-2) (m / 2^l)
  return static_cast<uint16_t>(((l + 13) << 10) | ((m - (1 << l)) << (10 - l)));
}
// The inverse: the scale byte (sign bit 0) of a multiplier scale_multiplier_fp16 made.
// e >= 1: ((e + 15) << 3 | m) - (15 << 3); e = 0: m = the significand 2^l + ... shifted right by
// 10 - l, with l = (h >> 10) - 13 (and h = 0 shifted out entirely: 23 - 0 places).
NVFP4_HD uint8_t multiplier_scale_byte(uint16_t h) {
  return static_cast<uint8_t>(h >= 0x4000 ? (h >> 7) - 120 : (0x400u | (h & 0x3FFu)) >> (23 - (h >> 10)));
}
// Where row rw's multipliers lie in a block: consumer thread th (warp w, lane 4 g + t) loads the
// 16 bytes of row pair p = 8 w + g = th / 4 in one load, its rows r0 = 16 w + g and r1 = r0 + 8 as
// f16x2 words (m0, m1), (m2, m3) each.
NVFP4_HD int row_multipliers_offset(int rw) { return kWBlockMults + 16 * (8 * (rw / 16) + rw % 8) + 8 * ((rw % 16) / 8); }
NVFP4_HD void store_row_multipliers(uint8_t* blk, int rw, uint32_t sf4) {
  uint16_t h[4];
  for (int g = 0; g < 4; ++g) h[g] = scale_multiplier_fp16(static_cast<uint8_t>(sf4 >> (8 * g)));
  const uint32_t w01 = h[0] | (static_cast<uint32_t>(h[1]) << 16), w23 = h[2] | (static_cast<uint32_t>(h[3]) << 16);
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint2*>(blk + row_multipliers_offset(rw)) = make_uint2(w01, w23);  // 8-byte aligned
#else
  const uint32_t w[2] = {w01, w23};
  std::memcpy(blk + row_multipliers_offset(rw), w, 8);
#endif
}
// Row rw's two multiplier words.
NVFP4_HD void row_multiplier_words(const uint8_t* blk, int rw, uint32_t& w01, uint32_t& w23) {
#if defined(__CUDA_ARCH__)
  const uint2 v = *reinterpret_cast<const uint2*>(blk + row_multipliers_offset(rw));  // 8-byte aligned
  w01 = v.x;
  w23 = v.y;
#else
  uint32_t w[2];
  std::memcpy(w, blk + row_multipliers_offset(rw), 8);
  w01 = w[0];
  w23 = w[1];
#endif
}
// Row rw's four scale bytes (block g in byte g, sign bits 0) from its multipliers.
NVFP4_HD uint32_t row_scale_word(const uint8_t* blk, int rw) {
  uint32_t w[2];
  row_multiplier_words(blk, rw, w[0], w[1]);
  uint32_t sf4 = 0;
  for (int g = 0; g < 4; ++g) sf4 |= static_cast<uint32_t>(multiplier_scale_byte(static_cast<uint16_t>(w[g / 2] >> (16 * (g % 2))))) << (8 * g);
  return sf4;
}

// A weight row's RowChunk and block bounds (weight_chunk and weight_block_bounds of its scale
// bytes, field for field) from its two multiplier words (row_multipliers_offset), without taking
// the bytes back through row_scale_word: for a multiplier h = s * 2^7 (scale_multiplier_fp16),
// 6 s = 6 * 2^-7 * h exactly, and the §3 exponent of its byte is max(E - 22, -6) with E the fp16
// exponent field (E = e + 15 for e >= 1; 13-15 for the subnormal bytes, whose exponent is -6). Zero
// bytes give h = 0, NaN bytes 0x7B80. Every step is a select, not a branch: the trips run this on
// a cold path, one warp per scheduler, where the byte-wise form, with branches around each byte,
// made the thread-group test take 1.2-2 us (results v47).
NVFP4_HD hopper::RowChunk weight_row_chunk(uint32_t w01, uint32_t w23, float (&mag)[4]) {
  constexpr uint32_t kNanMult = 0x7B80u;  // scale_multiplier_fp16(0x7F)
  hopper::RowChunk r;
  r.lo = hopper::kNoScale;
  r.hi = -hopper::kNoScale;
  r.nan = false;
  for (int g = 0; g < 4; ++g) {
    const uint32_t h = ((g < 2 ? w01 : w23) >> (16 * (g % 2))) & 0xFFFFu;
    const int e = static_cast<int>(h >> 10) - 22 > -6 ? static_cast<int>(h >> 10) - 22 : -6;
    r.lo = h != 0 && e < r.lo ? e : r.lo;
    r.hi = h != 0 && e > r.hi ? e : r.hi;
    r.nan = r.nan || h == kNanMult;
    // h as fp32 (an fp16 normal, or 0), times 6 * 2^-7: exact (h has <= 4 significant bits)
    const float hf = model::from_bits(h == 0 ? 0u : (((h >> 10) + 112u) << 23) | ((h & 0x3FFu) << 13));
    mag[g] = h == kNanMult ? 0.0f : hf * 0.046875f;
  }
  const float inv = r.lo == hopper::kNoScale || r.nan ? 0.0f : hopper::pow2f(-r.lo);
  for (int g = 0; g < 4; ++g) r.mag[g] = mag[g] * inv;  // exact: a power of two
  return r;
}
// Rows r0 and r0 + 8's multiplier words (r0 % 16 < 8: the two rows of one thread's accumulators),
// row r0's two first: one 16-byte load, where two row_multiplier_words calls are two 8-byte loads.
NVFP4_HD void pair_multiplier_words(const uint8_t* blk, int r0, uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(blk + row_multipliers_offset(r0));  // 16-byte aligned
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  std::memcpy(w, blk + row_multipliers_offset(r0), 16);
#endif
}
// The tile of two weight rows r0 and r0 + 8 of a block (r0 % 16 < 8), as weight_rows_tile (below)
// makes it from their scale words, field for field: weight_row_chunk of each, merged without
// branches (a row without a non-zero scale has mag = 0, lo = kNoScale, hi = -kNoScale, so merging
// it changes nothing but nan, as tile_add's early return does).
NVFP4_HD hopper::TileChunk weight_pair_tile(const uint8_t* blk, int r0) {
  uint32_t w[4];  // row r0's multiplier words, then row r0 + 8's
  pair_multiplier_words(blk, r0, w);
  hopper::TileChunk t;
  hopper::tile_init(t);
  for (int i = 0; i < 2; ++i) {
    float mag[4];
    const hopper::RowChunk r = weight_row_chunk(w[2 * i], w[2 * i + 1], mag);
    t.nan = t.nan || r.nan;
    for (int g = 0; g < 4; ++g) {
      t.mag_n[g] = r.mag[g] > t.mag_n[g] ? r.mag[g] : t.mag_n[g];
      t.mag[g] = mag[g] > t.mag[g] ? mag[g] : t.mag[g];
    }
    t.lo = r.lo < t.lo ? r.lo : t.lo;
    t.hi = r.hi > t.hi ? r.hi : t.hi;
  }
  return t;
}

// The code of element (row rw of the block, k of the chunk) from a block's code bytes.
NVFP4_HD uint8_t block_code(const uint8_t* codes, int rw, int k) {
  const int j = k / 16, kk = k % 16;
  const int th = 32 * (rw / 16) + 4 * (rw % 8) + (kk % 8) / 2;
  const uint8_t b = codes[th * 16 + 4 * j + ((rw % 16) >= 8 ? 2 : 0) + (kk % 2)];
  return kk < 8 ? static_cast<uint8_t>(((b >> 4) & 8) | ((b >> 3) & 7)) : static_cast<uint8_t>(((b >> 3) & 8) | (b & 7));
}
// Word j (K block j) of consumer thread th; code(row, k) returns the E2M1 code of the block's row
// (0..63) at chunk column k (0..63), zero for padding.
template <typename Code>
NVFP4_HD uint32_t block_code_word(int th, int j, const Code& code) {
  const int r0 = 16 * (th / 32) + (th % 32) / 4, r1 = r0 + 8, t = th % 4, k0 = 16 * j + 2 * t;
  const uint32_t b0 = code_pair_byte(code(r0, k0), code(r0, k0 + 8));
  const uint32_t b1 = code_pair_byte(code(r0, k0 + 1), code(r0, k0 + 9));
  const uint32_t b2 = code_pair_byte(code(r1, k0), code(r1, k0 + 8));
  const uint32_t b3 = code_pair_byte(code(r1, k0 + 1), code(r1, k0 + 9));
  return b0 | (b1 << 8) | (b2 << 16) | (b3 << 24);
}

// A tile's maxima as the 48-byte record the kernel loads, and back.
NVFP4_HD TileRec tile_rec(const hopper::TileChunk& t) {
  TileRec rec{};
  for (int g = 0; g < 4; ++g) {
    rec.mag_n[g] = t.mag_n[g];
    rec.mag[g] = t.mag[g];
  }
  rec.lo = static_cast<int16_t>(t.lo);
  rec.hi = static_cast<int16_t>(t.hi);
  rec.nan = t.nan;
  return rec;
}

// The tile of weight rows from their scale words (block g in byte g), folded row by row.
NVFP4_HD hopper::TileChunk weight_rows_tile(const uint32_t* sf4, int rows) {
  hopper::TileChunk t;
  hopper::tile_init(t);
  for (int r = 0; r < rows; ++r) {
    float mag[4];
    hopper::weight_block_bounds(sf4[r], mag);
    hopper::tile_add(t, hopper::weight_chunk(sf4[r]), mag);
  }
  return t;
}
// The tile record of the 64 rows of a block.
NVFP4_HD TileRec weight_tile_rec(const uint32_t* sf4, int rows) { return tile_rec(weight_rows_tile(sf4, rows)); }
NVFP4_HD hopper::TileChunk tile_chunk(const TileRec& r) {
  hopper::TileChunk t;
  for (int g = 0; g < 4; ++g) {
    t.mag_n[g] = r.mag_n[g];
    t.mag[g] = r.mag[g];
  }
  t.lo = r.lo;
  t.hi = r.hi;
  t.nan = r.nan != 0;
  return t;
}

// The weight blocks [chunks][ceil(n / 64)] from lo_first rows (pitch bytes per row, K padded to 64
// with zeros) and 128x4 swizzled scales (rows padded to 128, chunks * 4 columns).
inline void prepack_weight_blocks(const uint8_t* lo_first, const uint8_t* sf_swizzled, int64_t n, int64_t pitch,
                                  int64_t chunks, std::vector<uint8_t>& out) {
  const int64_t nb = (n + kRowsWG - 1) / kRowsWG;
  out.assign(static_cast<size_t>(nb * chunks * kWBlockBytes), 0);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = &out[static_cast<size_t>((c * nb + b) * kWBlockBytes)];
      auto code = [&](int r, int k) -> uint8_t {
        const int64_t row = b * kRowsWG + r;
        if (row >= n) return 0;
        const uint8_t byte = lo_first[row * pitch + c * 32 + k / 2];
        return static_cast<uint8_t>((byte >> (4 * (k % 2))) & 0xF);
      };
      for (int th = 0; th < 128; ++th)
        for (int j = 0; j < 4; ++j) {
          const uint32_t w = block_code_word(th, j, code);
          std::memcpy(blk + kWBlockCodes + th * 16 + 4 * j, &w, 4);
        }
      uint32_t sf4[kRowsWG];
      for (int r = 0; r < kRowsWG; ++r) {
        const int64_t row = b * kRowsWG + r;  // scale rows exist up to roundup(n, 128): zero padding
        std::memcpy(&sf4[r], sf_swizzled + nvfp4::swizzled_offset(row, 4 * c, 4 * chunks), 4);
        store_row_multipliers(blk, r, sf4[r]);
      }
      const TileRec rec = weight_tile_rec(sf4, kRowsWG);
      std::memcpy(blk + kWBlockTile, &rec, sizeof rec);
    }
}

// A tile configuration of the GEMM: each consumer warpgroup owns 64 weight rows x bm tokens,
// multiplied in nh chains of bm / nh tokens (fewer chunk-sum registers: 256 tokens, or three
// warpgroups); a CTA has rw x tw warpgroups (rw row blocks, tw token blocks) sharing its stages.
// ks > 1 (one tile per CTA: rw = tw = nh = 1): ks warpgroups compute the chunk sums of chunks
// c = j (mod ks) side by side and hand them through shared memory to one warpgroup that applies
// the §3 steps in chunk order, so a tile's chunks no longer wait for each other's decode and MMAs.
struct Config {
  int bm = 128, rw = 2, tw = 1, nh = 1, ks = 1;
  int tile_tokens() const { return bm * tw; }
  // Whether the kernel may take a partial last round of this configuration's tiles as units of one
  // row block (sm90_gemm_nvfp4.cu, kSplitTail; it does where a round precedes it and rw units per
  // tile fit one round). The launcher's round costs read the same rule.
  constexpr bool splits_last_round() const { return ks == 1 && nh == 1 && tw == 1 && rw >= 2 && bm == 128; }
  bool operator==(const Config& o) const {
    return bm == o.bm && rw == o.rw && tw == o.tw && nh == o.nh && ks == o.ks;
  }
  // "BMxRWxTWxNH" (ks = 1) or "BMxRWxTWxNHxKS", as NVFP4_SM90_CONFIG and nvfp4 bench --sm90-config
  // name it.
  std::string name() const {
    std::string s = std::to_string(bm) + "x" + std::to_string(rw) + "x" + std::to_string(tw) + "x" + std::to_string(nh);
    return ks == 1 ? s : s + "x" + std::to_string(ks);
  }
  static bool parse(const char* s, Config& c) {
    // Whole-string match: "%dx%dx%dx%d" alone would accept a name followed by anything.
    Config v;
    int used = 0;
    if (std::sscanf(s, "%dx%dx%dx%d%n", &v.bm, &v.rw, &v.tw, &v.nh, &used) != 4) return false;
    s += used;
    if (*s == 'x') {  // ks, otherwise its default 1
      if (std::sscanf(s, "x%d%n", &v.ks, &used) != 1) return false;
      s += used;
    }
    if (*s != '\0') return false;
    c = v;
    return true;
  }
};

}  // namespace nvfp4::cuda::sm90
