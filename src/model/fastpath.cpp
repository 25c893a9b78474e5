// CPU check of the Hopper fast-path conditions (docs/hopper-exact-path.md): how often they hold on
// given operands, and that where they hold, add.rz(acc, exact chunk sum) is the §3 model's step.
#include <cfenv>
#include <cmath>

#include "../common/parallel.hpp"
#include "chunk.hpp"
#include "mma_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

namespace {
int scale_exp(uint8_t b) { return ((b >> 3) & 0xF) == 0 ? -6 : static_cast<int>((b >> 3) & 0xF) - 7; }
bool scale_zero(uint8_t b) { return (b & 0x7F) == 0; }

// RZ(x + y) in fp32 for finite x, y: what add.rz.f32 returns.
float add_rz(float x, float y) {
  const int old = std::fegetround();
  std::fesetround(FE_TOWARDZERO);
  volatile float vx = x, vy = y;
  volatile float r = vx + vy;
  std::fesetround(old);
  return r;
}
}  // namespace

Result<FastPathStats> hopper_fastpath_stats(const Tensor& a, const Tensor& w, const std::vector<Coord>& at) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  const int64_t chunks = ceil_div(a.geom.cols16, 64);
  std::vector<FastPathStats> part(static_cast<size_t>(detail::default_threads()));
  detail::parallel_for(static_cast<int64_t>(at.size()), 16, 0, [&](int64_t i0, int64_t i1, int worker) {
    FastPathStats& st = part[worker];
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t m = at[i].m, n = at[i].n;
      float acc = 0.0f;
      for (int64_t q = 0; q < chunks; ++q) {
        int32_t p4[4];
        bool any[4];
        uint8_t ac[detail::kChunkK], bc[detail::kChunkK], sa[4], sb[4];
        detail::load_chunk(a, m, q, ac, sa);
        detail::load_chunk(w, n, q, bc, sb);
        detail::group_sums(ac, bc, p4, any);
        int emin = 1000, emax = -1000;
        bool nan = false;
        for (int g = 0; g < 4; ++g) {
          nan = nan || (sa[g] & 0x7F) == 0x7F || (sb[g] & 0x7F) == 0x7F;
          if (!scale_zero(sa[g]) && !scale_zero(sb[g])) {  // blocks whose products can be non-zero
            const int e = scale_exp(sa[g]) + scale_exp(sb[g]);
            emin = e < emin ? e : emin;
            emax = e > emax ? e : emax;
          }
        }
        const float model = model::mma_element(p4, any, sa, sb, acc);
        ++st.steps;
        const bool tc = !nan && (emax < emin || emax - emin <= 3);  // condition 1 (no live block: trivially)
        int ec = -1000;
        if (acc != 0.0f) {
          int e2;
          std::frexp(acc, &e2);
          ec = std::max(e2 - 1, -126);
        }
        const bool no_trunc = !nan && std::isfinite(acc) &&
                              (emax < emin || acc == 0.0f || (ec >= emax - 12 && ec <= emin + 27));  // condition 2
        st.tc_exact += tc;
        st.no_truncation += no_trunc;
        if (tc && no_trunc) {
          // The chain's exact result: the four block terms summed exactly (double holds them).
          double ch = 0;
          for (int g = 0; g < 4; ++g)
            if (!scale_zero(sa[g]) && !scale_zero(sb[g]))
              ch += static_cast<double>(p4[g]) / 4.0 * ue4m3_decode(sa[g]) * ue4m3_decode(sb[g]);
          const float chf = static_cast<float>(ch);
          const float fast = add_rz(acc, chf);
          const bool saturated = std::fabs(fast) == 3.40282347e38f;  // left to the slow path (overflow rule)
          if (!saturated) {
            ++st.fast;
            const bool same = f32_bits(fast) == f32_bits(model) && static_cast<double>(chf) == ch;
            st.fast_mismatches += !same;
          }
        }
        acc = model;
      }
    }
  });
  FastPathStats all;
  for (const auto& p : part) {
    all.steps += p.steps;
    all.tc_exact += p.tc_exact;
    all.no_truncation += p.no_truncation;
    all.fast += p.fast;
    all.fast_mismatches += p.fast_mismatches;
  }
  return all;
}

}  // namespace nvfp4
