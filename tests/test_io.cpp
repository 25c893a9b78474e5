// JSON, SHA-256, .npy.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "nvfp4/io.hpp"

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

TEST(Golden, RefusesATamperedFile) {
  const std::string dir = (std::filesystem::temp_directory_path() / "nvfp4_golden_test").string();
  ASSERT_TRUE(make_dirs(dir).is_ok());
  ASSERT_TRUE(write_text(dir + "/x.bin", "abc").is_ok());
  ASSERT_TRUE(write_text(dir + "/x.json", R"({"file": "x.bin", "sha256": "0000", "arrays": []})").is_ok());
  auto g = GoldenFile::open(dir + "/x.json");
  EXPECT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("sha256"), std::string::npos);
  std::filesystem::remove_all(dir);
}
