// JSON, SHA-256, .npy; every reader and writer's refusal of an empty file name.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "nvfp4/io.hpp"
#include "nvfp4/safetensors.hpp"

using namespace nvfp4;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string s56 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex(s56.data(), s56.size()), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(JsonValue, ParseDumpRoundTrip) {
  auto j = Json::parse(R"({"a": [1, 2.5, -3e2, true, null], "b": {"c": "x\"y\n"}, "d": 1234567890123})");
  ASSERT_TRUE(j.is_ok()) << j.status().message();
  EXPECT_EQ((*j)["a"].items()[2].as_number(), -300);
  EXPECT_EQ((*j)["b"]["c"].as_string(), "x\"y\n");
  EXPECT_EQ((*j)["d"].as_int(), 1234567890123);
  auto again = Json::parse(j->dump());
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->dump(), j->dump());
  EXPECT_FALSE(Json::parse("{\"a\": }").is_ok());
  EXPECT_FALSE(Json::parse("[1, 2").is_ok());
  EXPECT_FALSE(Json::parse("{} trailing").is_ok());
}

TEST(Npy, WriteReadAndErrors) {
  const std::string dir = (std::filesystem::temp_directory_path() / "nvfp4_io_test").string();
  ASSERT_TRUE(make_dirs(dir).is_ok());
  const std::vector<uint16_t> v = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(write_npy(dir + "/a.npy", "u2", {2, 3}, v.data(), 12).is_ok());
  auto a = read_npy(dir + "/a.npy");
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a->dtype, "u2");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(0, std::memcmp(a->bytes.data(), v.data(), 12));
  EXPECT_FALSE(read_npy(dir + "/missing.npy").is_ok());
  auto d = read_file(dir);  // a directory is an error value, not an exception
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("directory"), std::string::npos);
  ASSERT_TRUE(write_text(dir + "/bad.npy", "not numpy").is_ok());
  auto bad = read_npy(dir + "/bad.npy");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("not a .npy"), std::string::npos);
  // A truncated array is refused, not read short.
  auto full = read_file(dir + "/a.npy");
  ASSERT_TRUE(write_file(dir + "/short.npy", full->data(), full->size() - 2).is_ok());
  EXPECT_FALSE(read_npy(dir + "/short.npy").is_ok());
  std::filesystem::remove_all(dir);
}

// An empty file name (an unset shell variable) is the caller's mistake, kInvalidArgument (exit 2
// through the tool), wherever a file is opened: it was "cannot open ''", kIo, like a missing file.
TEST(Files, AnEmptyNameIsBadInputForEveryReaderAndWriter) {
  const uint8_t byte = 0;
  const std::vector<std::pair<const char*, Status>> cases = {
      {"read_file", read_file("").status()},
      {"read_npy", read_npy("").status()},
      {"GoldenFile::open", GoldenFile::open("").status()},
      {"SafetensorsFile::open", SafetensorsFile::open("").status()},
      {"AtomicFile::create", AtomicFile::create("").status()},
      {"write_npy", write_npy("", "u1", {1}, &byte, 1)},
      {"write_safetensors", write_safetensors("", {StEntry{"t", StDtype::kU8, {1}, &byte, {}}}, {})},
  };
  for (const auto& [what, st] : cases) {
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << what << ": " << st.message();
    EXPECT_NE(st.message().find("empty name"), std::string::npos) << what << ": " << st.message();
  }
}

TEST(Golden, RefusesATamperedFile) {
  const std::string dir = (std::filesystem::temp_directory_path() / "nvfp4_golden_test").string();
  ASSERT_TRUE(make_dirs(dir).is_ok());
  ASSERT_TRUE(write_text(dir + "/x.bin", "abc").is_ok());
  ASSERT_TRUE(write_text(dir + "/x.json", R"({"file": "x.bin", "sha256": "0000", "arrays": []})").is_ok());
  auto g = GoldenFile::open(dir + "/x.json");
  EXPECT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("sha256"), std::string::npos);
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

// What a manifest says being wrong (not JSON, not a manifest) is bad input, kInvalidArgument (exit
// 2 through the tool); a manifest or bin that cannot be read is kIo. Both were kIo.
TEST(Golden, MalformedManifestsAreBadInputUnreadableOnesIoErrors) {
  const std::string dir = (std::filesystem::temp_directory_path() / "nvfp4_golden_codes").string();
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(make_dirs(dir).is_ok());
  ASSERT_TRUE(write_text(dir + "/x.bin", "abc").is_ok());
  const std::string sha = sha256_hex("abc", 3);
  struct Case {
    std::string manifest;
    ErrorCode code;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {R"({"file": "x.bin", "sha256": ")", ErrorCode::kInvalidArgument, "invalid JSON"},
      {R"({"file": "x.bin"} trailing)", ErrorCode::kInvalidArgument, "trailing characters"},
      {R"({"arrays": []})", ErrorCode::kInvalidArgument, "not a golden manifest"},
      {R"({"file": "../x.bin"})", ErrorCode::kInvalidArgument, "must name a file next to the manifest"},
      {R"({"file": "x.bin", "arrays": []})", ErrorCode::kInvalidArgument, "differs from the manifest's"},
      {R"({"file": "x.bin", "sha256": ")" + sha + R"(", "arrays": [{"key": "k", "dtype": "u8", "shape": [4], "offset": 0, "nbytes": 4}]})",
       ErrorCode::kInvalidArgument, "lies past the end of its file"},
      {R"({"file": "absent.bin"})", ErrorCode::kIo, "cannot open"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(write_text(dir + "/m.json", c.manifest).is_ok());
    auto g = GoldenFile::open(dir + "/m.json");
    ASSERT_FALSE(g.is_ok()) << c.manifest;
    EXPECT_EQ(g.status().code(), c.code) << c.manifest << ": " << g.status().message();
    EXPECT_NE(g.status().message().find(c.expect), std::string::npos) << c.manifest << ": " << g.status().message();
  }
  EXPECT_EQ(GoldenFile::open(dir + "/none.json").status().code(), ErrorCode::kIo);
  EXPECT_EQ(GoldenFile::open(dir).status().code(), ErrorCode::kIo);  // a directory
  EXPECT_EQ(Json::parse("{").status().code(), ErrorCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

// Python's json.dumps writes a character past U+FFFF as a UTF-16 pair (\ud83d\ude00): one code
// point, four UTF-8 bytes. Decoded as two 3-byte sequences it made safetensors headers we wrote
// unreadable; half a pair encodes nothing and is refused.
TEST(JsonValue, SurrogatePairsAreOneCodePoint) {
  auto j = Json::parse(R"({"\ud83d\ude00.w": "\u00e9\u20ac\uD834\uDD1E"})");
  ASSERT_TRUE(j.is_ok()) << j.status().message();
  EXPECT_EQ(j->members().at(0).first, "\xF0\x9F\x98\x80.w");
  EXPECT_EQ(j->members().at(0).second.as_string(), "\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E");
  for (const char* bad : {R"("\ud83d")", R"("\ude00")", R"("\ud83dx")", R"("\ud83d\u0041")", R"("\ude00\ud83d")",
                          R"("\ud83d\ude0")", R"("\ud83d\n")"}) {
    auto r = Json::parse(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  }
  EXPECT_NE(Json::parse(R"("\ud83d")").status().message().find("unpaired high surrogate \\ud83d"), std::string::npos);
}

// Whole numbers keep all 64 bits: a seed of 12345678901234567 was recorded as ...568 through a double.
TEST(JsonValue, IntegersAreExactIn64Bits) {
  EXPECT_EQ(Json(int64_t{12345678901234567}).dump(), "12345678901234567");
  EXPECT_EQ(Json(int64_t{12345678901234568}).dump(), "12345678901234568");
  EXPECT_EQ(Json(INT64_MIN).dump(), "-9223372036854775808");
  EXPECT_EQ(Json(UINT64_MAX).dump(), "18446744073709551615");
  auto j = Json::parse(R"([12345678901234567, -9223372036854775807, 18446744073709551615, 18446744073709551616, 7.0, -0, 2.5e3])");
  ASSERT_TRUE(j.is_ok());
  const auto& v = j->items();
  EXPECT_TRUE(v[0].is_int());
  EXPECT_EQ(v[0].as_int(), 12345678901234567);
  EXPECT_EQ(v[1].as_int(), -9223372036854775807);
  EXPECT_EQ(v[2].as_int(), INT64_MAX);  // saturates, but dumps exactly
  EXPECT_FALSE(v[3].is_int());          // past 64 bits: the nearest double
  EXPECT_FALSE(v[4].is_int());
  EXPECT_EQ(j->dump(0), "[12345678901234567, -9223372036854775807, 18446744073709551615, 1.8446744073709552e+19, 7, -0, 2500]");
  // Floats print as before: shortest round-trip digits, non-finite as null.
  EXPECT_EQ(Json(0.1).dump(), "0.10000000000000001");
  EXPECT_EQ(Json(std::nan("")).dump(), "null");
  EXPECT_EQ(Json(1e300).dump(), "1.0000000000000001e+300");
}

// Objects index their keys past a few members: set() and find() were linear searches, so a
// safetensors header of 200k tensors took minutes to read or write (a 100 MB one about a day).
TEST(JsonValue, LargeObjectsStayFastOrderedAndStrict) {
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kKeys = 200000;
  Json o = Json::object();
  for (int i = 0; i < kKeys; ++i) o.set("tensor." + std::to_string(i), i);
  o.set("tensor.7", "again");  // set() on an existing key replaces it in place
  ASSERT_EQ(o.size(), size_t{kKeys});
  const std::string text = o.dump(0);
  auto p = Json::parse(text);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  for (int i = 0; i < kKeys; ++i) {
    const std::string k = "tensor." + std::to_string(i);
    ASSERT_EQ(p->members()[i].first, k);  // insertion order
    const Json* v = p->find(k);
    ASSERT_NE(v, nullptr) << k;
    if (i != 7) ASSERT_EQ(v->as_int(), i) << k;
  }
  EXPECT_EQ((*p)["tensor.7"].as_string(), "again");
  EXPECT_EQ(p->find("tensor.200000"), nullptr);
  // A copy has its own index.
  Json c = p.value();
  c.set("extra", 1);
  EXPECT_EQ(p->find("extra"), nullptr);
  EXPECT_EQ(c["extra"].as_int(), 1);
  EXPECT_EQ(c["tensor.199999"].as_int(), 199999);
  // The parser still refuses a repeated key, first and last alike.
  const std::string dup = text.substr(0, text.size() - 1) + ",\"tensor.0\":1}";
  auto d = Json::parse(dup);
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("duplicate key 'tensor.0'"), std::string::npos) << d.status().message();
  EXPECT_FALSE(Json::parse(R"({"a": 1, "b": 2, "a": 3})").is_ok());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0) << "200k keys took " << s << " s";
}
