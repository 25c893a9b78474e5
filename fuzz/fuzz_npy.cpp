// .npy reader (parse_npy, behind read_npy): any bytes give an array whose byte count is exactly
// its shape's, or a one-line error.
#include "fuzz_check.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto a = nvfp4::parse_npy(data, size, "fuzz.npy");
  if (!a.is_ok()) {
    FUZZ_CHECK(a.status().message().find('\n') == std::string::npos);
    return 0;
  }
  int64_t count = 1;
  for (int64_t d : a->shape) {
    FUZZ_CHECK(d >= 0 && d <= nvfp4::kMaxDim);
    count *= d;  // the parser checked the product
  }
  const int64_t elem = a->dtype == "u1" ? 1 : a->dtype == "u2" ? 2 : 4;
  FUZZ_CHECK(static_cast<int64_t>(a->bytes.size()) == count * elem);
  return 0;
}
