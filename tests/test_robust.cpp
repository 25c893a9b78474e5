// Robustness: sizes from input are checked before use, malformed files are refused in one line, and
// writes are atomic (a killed writer leaves the old file or none). Regression tests for what the
// fuzzers in fuzz/ found live here too.
#include <gtest/gtest.h>

#include "cli_run.hpp"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/parallel.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/limits.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/safetensors.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;
namespace fs = std::filesystem;

// The tests that set an address-space limit: AddressSanitizer reserves more than they allow.
#if defined(__SANITIZE_ADDRESS__)
#define NVFP4_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVFP4_UNDER_ASAN 1
#endif
#endif
#ifdef NVFP4_UNDER_ASAN
#define SKIP_UNDER_ASAN() GTEST_SKIP() << "skipped: AddressSanitizer reserves more address space than the limit this test sets"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

namespace {
std::string scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("nvfp4_robust_" + std::to_string(getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A .npy file with `header` as its dict literal and `data` bytes after it.
std::vector<uint8_t> npy_bytes(const std::string& header, size_t data_bytes, int version = 1) {
  std::string h = header;
  const size_t pre = version == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  b.push_back(static_cast<uint8_t>(h.size() & 0xFF));
  b.push_back(static_cast<uint8_t>(h.size() >> 8));
  if (version != 1) {
    b.push_back(0);
    b.push_back(0);
  }
  b.insert(b.end(), h.begin(), h.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

std::string npy_error(const std::string& header, size_t data_bytes) {
  const auto b = npy_bytes(header, data_bytes);
  auto a = parse_npy(b.data(), b.size(), "t.npy");
  return a.is_ok() ? std::string("ok") : a.status().message();
}

Run run_cli(const std::string& args, const std::string& prefix = "") { return run(args, prefix); }
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(Limits, DimensionsProductsAndMemory) {
  EXPECT_TRUE(check_dim(1, "d").is_ok());
  EXPECT_TRUE(check_dim(kMaxDim, "d").is_ok());
  EXPECT_TRUE(check_dim(0, "d", true).is_ok());
  EXPECT_NE(check_dim(0, "d").message().find("must be positive"), std::string::npos);
  EXPECT_NE(check_dim(-3, "--rows").message().find("--rows is negative (-3)"), std::string::npos);
  EXPECT_NE(check_dim(kMaxDim + 1, "--rows").message().find("larger than the supported maximum"), std::string::npos);
  EXPECT_EQ(checked_mul(3037000499, 3037000499, "p").value(), 9223372030926249001);
  EXPECT_FALSE(checked_mul(3037000500, 3037000500, "p").is_ok());
  EXPECT_FALSE(checked_mul(-1, 5, "p").is_ok());
  EXPECT_FALSE(checked_product({1 << 30, 1 << 30, 1 << 30}, "p").is_ok());
  EXPECT_EQ(checked_product({16, 16, 2}, "p").value(), 512);
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(uint64_t{3} << 30), "3.0 GiB");

  // The memory ceiling: physical memory, lowered by NVFP4_MEMORY_LIMIT.
  const uint64_t phys = memory_budget_bytes();
  EXPECT_GT(phys, uint64_t{1} << 20);
  ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", "64M", 1), 0);
  EXPECT_EQ(memory_budget_bytes(), uint64_t{64} << 20);
  Status big = check_gemm_problem(4096, 5376, 14336, 3, "fc2");
  EXPECT_EQ(big.code(), ErrorCode::kUnsupported);
  EXPECT_NE(big.message().find("fc2 (4096x5376x14336) needs"), std::string::npos) << big.message();
  EXPECT_NE(big.message().find("this machine has 64.0 MiB"), std::string::npos) << big.message();
  EXPECT_TRUE(check_gemm_problem(16, 64, 64, 3, "tiny").is_ok());
  // Quantize refuses before allocating (the pointer is never read on refusal).
  const uint16_t one = 0;
  auto q = quantize(&one, 1 << 20, 1 << 20, 1.0f, QuantizeOptions{});
  EXPECT_EQ(q.status().code(), ErrorCode::kUnsupported);
  // A value that is not a size is an error, not silently the physical memory.
  for (const char* bad : {"not-a-size", "10MB", "1.5G", "0", "-1", " 64M", "64M ", "+64M", "", "K", "99999999999G"}) {
    ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", bad, 1), 0);
    const Status st = check_memory_limit_env();
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("NVFP4_MEMORY_LIMIT='"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("<bytes|NK|NM|NG>"), std::string::npos) << st.message();
    EXPECT_EQ(check_gemm_problem(16, 64, 64, 3, "tiny").code(), ErrorCode::kInvalidArgument) << bad;
  }
  for (const char* good : {"1048576", "64k", "64M", "2g"}) {
    ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", good, 1), 0);
    EXPECT_TRUE(check_memory_limit_env().is_ok()) << good;
  }
  unsetenv("NVFP4_MEMORY_LIMIT");
  EXPECT_TRUE(check_memory_limit_env().is_ok());
  EXPECT_FALSE(check_gemm_problem(kMaxDim, kMaxDim, kMaxDim, 3, "absurd").is_ok());
  EXPECT_EQ(check_gemm_problem(-1, 8, 8, 1, "neg").code(), ErrorCode::kInvalidArgument);
}

// The check and the budget read NVFP4_MEMORY_LIMIT through one parser, at every call: both follow a
// value changed at run time, and a value the check refuses never lowers the budget.
TEST(Limits, MemoryLimitIsReadAtEveryCallByTheCheckAndTheBudget) {
  unsetenv("NVFP4_MEMORY_LIMIT");
  const uint64_t phys = memory_budget_bytes();
  const std::pair<const char*, uint64_t> sizes[] = {{"64M", uint64_t{64} << 20}, {"3k", 3072}, {"1048577", 1048577},
                                                    {"1G", uint64_t{1} << 30}};
  for (const auto& [text, bytes] : sizes) {
    ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", text, 1), 0);
    EXPECT_TRUE(check_memory_limit_env().is_ok()) << text;
    EXPECT_EQ(memory_budget_bytes(), std::min(bytes, phys)) << text;
  }
  for (const char* bad : {"2M ", "0", "17179869184G"}) {
    ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", bad, 1), 0);
    EXPECT_EQ(check_memory_limit_env().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(memory_budget_bytes(), phys) << bad;
  }
  // Larger than the machine: the machine's memory stays the ceiling.
  ASSERT_EQ(setenv("NVFP4_MEMORY_LIMIT", "17179869183G", 1), 0);
  EXPECT_TRUE(check_memory_limit_env().is_ok());
  EXPECT_EQ(memory_budget_bytes(), phys);
  unsetenv("NVFP4_MEMORY_LIMIT");
  EXPECT_EQ(memory_budget_bytes(), phys);
}

TEST(Limits, ParseDimsAndRawSizes) {
  EXPECT_EQ(parse_dims("40,48", "--shape", 2).value(), (std::vector<int64_t>{40, 48}));
  for (const char* bad : {"", ",", "40", "40,", ",48", "40,48,1", "4O,48", "40, 48", "+40,48", "0x10,4", "40,48x"})
    EXPECT_FALSE(parse_dims(bad, "--shape", 2).is_ok()) << bad;
  EXPECT_NE(parse_dims("10,-5", "--shape", 2).status().message().find("--shape[1] is negative"), std::string::npos);
  EXPECT_NE(parse_dims("99999999999999999999,1", "--shape", 2).status().message().find("does not fit 64 bits"),
            std::string::npos);
  EXPECT_TRUE(check_raw_size(40 * 48 * 2, {40, 48}, 2, "x.bin").is_ok());
  EXPECT_NE(check_raw_size(10, {40, 48}, 2, "x.bin").message().find("'x.bin' has 10 bytes"), std::string::npos);
  EXPECT_FALSE(check_raw_size(0, {kMaxDim, kMaxDim, kMaxDim}, 4, "x.bin").is_ok());  // overflow, not a wrap
}

TEST(Limits, ShapeListsRejectTrailingGarbageAndAbsurdSizes) {
  EXPECT_EQ(parse_shapes("lin:48:256").value()[0].k, 256);
  EXPECT_EQ(parse_shapes("96x1024").value()[0].n, 96);
  for (const char* bad : {"lin:12abc:5", "lin:5:", ":5:5", "lin:5:5:5", "3000000000x5", "5x-5", "5x", "lin:-1:64",
                          "lin:99999999999999999999:64", "nope", ","})
    EXPECT_FALSE(parse_shapes(bad).is_ok()) << bad;
  // Found by fuzz_shapes: the item echoed in the too-large message kept its newline.
  auto nl = parse_shapes("\xff\n\x01sll:94444444444444:1088");
  ASSERT_FALSE(nl.is_ok());
  EXPECT_EQ(nl.status().message().find('\n'), std::string::npos) << nl.status().message();
  EXPECT_NE(nl.status().message().find("larger than the supported maximum"), std::string::npos) << nl.status().message();
}

// Regression: a negative dimension was multiplied into a size_t and reported as a huge byte count.
TEST(NpyRobust, NegativeDimensionIsReportedAsSuch) {
  const std::string e = npy_error("{'descr': '<u2', 'fortran_order': False, 'shape': (-256, 1), }", 512);
  EXPECT_NE(e.find("shape[0] is negative (-256)"), std::string::npos) << e;
  EXPECT_EQ(e.find("18446744073709551"), std::string::npos) << e;
}

TEST(NpyRobust, MalformedHeadersAreRefusedInOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Each of these threw (std::stoll) or read past the header before.
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (abc,), }", "shape entries must be integers"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (99999999999999999999,), }", "does not fit 64 bits"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape':", "shape must be a tuple"},
      {"{'descr': '<u2", "descr must be a quoted dtype string"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3", "expected ',' or ')'"},
      {"{'descr': '<u2', 'fortran_order': False}", "needs descr, fortran_order and shape"},
      {"{'descr': '<u2', 'fortran_order': Maybe, 'shape': (2,)}", "fortran_order must be True or False"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unknown key 'x'"},
      {"", "expected '{'"},
      // Products that overflow int64 or a size_t multiply.
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (2147483647, 2147483647, 2147483647), }", "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,), }", "larger than the supported maximum"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (3, 3), }", "data is shorter than its shape says (4 < 18 bytes)"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", "unsupported .npy dtype"},
      {"{'descr': '<u2', 'fortran_order': True, 'shape': (2,), }", "Fortran-order"},
  };
  for (const auto& [header, want] : cases) {
    const std::string e = npy_error(header, 4);
    EXPECT_NE(e.find(want), std::string::npos) << header << " -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    // Malformed bytes are bad input (exit 2); kIo is for files that cannot be read.
    const auto b = npy_bytes(header, 4);
    EXPECT_EQ(parse_npy(b.data(), b.size(), "t.npy").status().code(), ErrorCode::kInvalidArgument) << header;
  }
  // Found by fuzz_npy: header text echoed into a message must not break it into several lines.
  using namespace std::string_literals;
  for (const std::string& header : {"{'descr': '<i4', 'fortran_order': False, 'shape\n\0\0\0': (1, 1), }"s,
                                    "{'descr': '<i\n4', 'fortran_order': False, 'shape': (1, 1), }"s}) {
    const std::string e = npy_error(header, 4);
    EXPECT_NE(e, "ok");
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_NE(e.find("\\x0a"), std::string::npos) << e;
  }
  // Accepted forms: zero-size, scalar, double quotes, no trailing comma, version 2/3 headers.
  EXPECT_EQ(npy_error("{'descr': '<u2', 'fortran_order': False, 'shape': (0, 8), }", 0), "ok");
  EXPECT_EQ(npy_error("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": ()}", 4), "ok");
  for (int v : {2, 3}) {
    const auto b = npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", 3, v);
    auto a = parse_npy(b.data(), b.size(), "v.npy");
    ASSERT_TRUE(a.is_ok()) << a.status().message();
    EXPECT_EQ(a->shape, std::vector<int64_t>{3});
  }
  // Truncated in the preamble and in the header length.
  auto b = npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", 2);
  for (size_t n : {size_t{0}, size_t{6}, size_t{9}, size_t{20}})
    EXPECT_EQ(parse_npy(b.data(), n, "t").status().code(), ErrorCode::kInvalidArgument) << n;
  b[6] = 9;
  EXPECT_NE(parse_npy(b.data(), b.size(), "t").status().message().find("unsupported .npy version 9"), std::string::npos);
  EXPECT_EQ(parse_npy(b.data(), b.size(), "t").status().code(), ErrorCode::kInvalidArgument);
}

TEST(GoldenRobust, ManifestRangesAreCheckedAtOpen) {
  std::vector<uint8_t> bin(64, 7);
  const std::string sha = sha256_hex(bin.data(), bin.size());
  auto open_with = [&](const std::string& array) {
    auto m = Json::parse(R"({"file": "x.bin", "sha256": ")" + sha + R"(", "arrays": [)" + array + "]}");
    EXPECT_TRUE(m.is_ok());
    auto g = GoldenFile::from_parts(m.value(), bin, "x.bin");
    return g.is_ok() ? std::string("ok") : g.status().message();
  };
  EXPECT_EQ(open_with(R"({"key": "a", "dtype": "f32", "shape": [4, 4], "offset": 0, "nbytes": 64})"), "ok");
  EXPECT_NE(open_with(R"({"key": "a", "dtype": "f32", "shape": [4], "offset": -16, "nbytes": 16})").find("non-negative"),
            std::string::npos);
  EXPECT_NE(open_with(R"({"key": "a", "dtype": "u8", "shape": [16], "offset": 56, "nbytes": 16})").find("past the end"),
            std::string::npos);
  EXPECT_NE(open_with(R"({"key": "a", "dtype": "u8", "shape": [1e300], "offset": 0, "nbytes": 1})").find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(open_with(R"({"key": "a", "dtype": "u8", "shape": [4], "offset": 0, "nbytes": 8})").find("differs from its shape"),
            std::string::npos);
  EXPECT_NE(open_with(R"({"key": "a", "dtype": "c64", "shape": [1], "offset": 0, "nbytes": 8})").find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(open_with(R"(3)").find("no \"key\""), std::string::npos);
  auto not_obj = GoldenFile::from_parts(Json::array(), bin, "x.bin");
  EXPECT_FALSE(not_obj.is_ok());
  // Saturating conversion: a manifest number beyond int64 is not undefined behaviour.
  EXPECT_EQ(Json(1e300).as_int(), INT64_MAX);
  EXPECT_EQ(Json(-1e300).as_int(), INT64_MIN);
  EXPECT_EQ(Json(std::nan("")).as_int(), 0);
  EXPECT_FALSE(Json::parse(R"("\u-123")").is_ok());
  EXPECT_FALSE(Json::parse(R"("\u12")").is_ok());
  EXPECT_EQ(Json::parse(R"("\u00e9")").value().as_string(), "\xc3\xa9");
}

// The manifest names its bin; a name with a newline in it would have split the error over two lines.
TEST(GoldenRobust, BinNamesWithControlCharactersAreRefused) {
  const std::string dir = scratch("golden_name");
  ASSERT_TRUE(write_text(dir + "/m.json", R"({"file": "x\ny.bin", "sha256": "", "arrays": []})").is_ok());
  auto g = GoldenFile::open(dir + "/m.json");
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().message().find('\n'), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("must name a file next to the manifest"), std::string::npos) << g.status().message();
  fs::remove_all(dir);
}

// Found by fuzz_golden: the hash of an empty bin (a null data pointer) passed null to memcpy.
TEST(GoldenRobust, EmptyBinHashesWithoutUndefinedBehaviour) {
  EXPECT_EQ(sha256_hex(nullptr, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto m = Json::parse(R"({"file": "x.bin", "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "arrays": []})");
  ASSERT_TRUE(m.is_ok());
  EXPECT_TRUE(GoldenFile::from_parts(m.value(), {}, "x.bin").is_ok());
}

TEST(AtomicWrite, CommitReplacesAndAnUncommittedWriteLeavesTheOldFile) {
  const std::string dir = scratch("atomic");
  const std::string path = dir + "/out.json";
  ASSERT_TRUE(write_text(path, "old\n").is_ok());
  {
    auto f = AtomicFile::create(path);
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    ASSERT_TRUE(f->write("new, unfinished", 15).is_ok());
    // Dropped without commit (an error path): nothing changes, nothing stays behind.
  }
  EXPECT_EQ(read_text(path).value(), "old\n");
  ASSERT_TRUE(write_text(path, "new\n").is_ok());
  EXPECT_EQ(read_text(path).value(), "new\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  EXPECT_FALSE(write_text(dir, "x").is_ok());                         // a directory
  EXPECT_FALSE(write_text(dir + "/no/such/dir/f", "x").is_ok());     // no parent
  EXPECT_FALSE(write_text("", "x").is_ok());
  fs::remove_all(dir);
}

// commit_all gives every name or none: when a later file cannot be named (a directory has taken its
// name since it was created), the names already given are taken back and the rest is discarded.
TEST(AtomicWrite, CommitAllNamesEveryFileOrNone) {
  const std::string dir = scratch("commit_all");
  std::vector<AtomicFile> files;
  for (const char* name : {"/a.json", "/b.json", "/c.json"}) {
    auto f = AtomicFile::create(dir + name);
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    ASSERT_TRUE(f->write(name, 7).is_ok());
    files.push_back(std::move(f.value()));
  }
  fs::create_directories(dir + "/b.json/in_the_way");
  const Status st = commit_all(files);
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.message();
  EXPECT_NE(st.message().find("b.json"), std::string::npos) << st.message();
  files.clear();
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "b.json");
  fs::remove_all(dir + "/b.json");
  for (const char* name : {"/a.json", "/b.json", "/c.json"}) {
    auto f = AtomicFile::create(dir + name);
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    ASSERT_TRUE(f->write(name, 7).is_ok());
    files.push_back(std::move(f.value()));
  }
  ASSERT_TRUE(commit_all(files).is_ok());
  for (const char* name : {"/a.json", "/b.json", "/c.json"}) EXPECT_EQ(read_text(dir + name).value(), name);
  fs::remove_all(dir);
}

namespace {
// Every name in `dir` (hidden ones too: the backups and the fallback's temporaries), sorted.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A file's text, or what kept it from being read (a missing file reads as its refusal, not a throw).
std::string contents(const std::string& path) {
  auto t = read_text(path);
  return t.is_ok() ? t.value() : "<" + t.status().message() + ">";
}

AtomicFile staged(const std::string& path, const std::string& text) {
  auto f = AtomicFile::create(path);
  EXPECT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_TRUE(f->write(text.data(), text.size()).is_ok());
  return std::move(f.value());
}
}  // namespace

// A commit that fails after earlier ones took their names gives back the files those replaced: a
// regular file and a symlink (the link itself, its target untouched) hold their old contents again,
// a name that had no file is gone, and no backup or temporary stays behind. The last target's
// directory is removed after its file was staged, so its commit fails whoever runs the test (root
// included).
TEST(AtomicWrite, CommitAllFailureRestoresTheFilesItReplaced) {
  const std::string dir = scratch("commit_all_restore");
  ASSERT_TRUE(write_text(dir + "/a.json", "old a").is_ok());
  ASSERT_TRUE(write_text(dir + "/real.json", "what the link points at").is_ok());
  fs::create_symlink("real.json", dir + "/link.json");
  fs::create_directories(dir + "/gone");
  std::vector<AtomicFile> files;
  files.push_back(staged(dir + "/a.json", "new a"));
  files.push_back(staged(dir + "/link.json", "new link"));
  files.push_back(staged(dir + "/b.json", "new b"));
  files.push_back(staged(dir + "/a.json", "a named twice"));  // its backup is a second link to the old a
  files.push_back(staged(dir + "/gone/c.json", "new c"));
  fs::remove_all(dir + "/gone");
  const Status st = commit_all(files);
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.message();
  EXPECT_NE(st.message().find("c.json"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("kept as"), std::string::npos) << st.message();
  files.clear();
  EXPECT_EQ(contents(dir + "/a.json"), "old a");
  ASSERT_TRUE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(fs::read_symlink(dir + "/link.json"), "real.json");
  EXPECT_EQ(contents(dir + "/real.json"), "what the link points at");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir + "/b.json")));
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"a.json", "link.json", "real.json"}));
  fs::remove_all(dir);
}

// When a target cannot be backed up (a directory has taken its name), nothing is committed: the
// earlier targets keep their old contents and the backups already made are removed.
TEST(AtomicWrite, CommitAllCommitsNothingWhenATargetCannotBeKept) {
  const std::string dir = scratch("commit_all_keep");
  ASSERT_TRUE(write_text(dir + "/a.json", "old a").is_ok());
  std::vector<AtomicFile> files;
  files.push_back(staged(dir + "/a.json", "new a"));
  files.push_back(staged(dir + "/new.json", "new"));
  files.push_back(staged(dir + "/b.json", "new b"));
  fs::create_directories(dir + "/b.json");
  const Status st = commit_all(files);
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.message();
  EXPECT_NE(st.message().find("b.json': it is a directory"), std::string::npos) << st.message();
  files.clear();
  EXPECT_EQ(contents(dir + "/a.json"), "old a");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"a.json", "b.json"}));
  fs::remove_all(dir);
}

// On success the replaced files are gone for good: the targets hold the new contents, a symlink
// target has become a regular file (what a single commit does), and no backup stays behind.
TEST(AtomicWrite, CommitAllSuccessLeavesNoBackups) {
  const std::string dir = scratch("commit_all_ok");
  ASSERT_TRUE(write_text(dir + "/a.json", "old a").is_ok());
  ASSERT_TRUE(write_text(dir + "/real.json", "untouched").is_ok());
  fs::create_symlink("real.json", dir + "/link.json");
  std::vector<AtomicFile> files;
  files.push_back(staged(dir + "/a.json", "new a"));
  files.push_back(staged(dir + "/link.json", "new link"));
  files.push_back(staged(dir + "/b.json", "new b"));
  ASSERT_TRUE(commit_all(files).is_ok());
  EXPECT_EQ(contents(dir + "/a.json"), "new a");
  EXPECT_FALSE(fs::is_symlink(dir + "/link.json"));
  EXPECT_EQ(contents(dir + "/link.json"), "new link");
  EXPECT_EQ(contents(dir + "/real.json"), "untouched");
  EXPECT_EQ(contents(dir + "/b.json"), "new b");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"a.json", "b.json", "link.json", "real.json"}));
  fs::remove_all(dir);
}

// A child process writes a large file through AtomicFile and is SIGKILLed halfway: the target must
// still hold the old bytes (or not exist when there were none), and nothing else may appear under
// the target's name.
TEST(AtomicWrite, KilledWriterLeavesTheOldFileOrNone) {
  for (bool had_old : {true, false}) {
    const std::string dir = scratch(had_old ? "kill_old" : "kill_none");
    const std::string path = dir + "/big.npy";
    if (had_old) ASSERT_TRUE(write_text(path, "previous contents\n").is_ok());
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(pipefd[0]);
      auto f = AtomicFile::create(path);
      if (!f.is_ok()) _exit(3);
      std::vector<char> chunk(1 << 20, 'x');
      for (int i = 0; i < 4096; ++i) {  // up to 4 GiB; killed long before
        if (!f->write(chunk.data(), chunk.size()).is_ok()) _exit(4);
        if (i == 16 && write(pipefd[1], "w", 1) != 1) _exit(5);
        if (i > 16) usleep(1000);
      }
      _exit(f->commit().is_ok() ? 0 : 6);
    }
    close(pipefd[1]);
    char c = 0;
    ASSERT_EQ(read(pipefd[0], &c, 1), 1) << "the writer did not start";
    close(pipefd[0]);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the writer finished before the kill";
    if (had_old) {
      auto r = read_text(path);
      ASSERT_TRUE(r.is_ok());
      EXPECT_EQ(r.value(), "previous contents\n");
    } else {
      EXPECT_FALSE(fs::exists(path));
    }
    // Only the target (or nothing) is visible; a fallback temporary would be hidden and never the
    // target's name.
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(name == "big.npy" || name.rfind(".big.npy.tmp-", 0) == 0) << name;
    }
    fs::remove_all(dir);
  }
}

TEST(CliRobust, AbsurdSizesAreOneLineRefusals) {
  auto r = run_cli("validate --rows 99999999999 --quiet");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("--rows must be in 1..2147483647, got 99999999999"), std::string::npos) << r.out;
  // Within the dimension limit but far beyond the machine: refused by the memory estimate.
  auto m = run_cli("validate --rows 2000000000 --linear fc2 --quiet");
  EXPECT_EQ(m.code, 3) << m.out;
  EXPECT_EQ(lines(m.out), 1) << m.out;
  EXPECT_NE(m.out.find("needs"), std::string::npos) << m.out;
  auto e = run_cli("explain --linear fc2 --rows 2000000000 --plant sequential");
  EXPECT_EQ(e.code, 3) << e.out;
  EXPECT_EQ(lines(e.out), 1) << e.out;
  for (const char* cmd : {"validate --rows -5", "validate --sample 0", "explain --linear fc2 --plant sequential --splits 2,999",
                          "explain --linear fc2 --plant sequential --grains 64,abc", "bench --iters 99999999999",
                          "bench --rows 0", "bench --timing async", "validate --shapes big:3000000000:64",
                          "bench --contract split_k:2:grain=100", "bench --contract split_k:2 --shapes one:64:64 --no-quantizer"}) {
    auto b = run_cli(cmd);
    EXPECT_EQ(b.code, 2) << cmd << ": " << b.out;
    EXPECT_EQ(lines(b.out), 1) << cmd << ": " << b.out;
  }
  const std::string dir = scratch("cli");
  const std::vector<uint16_t> x(64, 0x3F80);
  ASSERT_TRUE(write_file(dir + "/x.bin", x.data(), x.size() * 2).is_ok());
  for (const char* shape : {"4294967296,4294967296", "8,-16", "8,16,2", "8"}) {
    auto q = run_cli("quantize --input " + dir + "/x.bin --shape " + shape + " --out " + dir + "/q");
    EXPECT_EQ(q.code, 2) << shape << ": " << q.out;
    EXPECT_EQ(lines(q.out), 1) << q.out;
  }
  auto q = run_cli("quantize --input " + dir + "/x.bin --shape 4,16 --pad --out " + dir + "/q");
  EXPECT_EQ(q.code, 0) << q.out;
  const auto neg = npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (-256, 1), }", 512);
  ASSERT_TRUE(write_file(dir + "/neg.npy", neg.data(), neg.size()).is_ok());
  auto n = run_cli("quantize --input " + dir + "/neg.npy --out " + dir + "/q2");
  EXPECT_EQ(n.code, 2) << n.out;
  EXPECT_NE(n.out.find("shape[0] is negative (-256)"), std::string::npos) << n.out;
  EXPECT_FALSE(fs::exists(dir + "/q2.json"));
  fs::remove_all(dir);
}

// The CLI's last line of defence: an allocation the estimates allow but the process cannot get
// (here an address-space limit) ends in one line and exit 4, not std::bad_alloc's abort.
TEST(CliRobust, OutOfMemoryIsOneLineAndExit4) {
  SKIP_UNDER_ASAN();
  auto r = run_cli("validate --linear fc1 --rows 128 --candidate cpu-oracle --quiet --out " + scratch("oom"),
                   "ulimit -v 300000; ");
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("nvfp4 validate: error:"), std::string::npos) << r.out;
}

// A malformed .npy is bad input like a bad --shape (exit 2); only a file that cannot be read is an
// I/O error (exit 4). An empty array names its zero dimension (it reported a null input pointer).
TEST(CliRobust, MalformedNpyIsBadInputAndEmptyArraysNameTheirZeroDimension) {
  const std::string dir = scratch("npy_codes");
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* expect;
  };
  auto version = npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (16, 16), }", 512);
  version[6] = 9;
  const std::vector<Case> cases = {
      {"text", {'n', 'o', 't', ' ', 'n', 'u', 'm', 'p', 'y', '!', '!'}, "is not a .npy file"},
      {"fortran", npy_bytes("{'descr': '<u2', 'fortran_order': True, 'shape': (16, 16), }", 512), "Fortran-order"},
      {"big_endian", npy_bytes("{'descr': '>u2', 'fortran_order': False, 'shape': (16, 16), }", 512), "unsupported .npy dtype '>u2'"},
      {"f8", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (16, 16), }", 2048), "unsupported .npy dtype"},
      {"version", version, "unsupported .npy version 9"},
      {"short", npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (16, 16), }", 500), "data is shorter"},
      {"header", npy_bytes("{'descr': '<u2', 'fortran_order': False", 512), "malformed .npy header"},
      {"rows0", npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (0, 32), }", 0), "rows must be positive, got 0"},
      {"cols0", npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (32, 0), }", 0), "cols must be positive, got 0"},
  };
  for (const auto& c : cases) {
    const std::string in = dir + "/" + c.name + ".npy";
    ASSERT_TRUE(write_file(in, c.bytes.data(), c.bytes.size()).is_ok());
    auto r = run_cli("quantize --input " + in + " --pad --out " + dir + "/q");
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << c.name << ": " << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.name << ": " << r.out;
    const bool empty_array = std::string(c.expect).find("must be positive") != std::string::npos;  // well-formed
    if (!empty_array) EXPECT_EQ(read_npy(in).status().code(), ErrorCode::kInvalidArgument) << c.name;
  }
  EXPECT_FALSE(fs::exists(dir + "/q.json"));
  auto missing = run_cli("quantize --input " + dir + "/none.npy --out " + dir + "/q");
  EXPECT_EQ(missing.code, 4) << missing.out;
  fs::remove_all(dir);
}

// A FIFO (or any file that is not a regular one) as input is refused at once: opening one blocked
// until a writer came, which for `inspect fifo` was forever. `timeout` turns a hang into a failure.
TEST(CliRobust, FifoInputsAreRefusedNotWaitedOn) {
  const std::string dir = scratch("fifo");
  for (const char* name : {"/in", "/in.npy", "/in.safetensors"}) ASSERT_EQ(mkfifo((dir + name).c_str(), 0600), 0) << name;
  for (const std::string& cmd : {"inspect " + dir + "/in.safetensors", "quantize --input " + dir + "/in --shape 1,16 --pad --out " + dir + "/q",
                                 "quantize --input " + dir + "/in.npy --out " + dir + "/q",
                                 "explain --linear fc2 --reference " + dir + "/in.npy",
                                 "quantize-checkpoint " + dir + "/in.safetensors " + dir + "/o.safetensors --quiet"}) {
    auto r = run_cli(cmd, "timeout 20 ");
    EXPECT_EQ(r.code, 4) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << cmd << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(dir + "/o.safetensors"));
  // validate --inputs: a FIFO as the stored weight beside a real activation (the test for the
  // weight's presence opened it, and waited for a writer).
  std::vector<uint16_t> x(16 * 256, 0x3F80);
  ASSERT_TRUE(write_npy(dir + "/lin.x.npy", "u2", {16, 256}, x.data(), x.size() * 2).is_ok());
  ASSERT_EQ(mkfifo((dir + "/lin.weight.npy").c_str(), 0600), 0);
  const std::string cmd = "validate --shapes lin:64:256 --rows 16 --inputs " + dir + " --quiet --out " + dir + "/v";
  auto r = run_cli(cmd, "timeout 20 ");
  EXPECT_EQ(r.code, 4) << cmd << ": " << r.out;
  EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << cmd << ": " << r.out;
  fs::remove_all(dir);
}

// read_file and SafetensorsFile::open open files one way (src/io/input_file.hpp): whatever the path
// is, they refuse it alike, kIo with the same message. A directory was "it is a directory" to one
// and "not a regular file" to the other.
TEST(InputFiles, ReadFileAndSafetensorsRefuseAlike) {
  const std::string dir = scratch("input_files");
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_directories(dir + "/sub");
  struct Case {
    const char* name;
    const char* expect;
  };
  for (const Case& c : {Case{"/missing", "cannot open '"}, Case{"/sub", "it is a directory"}, Case{"/fifo", "not a regular file"}}) {
    const std::string path = dir + c.name;
    const Status a = read_file(path).status(), b = SafetensorsFile::open(path).status();
    EXPECT_EQ(a.code(), ErrorCode::kIo) << c.name << ": " << a.message();
    EXPECT_EQ(b.code(), ErrorCode::kIo) << c.name << ": " << b.message();
    EXPECT_EQ(a.message(), b.message()) << c.name;
    EXPECT_NE(a.message().find(path), std::string::npos) << c.name << ": " << a.message();
    EXPECT_NE(a.message().find(c.expect), std::string::npos) << c.name << ": " << a.message();
  }
  // A regular file gets past the open: its contents are what is refused, as bad input.
  ASSERT_TRUE(write_text(dir + "/short", "abc").is_ok());
  EXPECT_TRUE(read_file(dir + "/short").is_ok());
  EXPECT_EQ(SafetensorsFile::open(dir + "/short").status().code(), ErrorCode::kInvalidArgument);
  fs::remove_all(dir);
}

// NVFP4_MEMORY_LIMIT that is not a size stops every command with one line naming it (it was
// ignored: the limit silently stayed at physical memory).
TEST(CliRobust, MalformedMemoryLimitIsReported) {
  for (const char* cmd : {"inspect none.safetensors", "validate --rows 16 --quiet", "quantize --input none.npy --out q"}) {
    auto r = run_cli(cmd, "NVFP4_MEMORY_LIMIT=10MB ");
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("NVFP4_MEMORY_LIMIT='10MB' is not a memory size"), std::string::npos) << cmd << ": " << r.out;
  }
  auto ok = run_cli("inspect none.safetensors", "NVFP4_MEMORY_LIMIT=1G ");
  EXPECT_EQ(ok.code, 4) << ok.out;  // the limit is fine: on to the missing file
}

// Threads the system refuses (here the address space for their stacks) are not an abort: the work
// runs on the threads that started, and the output is the same as with one thread.
TEST(CliRobust, ThreadsTheSystemRefusesStillFinishTheWork) {
  SKIP_UNDER_ASAN();
  const std::string dir = scratch("threads");
  // 40000 rows: 5000 chunks of 8 rows, so all 1024 threads are asked for; their 8 MiB stacks need
  // 8 GiB of address space, and the limit leaves room for about 300.
  std::vector<uint16_t> w(40000 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(0x3c00 + i % 251);
  ASSERT_TRUE(write_safetensors(dir + "/tall.safetensors", {StEntry{"t.weight", StDtype::kBF16, {40000, 16},
                                                                    reinterpret_cast<const uint8_t*>(w.data()), {}}}, {}).is_ok());
  auto one = run_cli("quantize-checkpoint " + dir + "/tall.safetensors " + dir + "/one.safetensors --quiet --threads 1");
  ASSERT_EQ(one.code, 0) << one.out;
  auto many = run_cli("quantize-checkpoint " + dir + "/tall.safetensors " + dir + "/many.safetensors --quiet --threads 1024",
                      "ulimit -s 8192; ulimit -v 3000000; ");
  ASSERT_EQ(many.code, 0) << many.out;
  EXPECT_EQ(read_file(dir + "/many.safetensors").value(), read_file(dir + "/one.safetensors").value());
  fs::remove_all(dir);
}

// An exception thrown by the work of a parallel loop (an allocation the OS refuses, say) reaches
// the caller once every thread has been joined, whichever thread threw it, the caller's included;
// until 2026-12-05 it called std::terminate (escaping a worker thread, or skipping the joins).
TEST(Parallel, AnExceptionInTheWorkReachesTheCallerAfterTheJoins) {
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{500}, int64_t{999}}) {
    std::atomic<int64_t> done{0};
    auto run = [&] {
      detail::parallel_for(1000, 1, 4, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          if (i == bad) throw std::runtime_error("chunk " + std::to_string(i));
          done.fetch_add(1);
        }
      });
    };
    EXPECT_THROW(run(), std::runtime_error) << bad;
    EXPECT_LT(done.load(), 1000) << bad;
  }
  // Without an exception every index is visited once.
  std::vector<std::atomic<int>> seen(1000);
  detail::parallel_for(1000, 7, 4, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
  });
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].load(), 1) << i;
}
