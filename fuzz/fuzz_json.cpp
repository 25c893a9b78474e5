// JSON (golden manifests, reports read back): what parses dumps to text that parses to the same dump.
#include <string_view>

#include "fuzz_check.hpp"
#include "nvfp4/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nvfp4::Json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!j.is_ok()) return 0;
  const std::string once = j->dump(size & 1);
  auto again = nvfp4::Json::parse(once);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(again->dump(size & 1) == once);
  (void)j->as_int();
  return 0;
}
