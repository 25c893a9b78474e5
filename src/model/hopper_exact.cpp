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
};
FoldedRows fold(const Tensor& t, const std::vector<int64_t>& rows, bool activation) {
  FoldedRows f;
  f.rows = static_cast<int64_t>(rows.size());
  f.chunks = ceil_div(t.geom.cols16, 64);
  f.v.assign(f.rows * f.chunks * 64, 0.0f);
  f.codes.assign(f.rows * f.chunks * 64, 0);
  f.sf.assign(f.rows * f.chunks, 0);
  f.rc.resize(f.rows * f.chunks);
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

}  // namespace

Result<std::vector<float>> gemm_hopper_cpu(const Tensor& a, const Tensor& w, FastPathStats* stats) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  const int64_t M = a.geom.rows, N = w.geom.rows;
  const FoldedRows A = fold(a, iota(M), true), W = fold(w, iota(N), false);
  std::vector<float> raw(M * N);
  std::vector<FastPathStats> part(static_cast<size_t>(detail::default_threads()));
  detail::parallel_for(M * N, 64, 0, [&](int64_t i0, int64_t i1, int worker) {
    FastPathStats& st = part[worker];
    Step s;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t m = i / N, n = i % N;
      float acc = 0.0f;
      for (int64_t q = 0; q < A.chunks; ++q) {
        step(A, m, W, n, q, acc, s);
        ++st.steps;
        if (hopper::step_is_fast(A.rc[m * A.chunks + q], W.rc[n * W.chunks + q], acc)) {
          ++st.fast;
          const float t = static_cast<float>(s.t);
          const float f = add_rz_f32(acc, t);
          st.fast_mismatches += static_cast<double>(t) != s.t || f32_bits(f) != f32_bits(s.model);
          acc = f;
        } else {
          acc = s.model;
        }
      }
      raw[i] = acc;
    }
  });
  if (stats) {
    *stats = FastPathStats{};
    for (const auto& p : part) {
      stats->steps += p.steps;
      stats->fast += p.fast;
      stats->fast_mismatches += p.fast_mismatches;
    }
  }
  return raw;
}

Result<FastPathStats> hopper_fastpath_stats(const Tensor& a, const Tensor& w, const std::vector<int64_t>& weight_rows,
                                            int tile_tokens) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  if (tile_tokens <= 0 || tile_tokens % 8 != 0) return invalid_argument("tile_tokens must be a positive multiple of 8");
  for (int64_t n : weight_rows)
    if (n < 0 || n >= w.geom.rows) return invalid_argument("weight row out of range");
  const int64_t M = a.geom.rows, Mp = roundup(M, tile_tokens);
  // Token rows as the kernel tiles them: padding tokens repeat the last real one.
  std::vector<int64_t> toks(Mp);
  for (int64_t m = 0; m < Mp; ++m) toks[m] = std::min(m, M - 1);
  const FoldedRows A = fold(a, toks, true), W = fold(w, weight_rows, false);
  const int64_t Q = A.chunks;
  std::vector<FastPathStats> part(static_cast<size_t>(detail::default_threads()));
  detail::parallel_for(W.rows, 1, 0, [&](int64_t r0, int64_t r1, int worker) {
    FastPathStats& st = part[worker];
    std::vector<float> acc(Mp);
    std::vector<double> bound(Mp / tile_tokens * 4);  // the GPU keeps it in fp32 rounded up
    Step s;
    for (int64_t iw = r0; iw < r1; ++iw) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(bound.begin(), bound.end(), 0.0f);
      for (int64_t q = 0; q < Q; ++q) {
        const hopper::RowChunk& wr = W.rc[iw * Q + q];
        // The kernel's per-thread test: thread t of a tile holds tokens 8j + 2t and 8j + 2t + 1.
        std::vector<uint8_t> group_ok(Mp, 0);
        for (int64_t m0 = 0; m0 < Mp; m0 += tile_tokens)
          for (int t = 0; t < 4; ++t) {
            hopper::RowGroup g;
            hopper::group_init(g);
            float amin = 3.0e38f;
            for (int64_t j = 0; j < tile_tokens / 8; ++j)
              for (int e = 0; e < 2; ++e) {
                const int64_t m = m0 + 8 * j + 2 * t + e;
                hopper::group_add(g, A.rc[m * Q + q]);
                amin = std::min(amin, std::fabs(acc[m]));
              }
            if (q == 0) amin = 3.0e38f;  // every accumulator is +0 before the first chunk
            double& ub = bound[(m0 / tile_tokens) * 4 + t];
            float ubf = static_cast<float>(ub);
            if (static_cast<double>(ubf) < ub) ubf = std::nextafter(ubf, 3.5e38f);
            const bool ok = hopper::group_is_fast(g, wr, amin, ubf);
            ub += hopper::group_acc_bound(g, wr);
            ++st.group_steps;
            st.group_fast += ok;
            for (int64_t j = 0; j < tile_tokens / 8; ++j)
              for (int e = 0; e < 2; ++e) group_ok[m0 + 8 * j + 2 * t + e] = ok;
          }
        for (int64_t m = 0; m < M; ++m) {
          step(A, m, W, iw, q, acc[m], s);
          ++st.steps;
          const bool fast = hopper::step_is_fast(A.rc[m * Q + q], wr, acc[m]);
          st.group_unsound += group_ok[m] && !fast;
          // Is the exact chunk sum an fp32 number at all (what any exact fast path is bounded by)?
          st.exact_sum_fp32 += static_cast<double>(static_cast<float>(s.t)) == s.t;
          if (fast) {
            ++st.fast;
            const float t = static_cast<float>(s.t);
            const float f = add_rz_f32(acc[m], t);
            st.fast_mismatches += static_cast<double>(t) != s.t || f32_bits(f) != f32_bits(s.model);
            // The argument's premise, on an emulated chain keeping 23 or 25 bits (the H200 keeps 25).
            for (int bits : {23, 25}) {
              float ch = 0.0f;
              for (int g = 0; g < 4; ++g) ch = hopper_chain_step(ch, &s.prod[16 * g], 16, bits);
              ++st.chain_checked;
              st.chain_mismatches += static_cast<double>(ch) != s.t;
            }
          }
          acc[m] = s.model;
        }
        for (int64_t m = M; m < Mp; ++m) acc[m] = acc[M - 1];
      }
    }
  });
  FastPathStats all;
  for (const auto& p : part) {
    all.steps += p.steps;
    all.fast += p.fast;
    all.fast_mismatches += p.fast_mismatches;
    all.chain_checked += p.chain_checked;
    all.chain_mismatches += p.chain_mismatches;
    all.exact_sum_fp32 += p.exact_sum_fp32;
    all.group_steps += p.group_steps;
    all.group_fast += p.group_fast;
    all.group_unsound += p.group_unsound;
  }
  return all;
}

}  // namespace nvfp4
