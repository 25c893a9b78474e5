// Golden-vector files (GoldenFile): manifest JSON, a NUL byte, then the .bin. The harness writes
// the bin's true sha256 into a parsed manifest so the fuzzer gets past the hash check to the
// array table; every array the reader accepts must then lie inside the bin.
#include <cstring>
#include <string_view>

#include "fuzz_check.hpp"
#include "nvfp4/io.hpp"

using namespace nvfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find('\0');
  const std::string_view text = in.substr(0, cut);
  std::vector<uint8_t> bin;
  if (cut != std::string_view::npos) bin.assign(data + cut + 1, data + size);
  auto m = Json::parse(text);
  if (!m.is_ok()) return 0;
  Json manifest = m.value();
  if (manifest.type() == Json::Type::kObject && (size & 1)) manifest.set("sha256", sha256_hex(bin.data(), bin.size()));
  const uint8_t* lo = bin.data();
  const size_t n = bin.size();
  auto g = GoldenFile::from_parts(std::move(manifest), std::move(bin), "fuzz.bin");
  if (!g.is_ok()) {
    FUZZ_CHECK(g.status().message().find('\n') == std::string::npos);  // one-line errors, whatever the input
    return 0;
  }
  for (const auto& key : g->keys()) {
    auto a = g->get(key);
    FUZZ_CHECK(a.is_ok());
    FUZZ_CHECK(a->nbytes == 0 || (a->data >= lo && a->data + a->nbytes <= lo + n));
    FUZZ_CHECK(a->count() >= 0);
    const auto v = a->to_vector<uint8_t>();
    FUZZ_CHECK(v.size() == a->nbytes);
  }
  return 0;
}
