// The sm90 kernel's weight blocks and its decode bit patterns, on the CPU (the same header the GPU
// kernel and the device prepack use): every fragment register of every thread decodes to exactly
// e2m1(code) * 2^-14 for the element the wgmma A fragment puts there, every scale byte's stored
// multiplier is s * 2^7 and reads back as the byte, the slow path's element lookup returns the
// stored code, and the tile records are the maxima of the rows' own records.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "cuda/sm90/sm90_layout.hpp"
#include "model/hopper_exact.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/format.hpp"
#include "random_tensor.hpp"

using namespace nvfp4;
namespace sm90 = nvfp4::cuda::sm90;

namespace {

double fp16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}
double e2m1_value_of(uint8_t code) {
  static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8) ? -v[code & 7] : v[code & 7];
}
double ue4m3_value(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  return e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
}

}  // namespace

TEST(Sm90Layout, EveryNibbleDecodesToItsE2m1ValueTimes2PowMinus14) {
  for (uint32_t p = 0; p < 16; ++p)
    for (uint32_t q = 0; q < 16; ++q) {
      const uint8_t b = sm90::code_pair_byte(static_cast<uint8_t>(p), static_cast<uint8_t>(q));
      uint32_t h[4];
      sm90::code_word_fp16(b * 0x01010101u, h);  // the same pair in all four bytes
      for (int r = 0; r < 4; ++r)
        for (int half = 0; half < 2; ++half) {
          const uint16_t bits = static_cast<uint16_t>(h[r] >> (16 * half));
          const double want = std::ldexp(e2m1_value_of(static_cast<uint8_t>(r < 2 ? p : q)), -14);
          ASSERT_EQ(fp16_value(bits), want) << p << " " << q << " reg " << r;
          if (e2m1_value_of(static_cast<uint8_t>(r < 2 ? p : q)) == 0) ASSERT_EQ(bits & 0x7FFF, 0);  // +-0
        }
    }
}

TEST(Sm90Layout, EveryScaleByteHasAnExactMultiplierThatReadsBack) {
  for (uint32_t b = 0; b < 256; ++b) {
    const uint16_t h = sm90::scale_multiplier_fp16(static_cast<uint8_t>(b));
    ASSERT_TRUE(h == 0 || ((h >> 10) & 0x1F) != 0) << b << ": an fp16 normal (HMUL2 keeps it exactly)";
    ASSERT_EQ(h & 0x8000, 0) << b;
    if ((b & 0x7F) != 0x7F)  // NaN: such rows take the slow path, which reads the byte back
      ASSERT_EQ(fp16_value(h), std::ldexp(ue4m3_value(static_cast<uint8_t>(b & 0x7F)), 7)) << b;
    ASSERT_EQ(sm90::multiplier_scale_byte(h), b & 0x7F) << b;
  }
}

TEST(Sm90Layout, WeightBlocksHoldTheFragmentOrderScalesAndTileRecords) {
  std::mt19937 rng(5);
  const int64_t n = 150, k = 200;  // a partial last block, K padded to 256 (4 chunks)
  const Tensor w = nvfp4::testing::random_tensor(n, k, rng, 0x10, 0x70, NibbleOrder::kHiFirst);
  const Tensor lo = w.with(NibbleOrder::kLoFirst, ScaleLayout::kSwizzled128x4);
  const int64_t chunks = 4, pitch = chunks * 32, nb = 3;
  std::vector<uint8_t> rows(static_cast<size_t>(n * pitch), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < lo.geom.row_bytes(); ++b) rows[r * pitch + b] = lo.data[r * lo.geom.row_bytes() + b];
  std::vector<uint8_t> blocks;
  sm90::prepack_weight_blocks(rows.data(), lo.scales.data(), n, pitch, chunks, blocks);
  ASSERT_EQ(blocks.size(), static_cast<size_t>(chunks * nb * sm90::kWBlockBytes));
  auto code_at = [&](int64_t row, int64_t col) -> uint8_t {  // E2M1 code of the weight, 0 past its edge
    if (row >= n || col >= k) return 0;
    return static_cast<uint8_t>((rows[row * pitch + col / 2] >> (4 * (col % 2))) & 0xF);
  };
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = &blocks[static_cast<size_t>((c * nb + b) * sm90::kWBlockBytes)];
      for (int th = 0; th < 128; ++th) {
        const int r0 = 16 * (th / 32) + (th % 32) / 4, t = th % 4;
        for (int j = 0; j < 4; ++j) {
          uint32_t word;
          std::memcpy(&word, blk + sm90::kWBlockCodes + th * 16 + 4 * j, 4);
          uint32_t h[4];
          sm90::code_word_fp16(word, h);
          // a0: row r0, K 2t, 2t+1; a1: row r0 + 8; a2, a3: the same rows at K + 8 (wgmma A fragment)
          for (int reg = 0; reg < 4; ++reg)
            for (int half = 0; half < 2; ++half) {
              const int64_t row = b * 64 + r0 + (reg % 2) * 8, col = c * 64 + 16 * j + 2 * t + half + (reg / 2) * 8;
              ASSERT_EQ(fp16_value(static_cast<uint16_t>(h[reg] >> (16 * half))), std::ldexp(e2m1_value_of(code_at(row, col)), -14))
                  << "chunk " << c << " block " << b << " thread " << th << " reg " << reg;
            }
        }
      }
      for (int th = 0; th < 128; ++th) {  // the decode's one 16-byte load: rows r0, r0 + 8 of thread th
        const int r0 = 16 * (th / 32) + (th % 32) / 4;
        uint16_t h[8];
        std::memcpy(h, blk + sm90::kWBlockMults + 16 * (th / 4), 16);
        for (int i = 0; i < 8; ++i) {
          const int64_t row = b * 64 + r0 + 8 * (i / 4), col = c * 4 + i % 4;
          const uint8_t sf = row < lo.geom.rows16 && col < lo.geom.sf_cols ? lo.scale(row, col) : 0;
          ASSERT_EQ(fp16_value(h[i]), std::ldexp(ue4m3_value(sf), 7)) << "chunk " << c << " block " << b << " thread " << th << " " << i;
        }
      }
      uint32_t sf4[64];
      for (int r = 0; r < 64; ++r) {
        sf4[r] = sm90::row_scale_word(blk, r);
        for (int kk = 0; kk < 64; ++kk) ASSERT_EQ(sm90::block_code(blk + sm90::kWBlockCodes, r, kk), code_at(b * 64 + r, c * 64 + kk));
        const int64_t row = b * 64 + r;
        for (int g = 0; g < 4; ++g) {
          // the tensor's scales exist for its rows16 rows (zero codes past n) and cols16 / 16 blocks
          const uint8_t want = row < lo.geom.rows16 && c * 4 + g < lo.geom.sf_cols ? lo.scale(row, c * 4 + g) : 0;
          ASSERT_EQ(static_cast<uint8_t>(sf4[r] >> (8 * g)), want) << row << " " << c * 4 + g;
        }
      }
      sm90::TileRec rec;
      std::memcpy(&rec, blk + sm90::kWBlockTile, sizeof rec);
      const hopper::TileChunk want = sm90::weight_rows_tile(sf4, 64);
      EXPECT_EQ(rec.lo, want.lo);
      EXPECT_EQ(rec.hi, want.hi);
      for (int g = 0; g < 4; ++g) {
        EXPECT_EQ(rec.mag[g], want.mag[g]);
        EXPECT_EQ(rec.mag_n[g], want.mag_n[g]);
      }
    }
}

// NVFP4_SM90_CONFIG and --sm90-config: a name reads back as the configuration it came from, the
// optional fields keep their defaults, and anything else is refused rather than half-read.
TEST(Sm90Layout, ConfigurationNamesRoundTripAndRefuseTheRest) {
  const sm90::Config cases[] = {{128, 2, 1, 1, 1}, {16, 1, 1, 1, 2}, {256, 2, 1, 2, 1}, {32, 1, 1, 1, 3}};
  const char* names[] = {"128x2x1x1", "16x1x1x1x2", "256x2x1x2", "32x1x1x1x3"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(cases[i].name(), names[i]);
    sm90::Config back{0, 0, 0, 0, 0};
    ASSERT_TRUE(sm90::Config::parse(names[i], back)) << names[i];
    EXPECT_TRUE(back == cases[i]) << names[i];
  }
  for (const char* bad : {"", "128x2x1", "128x2x1x1x", "128x2x1x1y", "128x2x1x1x2x2", "16x1x1x1x2 ", "16x1x1x1r4"}) {
    sm90::Config c{7, 7, 7, 7, 7};
    EXPECT_FALSE(sm90::Config::parse(bad, c)) << "'" << bad << "'";
    EXPECT_TRUE(c == (sm90::Config{7, 7, 7, 7, 7})) << "a refused name leaves the configuration alone: '" << bad << "'";
  }
}

TEST(Sm90Layout, TheLauncherPicksOnlyBuiltConfigurations) {
  const std::vector<std::string> built = sm90_configs();
  if (built.empty()) GTEST_SKIP() << "skipped: this build has no CUDA kernels";
  for (int sms : {1, 78, 114, 132})
    for (int64_t m : {1, 8, 16, 17, 32, 33, 64, 65, 100, 128, 129, 333, 4096, 100000})
      for (int64_t n : {1, 64, 65, 1000, 5376, 21504, 28672, 200000}) {
        const std::string c = sm90_config_for(m, n, sms);
        EXPECT_NE(std::find(built.begin(), built.end(), c), built.end()) << "m " << m << " n " << n << " SMs " << sms << ": " << c;
      }
}

// The launcher's rule on the H200's 132 SMs for the MiniMax H3 linears (N = 21504, 5376, 28672):
// the fewest rounds of row tiles, then the fewest warpgroups per CTA; K-split where the row blocks
// fit one round at M <= 32; above 64 tokens the picks of results v18 r7 and v19 r10 (at 65-96 tokens
// those of v31 r6), above 128 those of v21 r1 and v31 r3 (each case marked "r3" is the fastest of the
// four candidates in that sweep, "r6" of the six timed there; docs/hopper-exact-path.md), with
// 128x2x1x1's split last round counted as 3/4 of a round since results v34 (an H100: "v34" cases).
TEST(Sm90Layout, TheLauncherTakesTheFewestRoundsThenTheFewestWarpgroups) {
  if (sm90_configs().empty()) GTEST_SKIP() << "skipped: this build has no CUDA kernels";
  const struct {
    int64_t m, n;
    const char* want;
  } cases[] = {
      {16, 21504, "16x3x1x1"},   // 336 row blocks: one round with three (112 CTAs) and four (84); three
      {16, 28672, "16x4x1x1"},   // 448: one round only with four
      {16, 5376, "16x1x1x1x3"},  // 84: one round with one warpgroup, so the K-split (three chunk-sum warpgroups: v36 r5)
      {32, 21504, "32x3x1x1"},   // one round with three
      {32, 28672, "32x4x1x1"},   // one round only with four: 17 % faster than two rounds of 32x2x1x1 (v34 r7)
      {17, 28672, "32x4x1x1"},
      {32, 5376, "32x1x1x1x3"},  // the K-split with three chunk-sum warpgroups at 17-32 tokens (results v14 r12)
      {64, 21504, "64x3x1x1"},
      {64, 28672, "64x2x1x1"},   // two rounds with two, three or four (64x4x1x1 is not built: it spills)
      {64, 5376, "64x1x1x1"},
      {48, 5376, "48x1x1x1"},    // one round of lone 48-token warpgroups: 4.7-6.3 % faster (v34 r9)
      {33, 5376, "48x1x1x1"},
      {48, 28672, "48x4x1x1"},   // one round of four instead of two of 64x2x1x1: 8-18 % faster (v34 r8)
      {40, 21504, "64x3x1x1"},   // one round either way: 48x3x1x1 was 4 % slower (v34 r9)
      {49, 5376, "64x1x1x1"},
      {49, 28672, "64x2x1x1"},
      {128, 5376, "128x1x1x1"},  // 84: one round of one warpgroup per CTA (results v19 r10)
      {96, 5376, "96x1x1x1"},     // 84: one round of lone 96-token warpgroups (results v31 r6)
      {65, 5376, "96x1x1x1"},
      {97, 5376, "128x1x1x1"},
      {80, 21504, "96x3x1x1"},    // 336: one round of three 96-token warpgroups instead of two of two (v35 r1)
      {65, 21504, "96x3x1x1"},
      {96, 21504, "96x3x1x1"},
      {80, 16896, "96x2x1x1"},    // 264: one round of two already
      {128, 21504, "128x2x1x1"},  // 336: a round and a split one, 3.5-3.9 % faster than one of 128x3x1x2 (v34 r1)
      {100, 21504, "128x2x1x1"},  // 3.4-4.2 % (v34 r2)
      {128, 28672, "128x2x1x1"},  // 448: two rounds of 128-token tiles instead of four of 64 (r7)
      {96, 28672, "96x2x1x1"},    // r6
      {100, 28672, "128x2x1x1"},
      {4096, 28672, "128x2x1x1"},
      {512, 5376, "96x2x1x1"},    // 84: two rounds of 96-token tiles against one of three row blocks per CTA (r3)
      {448, 5376, "96x2x1x1"},    // r3
      {400, 5376, "96x2x1x1"},
      {256, 5376, "96x2x1x1"},    // one round of 96-token tiles: the cheapest round (r3)
      {384, 5376, "128x2x1x1"},   // r3
      {192, 5376, "64x2x1x1"},    // 84: one round of 126 64-token tiles, as cheap as one of 96-token ones (r3)
      {129, 5376, "64x2x1x1"},
      {192, 21504, "96x2x1x1"},   // 336: three rounds, as with 128-token tiles, but cheaper ones (r3)
      {448, 21504, "128x2x1x1"},  // five rounds and a split one against seven of 96-token tiles: 1.5-2 % (v34 r1)
      {400, 21504, "128x2x1x1"},  // 1.6-1.8 % (v34 r2)
      {192, 28672, "96x2x1x1"},   // r3
      {384, 28672, "128x2x1x1"},  // as fast as 96x2x1x1 (v34 r1; r3 had found 96x2x1x1 5 % faster without the split)
      {2048, 5376, "128x2x1x1"},  // five rounds and a split one against seven: 0.3-0.8 % (v34 r1)
      {2048, 21504, "128x2x1x1"},  // r3
      {768, 5376, "128x2x1x1"},
      {640, 5376, "128x2x1x1"},   // two rounds either way
      {1024, 5376, "128x2x1x1"},  // three rounds against two of 1.7-1.8 times the cost
      {512, 21504, "128x2x1x1"},
      {4096, 5376, "128x2x1x1"},
  };
  for (const auto& c : cases) EXPECT_EQ(sm90_config_for(c.m, c.n, 132), c.want) << "m " << c.m << " n " << c.n;
}

// warp_slow_element (the sm90 kernel's model step on tiles of 64 and 128 tokens) sums a block's 16
// folded products across eight lanes: each lane two in order, then a shuffle tree (xor 1, 2, 4);
// slow_element and the CPU model sum them one after another. Every partial sum is an fp32 number
// (the products are multiples of 2^(ea + eb - 8) below 2^(ea + eb + 7): 20 bits for the sum), so
// every lane's order gives the sequential sum's bits and both are the exact sum: on random blocks
// over the UE4M3 range, subnormal scales and the largest magnitudes (all codes 6) included.
TEST(Sm90Layout, BlockSumsOfFoldedProductsAreTheSameInTheWarpsOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200000; ++trial) {
    const int kind = trial % 4;  // 0: any scale, 1: subnormal scales, 2: the largest scale, 3: largest with codes of 6
    uint8_t ba = static_cast<uint8_t>(rng() % 0x7F), bw = static_cast<uint8_t>(rng() % 0x7F);  // 0x7F is NaN
    if (kind == 1) ba = static_cast<uint8_t>(rng() % 8), bw = static_cast<uint8_t>(rng() % 8);
    if (kind >= 2) ba = bw = 0x7E;
    const float sa = hopper::scale_value(ba), sw = hopper::scale_value(bw);
    std::array<float, 16> p{};
    long double exact = 0.0L;
    for (int k = 0; k < 16; ++k) {
      uint8_t ca = static_cast<uint8_t>(rng() & 0xF), cw = static_cast<uint8_t>(rng() & 0xF);
      if (kind == 3) ca = static_cast<uint8_t>(0x7 | (ca & 0x8)), cw = static_cast<uint8_t>(0x7 | (rng() % 4 == 0 ? 0x8 : 0));
      const float a = e2m1_decode(ca) * sa, w = e2m1_decode(cw) * sw;  // exact: the kernel's fp16 A' and fp32 W'
      p[k] = a * w;
      exact += static_cast<long double>(e2m1_decode(ca)) * e2m1_decode(cw) * sa * sw;
    }
    float seq = 0.0f;
    for (float x : p) seq += x;
    std::array<float, 8> lane{};
    for (int l = 0; l < 8; ++l) lane[l] = (0.0f + p[2 * l]) + p[2 * l + 1];
    for (int d = 1; d < 8; d *= 2) {
      std::array<float, 8> next{};
      for (int l = 0; l < 8; ++l) next[l] = lane[l] + lane[l ^ d];
      lane = next;
    }
    ASSERT_EQ(static_cast<long double>(seq), exact) << "trial " << trial;
    for (int l = 0; l < 8; ++l) ASSERT_EQ(f32_bits(lane[l]), f32_bits(seq)) << "trial " << trial << " lane " << l;
  }
}

// The pre-pass folds a tile's rows in groups and merges the groups (tile_merge); that must be the
// record tile_add gives row by row: rows with no scale (lo = kNoScale), NaN scales and NaN
// magnitudes (which tile_add skips) included, for every split into groups.
TEST(Sm90Layout, TileMergeEqualsRowByRowFolding) {
  std::mt19937 rng(11);
  const float nan = std::nanf("");
  for (int trial = 0; trial < 2000; ++trial) {
    const int rows = 1 + static_cast<int>(rng() % 64), split = 1 + static_cast<int>(rng() % 8);
    std::vector<hopper::RowChunk> rc(rows);
    std::vector<std::array<float, 4>> mag(rows);
    for (int r = 0; r < rows; ++r) {
      const uint32_t kind = rng() % 8;
      rc[r].lo = kind == 0 ? hopper::kNoScale : -20 + static_cast<int>(rng() % 30);
      rc[r].hi = kind == 0 ? -hopper::kNoScale : rc[r].lo + static_cast<int>(rng() % 10);
      rc[r].nan = kind == 1;
      for (int g = 0; g < 4; ++g) {
        rc[r].mag[g] = kind == 2 && g == 1 ? nan : std::ldexp(static_cast<float>(rng() % 4096), -static_cast<int>(rng() % 12));
        mag[r][g] = kind == 3 && g == 2 ? nan : static_cast<float>(rng() % 100000) * 0.25f;
      }
    }
    hopper::TileChunk want;
    hopper::tile_init(want);
    for (int r = 0; r < rows; ++r) hopper::tile_add(want, rc[r], mag[r].data());
    hopper::TileChunk got;
    hopper::tile_init(got);
    for (int r0 = 0; r0 < rows; r0 += split) {
      hopper::TileChunk part;
      hopper::tile_init(part);
      for (int r = r0; r < std::min(rows, r0 + split); ++r) hopper::tile_add(part, rc[r], mag[r].data());
      hopper::tile_merge(got, part);
    }
    ASSERT_EQ(got.lo, want.lo) << trial;
    ASSERT_EQ(got.hi, want.hi) << trial;
    ASSERT_EQ(got.nan, want.nan) << trial;
    for (int g = 0; g < 4; ++g) {
      ASSERT_EQ(f32_bits(got.mag_n[g]), f32_bits(want.mag_n[g])) << trial;
      ASSERT_EQ(f32_bits(got.mag[g]), f32_bits(want.mag[g])) << trial;
    }
  }
}

// The kernel's thread-group test reads a thread's two weight rows' tile from their multipliers
// (weight_pair_tile) instead of taking the scale bytes back and folding them row by row: the same
// record field for field, for every scale byte in every position of either row (zero, subnormal,
// normal, NaN, sign bit set) beside random bytes, and for random rows of mixed kinds.
TEST(Sm90Layout, WeightPairTileIsTheTwoRowsFoldedByteByByte) {
  std::mt19937 rng(13);
  auto random_byte = [&]() -> uint8_t {
    switch (rng() % 6) {
      case 0: return 0;                                              // zero scale
      case 1: return static_cast<uint8_t>(rng() % 8);                // subnormal (or zero)
      case 2: return 0x7F;                                           // NaN
      default: return static_cast<uint8_t>(rng() % 0x7F | (rng() % 4 == 0 ? 0x80 : 0));
    }
  };
  auto check = [&](const uint32_t (&sf)[2], int r0, const char* what) {
    std::vector<uint8_t> blk(sm90::kWBlockBytes, 0);
    sm90::store_row_multipliers(blk.data(), r0, sf[0]);
    sm90::store_row_multipliers(blk.data(), r0 + 8, sf[1]);
    const hopper::TileChunk want = sm90::weight_rows_tile(sf, 2);  // the byte-wise folding
    const hopper::TileChunk got = sm90::weight_pair_tile(blk.data(), r0);
    ASSERT_EQ(got.lo, want.lo) << what << " " << std::hex << sf[0] << " " << sf[1];
    ASSERT_EQ(got.hi, want.hi) << what << " " << std::hex << sf[0] << " " << sf[1];
    ASSERT_EQ(got.nan, want.nan) << what << " " << std::hex << sf[0] << " " << sf[1];
    for (int g = 0; g < 4; ++g) {
      ASSERT_EQ(f32_bits(got.mag_n[g]), f32_bits(want.mag_n[g])) << what << " " << std::hex << sf[0] << " " << sf[1];
      ASSERT_EQ(f32_bits(got.mag[g]), f32_bits(want.mag[g])) << what << " " << std::hex << sf[0] << " " << sf[1];
    }
  };
  for (int pos = 0; pos < 8; ++pos)  // every byte in every position, the other seven random
    for (uint32_t b = 0; b < 256; ++b)
      for (int rep = 0; rep < 4; ++rep) {
        uint32_t sf[2] = {0, 0};
        for (int i = 0; i < 8; ++i)
          sf[i / 4] |= static_cast<uint32_t>(i == pos ? static_cast<uint8_t>(b) : rep == 0 ? 0 : random_byte()) << (8 * (i % 4));
        check(sf, 16 * (pos % 4) + pos, "byte sweep");
      }
  for (int trial = 0; trial < 100000; ++trial) {
    uint32_t sf[2] = {0, 0};
    for (int i = 0; i < 8; ++i) sf[i / 4] |= static_cast<uint32_t>(random_byte()) << (8 * (i % 4));
    if (trial % 7 == 0) sf[trial % 2] = 0;  // a row without a scale beside one with
    check(sf, 16 * (trial % 4) + trial % 8, "random rows");
  }
}

// A trip's per-element tests read a weight row's RowChunk the same way (weight_row_chunk): the same
// as weight_chunk and weight_block_bounds of its scale bytes, for every byte in every position.
TEST(Sm90Layout, WeightRowChunkIsWeightChunkOfTheScaleBytes) {
  std::mt19937 rng(17);
  for (int pos = 0; pos < 4; ++pos)
    for (uint32_t b = 0; b < 256; ++b)
      for (int rep = 0; rep < 16; ++rep) {
        uint32_t sf = 0;
        for (int g = 0; g < 4; ++g)
          sf |= static_cast<uint32_t>(g == pos ? b : rep == 0 ? 0u : rng() % 3 == 0 ? 0u : rng() % 256) << (8 * g);
        std::vector<uint8_t> blk(sm90::kWBlockBytes, 0);
        const int rw = static_cast<int>(rng() % 64);
        sm90::store_row_multipliers(blk.data(), rw, sf);
        uint32_t w01 = 0, w23 = 0;
        sm90::row_multiplier_words(blk.data(), rw, w01, w23);
        float got_mag[4], want_mag[4];
        const hopper::RowChunk got = sm90::weight_row_chunk(w01, w23, got_mag);
        const hopper::RowChunk want = hopper::weight_chunk(sf);
        hopper::weight_block_bounds(sf, want_mag);
        ASSERT_EQ(got.lo, want.lo) << std::hex << sf;
        ASSERT_EQ(got.hi, want.hi) << std::hex << sf;
        ASSERT_EQ(got.nan, want.nan) << std::hex << sf;
        for (int g = 0; g < 4; ++g) {
          ASSERT_EQ(f32_bits(got.mag[g]), f32_bits(want.mag[g])) << std::hex << sf;
          ASSERT_EQ(f32_bits(got_mag[g]), f32_bits(want_mag[g])) << std::hex << sf;
        }
      }
}

// The per-element tests load a thread's two rows (r0 and r0 + 8) with one 16-byte load
// (pair_multiplier_words): row r0's words first, then row r0 + 8's, as each row alone reads them.
TEST(Sm90Layout, PairMultiplierWordsAreTheTwoRowsWords) {
  std::mt19937 rng(29);
  std::vector<uint8_t> blk(sm90::kWBlockBytes, 0);
  for (int rw = 0; rw < 64; ++rw) sm90::store_row_multipliers(blk.data(), rw, static_cast<uint32_t>(rng()));
  for (int r0 = 0; r0 < 64; ++r0) {
    if (r0 % 16 >= 8) continue;
    uint32_t w[4] = {0, 0, 0, 0}, a01 = 0, a23 = 0, b01 = 0, b23 = 0;
    sm90::pair_multiplier_words(blk.data(), r0, w);
    sm90::row_multiplier_words(blk.data(), r0, a01, a23);
    sm90::row_multiplier_words(blk.data(), r0 + 8, b01, b23);
    EXPECT_EQ(w[0], a01) << r0;
    EXPECT_EQ(w[1], a23) << r0;
    EXPECT_EQ(w[2], b01) << r0;
    EXPECT_EQ(w[3], b23) << r0;
  }
}
