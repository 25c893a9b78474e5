// safetensors reader and writer: round trips, every header rule refused with a one-line message
// naming the file and the tensor, and writes that leave nothing half-written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "cli_run.hpp"
#include "nvfp4/safetensors.hpp"

using namespace nvfp4;

namespace {

std::string tmpdir() {
  const auto d = std::filesystem::temp_directory_path() / "nvfp4_safetensors_test";
  std::filesystem::create_directories(d);
  return d.string();
}

// A file image from a header text and a data buffer; `len` overrides the header length field.
constexpr uint64_t kOwnLength = ~uint64_t{0};
std::string image(const std::string& header, const std::string& buffer, uint64_t len = kOwnLength) {
  const uint64_t n = len == kOwnLength ? header.size() : len;
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + buffer;
}

Result<SafetensorsFile> open_image(const std::string& name, const std::string& img) {
  const std::string path = tmpdir() + "/" + name;
  EXPECT_TRUE(write_file(path, img.data(), img.size()).is_ok());
  return SafetensorsFile::open(path);
}

// Files left in the test directory besides the expected ones (temporary files of failed writes).
size_t stray_files(const std::string& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("." + prefix, 0) == 0) ++n;
  return n;
}

}  // namespace

TEST(Safetensors, DtypeNamesAndSizes) {
  for (StDtype d : {StDtype::kBool, StDtype::kU8, StDtype::kF8E4M3, StDtype::kBF16, StDtype::kF16, StDtype::kF32,
                    StDtype::kI64, StDtype::kF64, StDtype::kC64}) {
    auto p = parse_st_dtype(to_string(d));
    ASSERT_TRUE(p.is_ok()) << to_string(d);
    EXPECT_EQ(p.value(), d);
  }
  EXPECT_EQ(st_dtype_size(StDtype::kBF16), 2);
  EXPECT_EQ(st_dtype_size(StDtype::kF8E4M3), 1);
  EXPECT_EQ(st_dtype_size(StDtype::kF64), 8);
  EXPECT_FALSE(parse_st_dtype("bf16").is_ok());  // the spelling is exact
  EXPECT_FALSE(parse_st_dtype("F4").is_ok());
}

TEST(Safetensors, WriteReadRoundTrip) {
  const std::string path = tmpdir() + "/round.safetensors";
  std::vector<uint8_t> u8(7);
  for (size_t i = 0; i < u8.size(); ++i) u8[i] = static_cast<uint8_t>(i * 37 + 1);
  std::vector<uint16_t> bf(3 * 5);
  for (size_t i = 0; i < bf.size(); ++i) bf[i] = static_cast<uint16_t>(0x3f80 + i * 77);
  const float scalar = 0.00123f;
  const std::vector<uint8_t> produced = {0x38, 0x40, 0x7e, 0x01};
  std::vector<StEntry> e;
  e.push_back({"a.u8", StDtype::kU8, {7}, u8.data(), {}});
  e.push_back({"b.bf16", StDtype::kBF16, {3, 5}, reinterpret_cast<const uint8_t*>(bf.data()), {}});
  e.push_back({"c.scalar", StDtype::kF32, {}, reinterpret_cast<const uint8_t*>(&scalar), {}});
  e.push_back({"d.empty", StDtype::kF16, {0, 4}, reinterpret_cast<const uint8_t*>(&scalar), {}});
  e.push_back({"e.e4m3", StDtype::kF8E4M3, {2, 2}, nullptr, [&]() -> Result<std::vector<uint8_t>> { return produced; }});
  uint64_t last_done = 0, last_total = 0;
  ASSERT_TRUE(write_safetensors(path, e, {{"k", "v"}, {"json", "{\"x\": 1}"}},
                                [&](uint64_t d, uint64_t t) { last_done = d; last_total = t; })
                  .is_ok());
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(last_total, 7u + 30u + 4u + 0u + 4u);
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->header().data_start() % 8, 0u);  // the buffer starts aligned
  ASSERT_EQ(f->tensors().size(), 5u);
  for (size_t i = 0; i < e.size(); ++i) {
    const StTensor& t = f->tensors()[i];
    EXPECT_EQ(t.name, e[i].name);
    EXPECT_EQ(t.dtype, e[i].dtype);
    EXPECT_EQ(t.shape, e[i].shape);
  }
  EXPECT_EQ(0, std::memcmp(f->data(*f->find("a.u8")), u8.data(), 7));
  EXPECT_EQ(0, std::memcmp(f->data(*f->find("b.bf16")), bf.data(), 30));
  EXPECT_EQ(0, std::memcmp(f->data(*f->find("c.scalar")), &scalar, 4));
  EXPECT_EQ(f->find("c.scalar")->numel(), 1);
  EXPECT_EQ(f->find("d.empty")->nbytes(), 0u);
  EXPECT_EQ(0, std::memcmp(f->data(*f->find("e.e4m3")), produced.data(), 4));
  ASSERT_NE(f->metadata("json"), nullptr);
  EXPECT_EQ(*f->metadata("json"), "{\"x\": 1}");
  EXPECT_EQ(f->metadata("absent"), nullptr);
  EXPECT_EQ(f->find("absent"), nullptr);
}

TEST(Safetensors, WriterLeavesNothingHalfWritten) {
  const std::string dir = tmpdir() + "/atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.safetensors";
  const uint8_t one = 1;
  ASSERT_TRUE(write_safetensors(path, {{"x", StDtype::kU8, {1}, &one, {}}}, {}).is_ok());
  const auto before = std::filesystem::file_size(path);
  // A producer that fails after a tensor was written: the old file stays, no temporary remains.
  std::vector<StEntry> e = {{"a", StDtype::kU8, {1}, &one, {}},
                            {"b", StDtype::kU8, {4}, nullptr, []() -> Result<std::vector<uint8_t>> { return io_error("disk on fire"); }}};
  auto st = write_safetensors(path, e, {});
  EXPECT_FALSE(st.is_ok());
  EXPECT_EQ(st.message(), "disk on fire");
  EXPECT_EQ(std::filesystem::file_size(path), before);
  EXPECT_EQ(stray_files(dir, "out.safetensors"), 0u);
  // A producer whose size disagrees with the shape.
  e[1].produce = []() -> Result<std::vector<uint8_t>> { return std::vector<uint8_t>(3); };
  st = write_safetensors(path, e, {});
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("produced 3 bytes"), std::string::npos) << st.message();
  EXPECT_EQ(stray_files(dir, "out.safetensors"), 0u);
  // Refused before writing: duplicate names, reserved name, duplicate metadata, missing directory.
  EXPECT_FALSE(write_safetensors(path, {{"a", StDtype::kU8, {1}, &one, {}}, {"a", StDtype::kU8, {1}, &one, {}}}, {}).is_ok());
  EXPECT_FALSE(write_safetensors(path, {{"__metadata__", StDtype::kU8, {1}, &one, {}}}, {}).is_ok());
  EXPECT_FALSE(write_safetensors(path, {{"a", StDtype::kU8, {1}, &one, {}}}, {{"k", "1"}, {"k", "2"}}).is_ok());
  EXPECT_FALSE(write_safetensors(path, {{"a", StDtype::kU8, {-1}, &one, {}}}, {}).is_ok());
  EXPECT_FALSE(write_safetensors(dir + "/no/such/dir/x.safetensors", {{"a", StDtype::kU8, {1}, &one, {}}}, {}).is_ok());
  EXPECT_EQ(std::filesystem::file_size(path), before);
  EXPECT_EQ(stray_files(dir, "out.safetensors"), 0u);
}

TEST(Safetensors, AcceptsPaddingEmptyFilesAndAnyTensorOrder) {
  // Header padded with spaces (what writers do for alignment), tensors listed out of offset order.
  auto f = open_image("ok1", image(R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}   )", "abcd"));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data(*f->find("a"))), 2), "ab");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data(*f->find("b"))), 2), "cd");
  auto empty = open_image("ok2", image("{}", ""));
  ASSERT_TRUE(empty.is_ok()) << empty.status().message();
  EXPECT_TRUE(empty->tensors().empty());
}

struct BadCase {
  const char* name;
  std::string img;
  const char* expect;  // a piece of the message
  const char* tensor;  // the tensor the message must name (or "")
};

TEST(Safetensors, RefusesEveryMalformedHeader) {
  const std::string u8x2 = R"("dtype":"U8","shape":[2])";
  const std::vector<BadCase> cases = {
      {"short", std::string("\x05\x00\x00", 3), "shorter than the 8-byte", ""},
      {"trunc_header", image("{}", "", 40), "truncated: header length 40", ""},
      {"huge_header", image("{}", "", 200'000'000), "exceeds the 100000000-byte limit", ""},
      {"max_u64", image("{}", "", kOwnLength - 1), "exceeds", ""},  // length field 0xFFFF...FE
      {"not_object", image("[1, 2]", ""), "must start with '{'", ""},
      {"bad_json", image(R"({"a": {"dtype": "U8", )", ""), "header: invalid JSON", ""},
      {"bad_utf8", image("{\"\xff\": 1}", ""), "not valid UTF-8", ""},
      {"duplicate", image(R"({"a":{)" + u8x2 + R"(,"data_offsets":[0,2]},"a":{)" + u8x2 + R"(,"data_offsets":[2,4]}})", "abcd"), "duplicate key 'a'", ""},
      {"entry_not_object", image(R"({"a": 3})", ""), "not a JSON object", "a"},
      {"unknown_dtype", image(R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "a"), "unknown or unsupported dtype 'F4'", "w"},
      {"missing_dtype", image(R"({"w":{"shape":[2],"data_offsets":[0,2]}})", "ab"), "missing or non-string dtype", "w"},
      {"negative_dim", image(R"({"w":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})", "ab"), "non-negative integers", "w"},
      {"fraction_dim", image(R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,2]}})", "ab"), "non-negative integers", "w"},
      {"overflow_dims", image(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})", ""), "too many elements", "w"},
      {"missing_offsets", image(R"({"w":{)" + u8x2 + "}}", "ab"), "data_offsets must be", "w"},
      {"three_offsets", image(R"({"w":{)" + u8x2 + R"(,"data_offsets":[0,1,2]}})", "ab"), "data_offsets must be", "w"},
      {"end_before_begin", image(R"({"w":{)" + u8x2 + R"(,"data_offsets":[2,0]}})", "ab"), "is before begin", "w"},
      {"past_end", image(R"({"w":{)" + u8x2 + R"(,"data_offsets":[6,8]}})", "ab"), "run past the end", "w"},
      {"size_mismatch", image(R"({"w":{"dtype":"BF16","shape":[2],"data_offsets":[0,2]}})", "ab"), "needs 4 bytes, data_offsets give 2", "w"},
      {"overlap", image(R"({"a":{)" + u8x2 + R"(,"data_offsets":[0,2]},"b":{)" + u8x2 + R"(,"data_offsets":[1,3]}})", "abc"), "overlap tensor 'a'", "b"},
      {"gap", image(R"({"a":{)" + u8x2 + R"(,"data_offsets":[0,2]},"b":{)" + u8x2 + R"(,"data_offsets":[3,5]}})", "abcde"), "unused", "b"},
      {"trailing", image(R"({"a":{)" + u8x2 + R"(,"data_offsets":[0,2]}})", "abcd"), "trailing bytes", ""},
      {"meta_not_string", image(R"({"__metadata__":{"k":1}})", ""), "is not a string", ""},
      {"meta_not_object", image(R"({"__metadata__":"x"})", ""), "__metadata__ is not a JSON object", ""},
      {"unknown_field", image(R"({"w":{)" + u8x2 + R"(,"data_offsets":[0,2],"extra":1}})", "ab"), "unknown header field 'extra'", "w"},
      {"empty_name", image(R"({"":{)" + u8x2 + R"(,"data_offsets":[0,2]}})", "ab"), "empty name", ""},
  };
  for (const auto& c : cases) {
    auto f = open_image(std::string("bad_") + c.name, c.img);
    ASSERT_FALSE(f.is_ok()) << c.name;
    const std::string& m = f.status().message();
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument) << c.name;  // bad input, not an I/O error
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.name << ": " << m;
    EXPECT_NE(m.find(std::string("bad_") + c.name), std::string::npos) << c.name << " does not name the file: " << m;
    if (*c.tensor) EXPECT_NE(m.find(std::string("tensor '") + c.tensor + "'"), std::string::npos) << c.name << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << c.name;
    // The same image in memory gives the same verdict.
    auto v = SafetensorsFile::view(reinterpret_cast<const uint8_t*>(c.img.data()), c.img.size(), std::string("bad_") + c.name);
    EXPECT_FALSE(v.is_ok()) << c.name;
  }
  // A file that cannot be read at all is the I/O error.
  EXPECT_EQ(SafetensorsFile::open(tmpdir() + "/does-not-exist.safetensors").status().code(), ErrorCode::kIo);
  EXPECT_EQ(SafetensorsFile::open(tmpdir()).status().code(), ErrorCode::kIo);  // a directory
}

TEST(Safetensors, EveryTruncationOfAValidFileIsRefused) {
  const std::string path = tmpdir() + "/trunc.safetensors";
  const std::vector<uint8_t> a = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(write_safetensors(path, {{"x", StDtype::kU8, {2, 3}, a.data(), {}}, {"y", StDtype::kU16, {1}, a.data(), {}}}, {{"m", "n"}}).is_ok());
  auto full = read_file(path);
  ASSERT_TRUE(full.is_ok());
  ASSERT_TRUE(SafetensorsFile::view(full->data(), full->size(), "full").is_ok());
  for (size_t n = 0; n < full->size(); ++n)
    EXPECT_FALSE(SafetensorsFile::view(full->data(), n, "cut").is_ok()) << "accepted a file cut at " << n << " bytes";
}

// Headers with hundreds of thousands of keys: writing one, reading it and `inspect` each called a
// linear-search Json::set per key (quadratic: over two minutes here at 100k keys, about a day at the
// 100 MB limit).
TEST(Safetensors, HeadersWithManyKeysAreFast) {
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kKeys = 100000;
  std::vector<StEntry> entries;
  std::vector<std::pair<std::string, std::string>> meta;
  for (int i = 0; i < kKeys; ++i) {
    entries.push_back(StEntry{"blocks." + std::to_string(i) + ".weight", StDtype::kF32, {0}, nullptr, {}});
    meta.emplace_back("key." + std::to_string(i), std::to_string(i));
  }
  const std::string path = tmpdir() + "/many.safetensors";
  ASSERT_TRUE(write_safetensors(path, entries, meta).is_ok());
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  ASSERT_EQ(f->tensors().size(), size_t{kKeys});
  ASSERT_EQ(f->header().metadata.size(), size_t{kKeys});
  EXPECT_EQ(f->header().metadata[54321].first, "key.54321");  // header order kept
  EXPECT_NE(f->find("blocks.99999.weight"), nullptr);
  auto r = run("inspect " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("100000 tensors"), std::string::npos) << r.out;
  // A key given twice is still refused by the writer.
  meta.emplace_back("key.5", "again");
  EXPECT_FALSE(write_safetensors(tmpdir() + "/dup.safetensors", entries, meta).is_ok());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0) << "100k tensors and 100k metadata keys took " << s << " s";
}
