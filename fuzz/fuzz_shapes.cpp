// Shape lists (--linear / --shapes: NAME, NAME:N:K, NxK, comma separated).
#include <string>

#include "fuzz_check.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto s = nvfp4::parse_shapes(std::string(reinterpret_cast<const char*>(data), size));
  if (!s.is_ok()) {
  FUZZ_CHECK(s.status().message().find('\n') == std::string::npos);  // one-line errors, whatever the input
    return 0;
  }
  FUZZ_CHECK(!s->empty());
  for (const auto& l : s.value()) FUZZ_CHECK(l.n >= 1 && l.n <= nvfp4::kMaxDim && l.k >= 1 && l.k <= nvfp4::kMaxDim);
  return 0;
}
