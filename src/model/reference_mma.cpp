// A second, independent evaluation of docs/numerics.md §3, written straight from the spec's steps in
// long double arithmetic (64-bit significand: every intermediate below is exact), with the final
// round-toward-zero done by the FPU's own rounding mode rather than by bit manipulation. It shares
// no code with mma_step.hpp on purpose: the two must agree bit for bit.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>

#include "nvfp4/model.hpp"

namespace nvfp4 {

namespace {
static_assert(std::numeric_limits<long double>::digits >= 64,
              "the reference needs a 64-bit long double significand to hold every sum exactly");

struct Term {
  long double sig;  // significand, not renormalised
  int exp;
};
constexpr int kZeroExp = -139;

// UE4M3 scale -> (significand in [1,2) or m/8 for subnormals, exponent); sign bit ignored.
Term scale_term(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  if (e == 0) return {static_cast<long double>(m) / 8.0L, -6};
  return {1.0L + static_cast<long double>(m) / 8.0L, e - 7};
}

// Round toward zero to fp32 under the FPU's rounding mode; >= 2^128 is Inf (step 7).
float to_f32_rz(long double v) {
  if (std::fabs(v) >= std::ldexp(1.0L, 128)) return v > 0 ? std::numeric_limits<float>::infinity()
                                                            : -std::numeric_limits<float>::infinity();
  const int old = std::fegetround();
  std::fesetround(FE_TOWARDZERO);
  volatile long double vv = v;
  volatile float f = static_cast<float>(vv);
  std::fesetround(old);
  return f;
}
}  // namespace

float reference_mma_element(const uint8_t* a64, const uint8_t* b64, const uint8_t* sfa4, const uint8_t* sfb4,
                            float c) {
  // Step 8 first: NaN scales or c.
  bool nan = std::isnan(c);
  for (int g = 0; g < 4; ++g) nan = nan || (sfa4[g] & 0x7F) == 0x7F || (sfb4[g] & 0x7F) == 0x7F;
  if (nan) return std::numeric_limits<float>::quiet_NaN();  // canonicalised by the caller's compare
  if (std::isinf(c)) return c;

  Term terms[5];
  for (int g = 0; g < 4; ++g) {
    // Step 1: exact products of decoded E2M1 values.
    long double p = 0;
    bool all_zero = true;
    for (int k = 16 * g; k < 16 * g + 16; ++k) {
      const long double prod = static_cast<long double>(e2m1_decode(a64[k])) * e2m1_decode(b64[k]);
      p += prod;
      if (prod != 0) all_zero = false;
    }
    // Step 2-3: scale significands multiply in, exponents add; zero rule.
    const Term sa = scale_term(sfa4[g]), sb = scale_term(sfb4[g]);
    const long double sp = sa.sig * sb.sig;
    terms[g] = {p * sp, (all_zero || sp == 0) ? kZeroExp : sa.exp + sb.exp};
  }
  // Step 4: c as significand and exponent.
  if (c == 0) {
    terms[4] = {0, kZeroExp};
  } else {
    int e;
    const long double fr = std::frexp(static_cast<long double>(c), &e);  // c = fr * 2^e, |fr| in [0.5,1)
    int ce = e - 1;
    long double sig = fr * 2;
    if (ce < -126) {  // fp32 subnormal: exponent -126, significand < 1
      sig = std::ldexp(sig, ce + 126);
      ce = -126;
    }
    terms[4] = {sig, ce};
  }
  // Step 5-6: truncate each term to 35 fractional bits below 2^e_max, sum exactly.
  int e_max = terms[0].exp;
  for (const Term& t : terms) e_max = std::max(e_max, t.exp);
  long double sum = 0;
  for (const Term& t : terms) sum += std::trunc(std::ldexp(t.sig, t.exp - e_max + 35));
  // Step 7: scale back and round toward zero once.
  if (sum == 0) return 0.0f;
  return to_f32_rz(std::ldexp(sum, e_max - 35));
}

}  // namespace nvfp4
