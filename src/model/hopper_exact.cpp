// The CPU counterpart of the sm90 kernel (src/cuda/sm90/): the same fast-path tests
// (src/model/hopper_exact.hpp) on the same scale-folded values, the tensor-core chain replaced by
// the exact chunk sum it equals wherever the tests pass, and the §3 model elsewhere. Also the
// statistics that say how often the fast path applies, with an emulated Hopper chain as a check of
// the exactness argument itself.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../common/parallel.hpp"
#include "chunk.hpp"
#include "hopper_exact.hpp"
#include "mma_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

namespace {

struct Parts {
  bool neg;
  uint32_t sig;  // 24-bit significand (subnormals: < 2^23)
  int exp;       // value = sig * 2^exp
};
Parts parts(float f) {
  const uint32_t b = f32_bits(f);
  const uint32_t e = (b >> 23) & 0xFF, m = b & 0x7FFFFF;
  return {(b >> 31) != 0, e ? (m | 0x800000u) : m, (e ? static_cast<int>(e) : 1) - 150};
}

}  // namespace

// add.rz.f32 for finite operands, by integer arithmetic (no host rounding mode involved).
float add_rz_f32(float x, float y) {
  const Parts a = parts(x), b = parts(y);
  if (a.sig == 0 && b.sig == 0) return (a.neg && b.neg) ? -0.0f : 0.0f;
  if (a.sig == 0) return y;
  if (b.sig == 0) return x;
  auto lead = [](const Parts& p) { return p.exp + 32 - __builtin_clz(p.sig); };  // one above the leading bit
  const bool a_big = lead(a) >= lead(b);
  const Parts& big = a_big ? a : b;
  const Parts& small = a_big ? b : a;
  if (lead(big) - lead(small) > 60) {
    // The smaller operand lies far below the larger's last significand bit: RZ keeps the larger,
    // or steps its magnitude down one ulp when the signs differ.
    const float keep = a_big ? x : y;
    return big.neg == small.neg ? keep : f32_from_bits(f32_bits(keep) - 1);
  }
  const int lo = std::min(big.exp, small.exp);
  __int128 s = 0;
  s += (big.neg ? -1 : 1) * (static_cast<__int128>(big.sig) << (big.exp - lo));
  s += (small.neg ? -1 : 1) * (static_cast<__int128>(small.sig) << (small.exp - lo));
  if (s == 0) return 0.0f;
  const bool neg = s < 0;
  unsigned __int128 mag = neg ? -s : s;
  int e = lo;
  while (mag >> 63) {  // dropping low bits of the magnitude is itself a round toward zero
    mag >>= 1;
    ++e;
  }
  const float r = model::rz_to_f32(neg, static_cast<uint64_t>(mag), e);
  return std::isinf(r) ? (neg ? -3.40282347e38f : 3.40282347e38f) : r;  // RZ saturates
}

// One tensor-core step as MMA-Sim models Hopper: c and the products aligned to the largest
// exponent, each truncated toward zero to `frac_bits` bits below it, summed exactly, then RZ to fp32.
float hopper_chain_step(float c, const double* prod, int n, int frac_bits) {
  int emax = -10000;
  auto consider = [&](double v) {
    if (v != 0.0) emax = std::max(emax, std::ilogb(v));
  };
  consider(c);
  for (int i = 0; i < n; ++i) consider(prod[i]);
  if (emax == -10000) return 0.0f;
  const int unit = emax - frac_bits;
  int64_t sum = 0;
  auto add = [&](double v) { sum += static_cast<int64_t>(std::trunc(std::ldexp(v, -unit))); };
  add(c);
  for (int i = 0; i < n; ++i) add(prod[i]);
  const bool neg = sum < 0;
  return model::rz_to_f32(neg, static_cast<uint64_t>(neg ? -sum : sum), unit);
}

namespace {

// Scale-folded operand rows as the sm90 kernel multiplies them, with their per-chunk check records.
struct FoldedRows {
  int64_t rows = 0, chunks = 0;
  std::vector<float> v;                 // [rows][chunks * 64] e2m1 * block scale (0 for NaN scales)
  std::vector<uint8_t> codes;           // [rows][chunks * 64]
  std::vector<uint32_t> sf;             // [rows][chunks] the four scale bytes
  std::vector<hopper::RowChunk> rc;     // [rows][chunks]
  std::vector<float> vmag;              // [rows][chunks][4] block bounds in value units (tile test)
};
FoldedRows fold(const Tensor& t, const std::vector<int64_t>& rows, bool activation) {
  FoldedRows f;
  f.rows = static_cast<int64_t>(rows.size());
  f.chunks = ceil_div(t.geom.cols16, 64);
  f.v.assign(f.rows * f.chunks * 64, 0.0f);
  f.codes.assign(f.rows * f.chunks * 64, 0);
  f.sf.assign(f.rows * f.chunks, 0);
  f.rc.resize(f.rows * f.chunks);
  f.vmag.assign(f.rows * f.chunks * 4, 0.0f);
  detail::parallel_for(f.rows, 16, 0, [&](int64_t r0, int64_t r1, int) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t q = 0; q < f.chunks; ++q) {
        uint8_t c[detail::kChunkK], s[4];
        detail::load_chunk(t, rows[i], q, c, s);
        uint32_t sf4 = 0;
        float asum[4] = {0, 0, 0, 0};
        for (int g = 0; g < 4; ++g) {
          sf4 |= static_cast<uint32_t>(s[g]) << (8 * g);
          const bool nan = (s[g] & 0x7F) == 0x7F;
          const float sv = nan ? 0.0f : hopper::scale_value(s[g]);
          for (int k = 16 * g; k < 16 * g + 16; ++k) {
            const float v = e2m1_decode(c[k]) * sv;  // exact: <= 6 significant bits
            f.v[(i * f.chunks + q) * 64 + k] = v;
            f.codes[(i * f.chunks + q) * 64 + k] = c[k];
            asum[g] += std::fabs(v);                  // exact: <= 12 significant bits
          }
        }
        f.sf[i * f.chunks + q] = sf4;
        f.rc[i * f.chunks + q] = activation ? hopper::activation_chunk(sf4, asum) : hopper::weight_chunk(sf4);
        float* vm = &f.vmag[(i * f.chunks + q) * 4];
        if (activation)
          for (int g = 0; g < 4; ++g) vm[g] = asum[g];
        else
          hopper::weight_block_bounds(sf4, vm);
      }
  });
  return f;
}

// Everything one (token, weight row, chunk) step needs and yields.
struct Step {
  float model;       // §3
  double t;          // exact chunk sum (double holds it whenever the fast path can apply)
  double prod[64];   // the 64 exact products a'_k w'_k
};
void step(const FoldedRows& A, int64_t ia, const FoldedRows& W, int64_t iw, int64_t q, float acc, Step& s) {
  const uint8_t* ac = &A.codes[(ia * A.chunks + q) * 64];
  const uint8_t* wc = &W.codes[(iw * W.chunks + q) * 64];
  int32_t p4[4];
  bool any[4];
  detail::group_sums(ac, wc, p4, any);
  uint8_t sa[4], sw[4];
  std::memcpy(sa, &A.sf[ia * A.chunks + q], 4);
  std::memcpy(sw, &W.sf[iw * W.chunks + q], 4);
  s.model = model::mma_element(p4, any, sa, sw, acc);
  const float* av = &A.v[(ia * A.chunks + q) * 64];
  const float* wv = &W.v[(iw * W.chunks + q) * 64];
  s.t = 0;
  for (int k = 0; k < 64; ++k) {
    s.prod[k] = static_cast<double>(av[k]) * wv[k];  // exact in double (and in fp32)
    s.t += s.prod[k];
  }
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The tile of `rows` rows starting at r0 (rows past the end are absent) in chunk q.
hopper::TileChunk tile_of(const FoldedRows& f, int64_t r0, int64_t rows, int64_t q) {
  hopper::TileChunk t;
  hopper::tile_init(t);
  for (int64_t r = r0; r < std::min(r0 + rows, f.rows); ++r)
    hopper::tile_add(t, f.rc[r * f.chunks + q], &f.vmag[(r * f.chunks + q) * 4]);
  return t;
}

// Whether the fast path's step add.rz(acc, T) is the §3 step here: T an fp32 number and the sum the
// model's bits. The sum goes to *sum for a caller that carries on with it.
bool fast_step_exact(const Step& s, float acc, float* sum = nullptr) {
  const float t = static_cast<float>(s.t);
  const float f = add_rz_f32(acc, t);
  if (sum) *sum = f;
  return static_cast<double>(t) == s.t && f32_bits(f) == f32_bits(s.model);
}

bool chain_exact(const Step& s, int bits) {
  float ch = 0.0f;
  for (int g = 0; g < 4; ++g) ch = hopper_chain_step(ch, &s.prod[16 * g], 16, bits);
  return static_cast<double>(ch) == s.t;
}

}  // namespace

// Mirrors the sm90 kernel's decisions: per (tile_rows weight rows, tile_tokens tokens, chunk) the
// tile test, and where it fails the per-element test; every step the tests accept is the exact
// chunk sum added with add.rz, the rest the §3 model. Equals the oracle (fast_mismatches = 0).
Result<std::vector<float>> gemm_hopper_cpu(const Tensor& a, const Tensor& w, FastPathStats* stats, int tile_tokens,
                                           int tile_rows) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  if (tile_tokens <= 0 || tile_rows <= 0) return invalid_argument("tile sizes must be positive");
  const int64_t M = a.geom.rows, N = w.geom.rows;
  const FoldedRows A = fold(a, iota(M), true), W = fold(w, iota(N), false);
  const int64_t Q = A.chunks, mt = ceil_div(M, tile_tokens), nt = ceil_div(N, static_cast<int64_t>(tile_rows));
  std::vector<float> raw(M * N);
  std::vector<FastPathStats> part(static_cast<size_t>(detail::default_threads()));
  detail::parallel_for(mt * nt, 1, 0, [&](int64_t t0, int64_t t1, int worker) {
    FastPathStats& st = part[worker];
    Step s;
    for (int64_t tile = t0; tile < t1; ++tile) {
      const int64_t m0 = (tile / nt) * tile_tokens, n0 = (tile % nt) * tile_rows;
      const int64_t m1 = std::min(M, m0 + tile_tokens), n1 = std::min(N, n0 + tile_rows);
      std::vector<float> acc(static_cast<size_t>((m1 - m0) * (n1 - n0)), 0.0f);
      int run_lo = hopper::kNoRunLo;
      for (int64_t q = 0; q < Q; ++q) {
        const hopper::TileVerdict v = hopper::tile_prepare(tile_of(A, m0, tile_tokens, q), tile_of(W, n0, tile_rows, q), run_lo, 0);
        ++st.tile_steps;
        bool tile_fast = v.pre_ok;
        for (float x : acc) tile_fast = tile_fast && std::fabs(x) < v.acc_limit;
        st.tile_fast += tile_fast;
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t n = n0; n < n1; ++n) {
            float& c = acc[(m - m0) * (n1 - n0) + (n - n0)];
            step(A, m, W, n, q, c, s);
            ++st.steps;
            const bool fast = tile_fast || hopper::step_is_fast(A.rc[m * Q + q], W.rc[n * Q + q], c);
            if (fast) {
              ++st.fast;
              st.fast_mismatches += !fast_step_exact(s, c, &c);
            } else {
              c = s.model;
            }
          }
      }
      for (int64_t m = m0; m < m1; ++m)
        for (int64_t n = n0; n < n1; ++n) raw[m * N + n] = acc[(m - m0) * (n1 - n0) + (n - n0)];
    }
  });
  if (stats) {
    *stats = FastPathStats{};
    for (const auto& p : part) *stats += p;
  }
  return raw;
}

Result<FastPathStats> hopper_fastpath_stats(const Tensor& a, const Tensor& w, const std::vector<int64_t>& weight_rows,
                                            int tile_tokens, int tile_rows) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  if (tile_tokens <= 0 || tile_tokens % 8 != 0) return invalid_argument("tile_tokens must be a positive multiple of 8");
  if (tile_rows <= 0 || weight_rows.size() % static_cast<size_t>(tile_rows) != 0)
    return invalid_argument("weight_rows must be whole tiles of tile_rows rows");
  for (int64_t n : weight_rows)
    if (n < 0 || n >= w.geom.rows) return invalid_argument("weight row out of range");
  const int64_t M = a.geom.rows, Mp = roundup(M, tile_tokens);
  // Token rows as the kernel tiles them: padding tokens repeat the last real one.
  std::vector<int64_t> toks(Mp);
  for (int64_t m = 0; m < Mp; ++m) toks[m] = std::min(m, M - 1);
  const FoldedRows A = fold(a, toks, true), W = fold(w, weight_rows, false);
  const int64_t Q = A.chunks, T = Mp / tile_tokens;
  std::vector<FastPathStats> part(static_cast<size_t>(detail::default_threads()));
  detail::parallel_for(W.rows / tile_rows, 1, 0, [&](int64_t b0, int64_t b1, int worker) {
    FastPathStats& st = part[worker];
    Step s;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = blk * tile_rows;
      std::vector<float> acc(static_cast<size_t>(tile_rows * Mp), 0.0f);  // [row][token]
      std::vector<int> run_lo(static_cast<size_t>(T), hopper::kNoRunLo);
      for (int64_t q = 0; q < Q; ++q) {
        const hopper::TileChunk wt = tile_of(W, r0, tile_rows, q);
        for (int64_t tt = 0; tt < T; ++tt) {
          const hopper::TileVerdict v = hopper::tile_prepare(tile_of(A, tt * tile_tokens, tile_tokens, q), wt, run_lo[tt], 0);
          bool tile_fast = v.pre_ok;
          for (int r = 0; r < tile_rows; ++r)
            for (int64_t m = tt * tile_tokens; m < (tt + 1) * tile_tokens; ++m)
              tile_fast = tile_fast && std::fabs(acc[r * Mp + m]) < v.acc_limit;
          ++st.tile_steps;
          st.tile_fast += tile_fast;
          for (int r = 0; r < tile_rows; ++r)
            for (int64_t m = tt * tile_tokens; m < (tt + 1) * tile_tokens; ++m) {
              float& c = acc[r * Mp + m];
              step(A, m, W, r0 + r, q, c, s);
              const bool real = m < M;
              if (real) {
                ++st.steps;
                st.exact_sum_fp32 += static_cast<double>(static_cast<float>(s.t)) == s.t;
              }
              // The tile test's claim for this element (the weakest form: its own |acc|): sound?
              if (v.pre_ok && std::fabs(c) < v.acc_limit)
                st.tile_unsound += !(fast_step_exact(s, c) && chain_exact(s, 23) && chain_exact(s, 25));
              if (real && hopper::step_is_fast(A.rc[m * Q + q], W.rc[(r0 + r) * Q + q], c)) {
                ++st.fast;
                st.fast_mismatches += !fast_step_exact(s, c);
                for (int bits : {23, 25}) {  // the argument's premise, on an emulated chain (the H200 keeps 25)
                  ++st.chain_checked;
                  st.chain_mismatches += !chain_exact(s, bits);
                }
              }
              c = s.model;
            }
        }
      }
    }
  });
  FastPathStats all;
  for (const auto& p : part) all += p;
  return all;
}

}  // namespace nvfp4
