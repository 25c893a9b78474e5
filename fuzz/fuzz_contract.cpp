// Reduction-contract strings (--candidate B@CONTRACT, --sensitivity, --plant): a parsed contract
// prints back to a string that parses to the same contract, and its K slices tile [0, roundup(K, 64)).
#include <string_view>

#include "fuzz_check.hpp"
#include "nvfp4/format.hpp"
#include "nvfp4/model.hpp"

using namespace nvfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  auto c = ReductionContract::parse(s);
  if (!c.is_ok()) {
  FUZZ_CHECK(c.status().message().find('\n') == std::string::npos);  // one-line errors, whatever the input
    return 0;
  }
  auto again = ReductionContract::parse(c->to_string());
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(again->to_string() == c->to_string());
  FUZZ_CHECK(again->splits == c->splits && again->merge == c->merge);
  for (int64_t k : {int64_t{1}, int64_t{64}, int64_t{1000}, int64_t{14336}, int64_t{1} + static_cast<int64_t>(size) * 97}) {
    const auto sl = c->slices(k);
    FUZZ_CHECK(!sl.empty());
    int64_t at = 0;
    for (const auto& [b, e] : sl) {
      FUZZ_CHECK(b == at && e >= b);
      at = e;
    }
    FUZZ_CHECK(at == roundup(k, 64));
  }
  return 0;
}
