// The safetensors fuzz harness (fuzz/fuzz_safetensors.cpp) over its seed corpus and systematic
// mutations of it - every truncation and, in the header, every single-byte change of a few kinds -
// so the parser's robustness is checked in CI even where libFuzzer is not available.
#include <gtest/gtest.h>

#include <filesystem>

#include "nvfp4/io.hpp"
#include "nvfp4/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

TEST(FuzzCorpus, SafetensorsHarnessSurvivesSeedsAndMutations) {
  size_t seeds = 0, valid = 0;
  for (const auto& e : std::filesystem::directory_iterator(NVFP4_FUZZ_CORPUS "/safetensors")) {
    auto bytes = nvfp4::read_file(e.path().string());
    ASSERT_TRUE(bytes.is_ok());
    std::vector<uint8_t> b = bytes.value();
    ++seeds;
    valid += nvfp4::SafetensorsFile::view(b.data(), b.size(), "seed").is_ok();
    for (size_t n = 0; n <= b.size(); ++n) {
      std::vector<uint8_t> cut(b.begin(), b.begin() + n);  // exact-size copy: over-reads hit the heap end
      LLVMFuzzerTestOneInput(cut.data(), cut.size());
    }
    const size_t header_end = std::min<size_t>(b.size(), 640);
    for (size_t i = 0; i < header_end; ++i)
      for (uint8_t v : {uint8_t(0x00), uint8_t(0xFF), uint8_t('9'), uint8_t('"'), uint8_t('}'), uint8_t(b[i] ^ 0x01)}) {
        std::vector<uint8_t> m = b;
        m[i] = v;
        LLVMFuzzerTestOneInput(m.data(), m.size());
      }
  }
  EXPECT_GE(seeds, 3u);
  EXPECT_GE(valid, 3u);  // the seeds themselves parse, so the mutations start from real files
}
