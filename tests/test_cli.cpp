// The nvfp4 command line: exit codes, one-line errors, and the files each command writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

namespace {
std::string tmp(const std::string& name) { return scratch("nvfp4_cli_test", name); }
long lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }
}  // namespace

TEST(Cli, HelpVersionAndUnknown) {
  auto h = run("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("validate"), std::string::npos);
  auto v = run("version --json");
  EXPECT_EQ(v.code, 0);
  auto j = Json::parse(v.out);
  ASSERT_TRUE(j.is_ok()) << v.out;
  EXPECT_EQ((*j)["version"].as_string(), NVFP4_VERSION);
  // The Hopper kernel's built tile configurations, as NVFP4_SM90_CONFIG and bench --sm90-config take them.
  const std::vector<std::string> built = sm90_configs();
  const Json& listed = (*j)["sm90_configs"];
  ASSERT_EQ(listed.type(), Json::Type::kArray) << v.out;
  ASSERT_EQ(listed.items().size(), built.size()) << v.out;
  for (size_t i = 0; i < built.size(); ++i) EXPECT_EQ(listed.items()[i].as_string(), built[i]);
  auto u = run("frobnicate");
  EXPECT_EQ(u.code, 2);
  EXPECT_NE(u.out.find("unknown command"), std::string::npos);
}

TEST(Cli, QuantizeWritesNpyAndRefusesBadInput) {
  std::vector<uint16_t> x(40 * 48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_rn(static_cast<float>(i % 97) / 7.0f - 6.0f);
  const std::string in = tmp("x.npy"), out = tmp("q");
  ASSERT_TRUE(write_npy(in, "u2", {40, 48}, x.data(), x.size() * 2).is_ok());
  auto r = run("quantize --input " + in + " --out " + out + " --pad --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto meta = Json::parse(r.out);
  ASSERT_TRUE(meta.is_ok()) << r.out;
  auto data = read_npy(out + ".data.npy");
  ASSERT_TRUE(data.is_ok());
  QuantizeOptions o;
  o.pad = true;
  auto ref = quantize(x.data(), 40, 48, global_scale_dynamic(x.data(), x.size()), o);
  ASSERT_TRUE(ref.is_ok());
  EXPECT_EQ(data->bytes, ref->data);
  EXPECT_EQ((*meta)["data_sha256"].as_string(), sha256_hex(ref->data.data(), ref->data.size()));
  // Errors: one line, non-zero exit, nothing written.
  auto nopad = run("quantize --input " + in + " --out " + tmp("nopad"));
  EXPECT_EQ(nopad.code, 2);
  EXPECT_NE(nopad.out.find("not a multiple of 16"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp("nopad") + ".data.npy"));
  auto badr = run("quantize --input " + in + " --out " + tmp("b") + " --pad --recipe comfy-triton");
  EXPECT_EQ(badr.code, 2);
  EXPECT_EQ(std::count(badr.out.begin(), badr.out.end(), '\n'), 1);
  auto nan = run("quantize --input " + in + " --out " + tmp("n") + " --pad --global-scale nan");
  EXPECT_EQ(nan.code, 2);
  auto missing = run("quantize --input " + tmp("nope.npy") + " --out " + tmp("m"));
  EXPECT_EQ(missing.code, 4);
  EXPECT_NE(missing.out.find("cannot open"), std::string::npos);
}

TEST(Cli, ValidateSmallShapeWritesTheReportSchema) {
  const std::string dir = tmp("val");
  auto r = run("validate --shapes small:96:1024 --rows 32 --candidate cpu-oracle --quiet --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  auto sum = read_text(dir + "/summary.json");
  ASSERT_TRUE(sum.is_ok());
  auto j = Json::parse(sum.value());
  ASSERT_TRUE(j.is_ok());
  for (const char* k : {"device", "compute_capability", "rows", "kernel", "results", "findings", "status", "source_artifacts"})
    EXPECT_NE(j->find(k), nullptr) << k;
  const Json& res = (*j)["results"].items().at(0);
  for (const char* k : {"linear", "mnk", "raw_blockscaled_equal", "raw_max_abs", "raw_mean_abs", "fused_alpha_equal",
                        "fused_alpha_max_abs", "fused_alpha_mean_abs", "first_differences", "fused_alpha_ulp_histogram",
                        "contract_sensitivity"})
    EXPECT_NE(res.find(k), nullptr) << k;
  EXPECT_TRUE(res["raw_blockscaled_equal"].as_bool());
  // A different contract on one side is a real mismatch: exit 1 and the differences are listed.
  auto d = run("validate --shapes small:96:1024 --rows 32 --candidate cpu-oracle@split_k:4:grain=64:cublas:bf16_serial "
               "--reference cpu-oracle --quiet --out " + dir + "2");
  EXPECT_EQ(d.code, 1) << d.out;
  auto bad = run("validate --candidate gpu-turbo");
  EXPECT_EQ(bad.code, 2);
  auto badc = run("validate --candidate cpu-oracle@split_k:zz");
  EXPECT_EQ(badc.code, 2);
}

// The report records the seed it ran with, all 64 bits: through a double, 12345678901234567 and
// ...568 were both written as 12345678901234568.
TEST(Cli, ValidateRecordsTheSeedExactly) {
  for (const char* seed : {"12345678901234567", "12345678901234568"}) {
    const std::string dir = tmp(std::string("seed_") + seed);
    auto r = run("validate --shapes small:32:64 --rows 16 --candidate cpu-oracle --quiet --seed " + std::string(seed) + " --out " + dir);
    ASSERT_EQ(r.code, 0) << r.out;
    auto text = read_text(dir + "/summary.json");
    ASSERT_TRUE(text.is_ok());
    EXPECT_NE(text->find("\"seed\": " + std::string(seed)), std::string::npos) << *text;
    auto j = Json::parse(text.value());
    ASSERT_TRUE(j.is_ok());
    EXPECT_EQ(std::to_string((*j)["seed"].as_int()), seed);
  }
}

TEST(Cli, ValidateReadsInputsFromNpyFiles) {
  const std::string dir = tmp("inputs");
  std::filesystem::create_directories(dir);
  std::vector<uint16_t> x(20 * 256), w(48 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_rn(std::sin(static_cast<float>(i)) * 3.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = bf16_rn(std::cos(static_cast<float>(i) * 0.7f) * 0.05f);
  ASSERT_TRUE(write_npy(dir + "/lin.x.npy", "u2", {20, 256}, x.data(), x.size() * 2).is_ok());
  ASSERT_TRUE(write_npy(dir + "/lin.w.npy", "u2", {48, 256}, w.data(), w.size() * 2).is_ok());
  auto r = run("validate --shapes lin:48:256 --inputs " + dir + " --candidate cpu-oracle --quiet --out " + tmp("valin"));
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = Json::parse(read_text(tmp("valin") + "/summary.json").value());
  ASSERT_TRUE(j.is_ok());
  const Json& res = (*j)["results"].items().at(0);
  EXPECT_EQ(res["mnk"].items()[0].as_int(), 20);  // rows come from the file
  EXPECT_EQ(res["inputs"]["source"].as_string(), dir);
  // The same weight as a checkpoint stores it (packed hi_first, swizzled scales, weight_scale_2):
  // the layer must come out with the same scales and pass again.
  const std::string ck = tmp("inputs_ck");
  std::filesystem::create_directories(ck);
  ASSERT_TRUE(write_npy(ck + "/lin.x.npy", "u2", {20, 256}, x.data(), x.size() * 2).is_ok());
  const float s_w = global_scale_dynamic(w.data(), w.size());
  QuantizeOptions qo;
  auto qw = quantize(w.data(), 48, 256, s_w, qo);
  ASSERT_TRUE(qw.is_ok());
  ASSERT_TRUE(write_npy(ck + "/lin.weight.npy", "u1", {48, 128}, qw->data.data(), qw->data.size()).is_ok());
  ASSERT_TRUE(write_npy(ck + "/lin.weight_scale.npy", "u1", {128, 16}, qw->scales.data(), qw->scales.size()).is_ok());
  ASSERT_TRUE(write_npy(ck + "/lin.weight_scale_2.npy", "f4", {}, &s_w, 4).is_ok());
  auto rc = run("validate --shapes lin:48:256 --inputs " + ck + " --candidate cpu-oracle --quiet --out " + tmp("valck"));
  ASSERT_EQ(rc.code, 0) << rc.out;
  auto jc = Json::parse(read_text(tmp("valck") + "/summary.json").value());
  const Json& rck = (*jc)["results"].items().at(0);
  EXPECT_EQ(rck["inputs"]["alpha"].as_string(), res["inputs"]["alpha"].as_string());
  EXPECT_NE(rck["inputs"].find("weight_scale_2"), nullptr);
  ASSERT_TRUE(write_npy(ck + "/lin.weight_scale.npy", "u1", {100}, qw->scales.data(), 100).is_ok());
  auto bad_sf = run("validate --shapes lin:48:256 --inputs " + ck + " --quiet --out " + tmp("valck2"));
  EXPECT_EQ(bad_sf.code, 2);
  EXPECT_NE(bad_sf.out.find("block scales have 100 bytes"), std::string::npos);

  auto wrong = run("validate --shapes lin:64:256 --inputs " + dir + " --quiet --out " + tmp("valin2"));
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.out.find("must be a bf16 [64][256] array"), std::string::npos);
}

// validate's reports are all or none. A second linear whose input is malformed left the first
// linear's report behind, the partial result of a run that failed; now that run leaves no file at
// all, and differing bits (exit 1, a result) still write every report.
TEST(Cli, ValidateWritesAllReportsOrNone) {
  const std::string dir = tmp("allnone_in"), out = tmp("allnone_out");
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(dir);
  std::vector<uint16_t> x(8 * 64), w(16 * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_rn(std::sin(static_cast<float>(i)) * 3.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = bf16_rn(std::cos(static_cast<float>(i) * 0.7f) * 0.05f);
  for (const char* l : {"a", "b"}) {
    ASSERT_TRUE(write_npy(dir + "/" + l + ".x.npy", "u2", {8, 64}, x.data(), x.size() * 2).is_ok());
    ASSERT_TRUE(write_npy(dir + "/" + l + ".w.npy", "u2", {16, 64}, w.data(), w.size() * 2).is_ok());
  }
  ASSERT_TRUE(write_text(dir + "/b.x.npy", "not numpy").is_ok());
  const std::string cmd = "validate --shapes a:16:64,b:16:64 --inputs " + dir + " --candidate cpu-oracle --quiet --out " + out;
  auto r = run(cmd);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("b.x.npy' is not a .npy file"), std::string::npos) << r.out;
  // Nothing of this run, hidden temporaries included.
  EXPECT_TRUE(!std::filesystem::exists(out) || std::filesystem::is_empty(out));
  EXPECT_FALSE(std::filesystem::exists(out + "/a.json"));
  // Mended, the same run names every report.
  ASSERT_TRUE(write_npy(dir + "/b.x.npy", "u2", {8, 64}, x.data(), x.size() * 2).is_ok());
  auto ok = run(cmd);
  ASSERT_EQ(ok.code, 0) << ok.out;
  for (const char* f : {"/a.json", "/b.json", "/summary.json"}) EXPECT_TRUE(std::filesystem::exists(out + f)) << f;
  // Bits that differ are a result: exit 1 with every report written.
  const std::string diff = tmp("allnone_diff");
  std::filesystem::remove_all(diff);
  auto d = run("validate --shapes s1:96:1024,s2:96:1024 --rows 32 --candidate cpu-oracle@split_k:4:grain=64:cublas:bf16_serial "
               "--reference cpu-oracle --quiet --out " + diff);
  EXPECT_EQ(d.code, 1) << d.out;
  for (const char* f : {"/s1.json", "/s2.json", "/summary.json"}) EXPECT_TRUE(std::filesystem::exists(diff + f)) << f;
}

TEST(Cli, CublasLtEntryPointsRefuseInOneLineWhereNvfp4CublasLtCannotRun) {
  auto env = cublaslt_env();
  if (env.is_ok() && cublaslt_nvfp4_supported(env.value()).is_ok())
    GTEST_SKIP() << "this machine runs NVFP4 cuBLASLt";
  for (const char* cmd : {"probe-cublaslt --shapes fc2", "validate --linear out --candidate cublaslt --quiet",
                          "bench --backend cublaslt --shapes fc2 --no-quantizer"}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 3) << cmd << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("error:"), std::string::npos) << cmd;
  }
}

TEST(Cli, ExplainFindsAPlantedContract) {
  auto r = run("explain --linear plant:64:2048 --rows 16 --plant split_k:3:grain=128:cutlass:fp32 --splits 2,3 --grains 64,128 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = Json::parse(r.out);
  ASSERT_TRUE(j.is_ok()) << r.out;
  EXPECT_GE((*j)["exact"].size(), 1u);
  auto bad = run("explain --linear fc2 --reference " + tmp("nothing.npy"));
  EXPECT_EQ(bad.code, 4);
}

TEST(Cli, ValidateRunsContractsOnGpuBackendsAndRefusesBadOnes) {
  auto one_line = [](const ::Run& r) { return std::count(r.out.begin(), r.out.end(), '\n') == 1; };
  // More slices than k64 chunks (K = 128 has two): bad input on any machine, before any GPU work.
  auto many = run("validate --shapes t:64:128 --rows 4 --candidate sm120-emulated@split_k:4 --quiet --out " + tmp("vs1"));
  EXPECT_EQ(many.code, 2) << many.out;
  EXPECT_TRUE(one_line(many)) << many.out;
  EXPECT_NE(many.out.find("S must not exceed the chunk count"), std::string::npos) << many.out;
  auto many_flag = run("validate --shapes t:64:128 --rows 4 --candidate gpu-model --contract split_k:3 --quiet --out " + tmp("vs2"));
  EXPECT_EQ(many_flag.code, 2) << many_flag.out;
  for (const char* bad : {"--candidate cpu-reference@split_k:2", "--candidate cublaslt@split_k:2", "--contract split_k:zz",
                          "--contract cublaslt:grain=100", "--contract cublaslt:fp32"}) {
    auto r = run(std::string("validate --shapes t:64:1024 --rows 4 --quiet ") + bad + " --out " + tmp("vs3"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_TRUE(one_line(r)) << bad << ": " << r.out;
  }
  // --contract reaches every side without its own: the oracle under split-K against itself.
  auto same = run("validate --shapes t:48:1024 --rows 8 --candidate cpu-oracle --reference cpu-oracle "
                  "--contract split_k:3:grain=128:cutlass:bf16_partials --quiet --out " + tmp("vs4"));
  EXPECT_EQ(same.code, 0) << same.out;
  auto j = Json::parse(read_text(tmp("vs4") + "/summary.json").value());
  ASSERT_TRUE(j.is_ok());
  EXPECT_EQ((*j)["results"].items().at(0)["candidate"].as_string(), "cpu-oracle@split_k:3:grain=128:cutlass:bf16_partials");
  // --contract cublaslt needs NVFP4 cuBLASLt: one line and exit 3 where it cannot run.
  auto env = cublaslt_env();
  if (!env.is_ok() || !cublaslt_nvfp4_supported(env.value()).is_ok()) {
    auto lt = run("validate --shapes t:48:1024 --rows 8 --candidate cpu-oracle --contract cublaslt --quiet --out " + tmp("vs5"));
    EXPECT_EQ(lt.code, 3) << lt.out;
    EXPECT_TRUE(one_line(lt)) << lt.out;
  }
  // The command: the emulated SM120 kernel under FC2's split-K hypothesis, against the
  // oracle under the same contract (exit 3 without a GPU).
  auto fc2 = run("validate --linear fc2 --candidate sm120-emulated@split_k:2:grain=256:cublas:fp32 --reference "
                 "cpu-oracle@split_k:2:grain=256:cublas:fp32 --quiet --out " + tmp("vs6"));
  if (fc2.code == 3) {
    EXPECT_TRUE(one_line(fc2)) << fc2.out;
  } else {
    EXPECT_EQ(fc2.code, 0) << fc2.out;
    EXPECT_NE(fc2.out.find("EQUAL"), std::string::npos) << fc2.out;
  }
}

// No command takes a word it does not expect: a stray one is refused, naming it, not ignored
// (validate ran every linear on "-h", and "--linear fc2 fc1" validated fc2 alone). -h is --help.
TEST(Cli, StrayArgumentsAreRefusedAndDashHIsHelp) {
  for (const char* cmd : {"version", "quantize", "validate", "explain", "probe-cublaslt", "bench", "inspect",
                          "quantize-checkpoint"}) {
    auto h = run(std::string(cmd) + " -h");
    EXPECT_EQ(h.code, 0) << cmd << ": " << h.out;
    EXPECT_EQ(h.out.rfind(std::string("usage: nvfp4 ") + cmd + " ", 0), 0u) << cmd << ": " << h.out;
  }
  for (const char* cmd : {"version stray", "quantize stray", "validate stray", "explain stray", "probe-cublaslt stray",
                          "bench stray", "inspect a.safetensors stray", "quantize-checkpoint a b stray"}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("unexpected argument 'stray'"), std::string::npos) << cmd << ": " << r.out;
  }
  std::vector<uint16_t> x(32 * 32, 0x3f80);
  const std::string in = tmp("stray_x.npy");
  ASSERT_TRUE(write_npy(in, "u2", {32, 32}, x.data(), x.size() * 2).is_ok());
  std::filesystem::remove(tmp("stray_q") + ".json");
  auto pad = run("quantize --input " + in + " --out " + tmp("stray_q") + " -pad");
  EXPECT_EQ(pad.code, 2) << pad.out;
  EXPECT_NE(pad.out.find("'-pad'"), std::string::npos) << pad.out;
  EXPECT_FALSE(std::filesystem::exists(tmp("stray_q") + ".json"));
  auto two = run("validate --shapes a:16:64 b:16:64 --rows 4 --candidate cpu-oracle --quiet --out " + tmp("stray_v"));
  EXPECT_EQ(two.code, 2) << two.out;
  EXPECT_NE(two.out.find("'b:16:64'"), std::string::npos) << two.out;
  std::filesystem::remove_all(tmp("stray_vh"));
  auto vh = run("validate -h --shapes a:16:64 --rows 4 --candidate cpu-oracle --quiet --out " + tmp("stray_vh"));
  EXPECT_EQ(vh.code, 0) << vh.out;
  EXPECT_NE(vh.out.find("usage: nvfp4 validate"), std::string::npos) << vh.out;
  EXPECT_FALSE(std::filesystem::exists(tmp("stray_vh")));
}

// An empty output path (an unset shell variable) would write "/<linear>.json" or a hidden
// ".data.npy": refused before anything runs.
TEST(Cli, EmptyOutputPathsAreRefused) {
  std::vector<uint16_t> x(32 * 32, 0x3f80);
  const std::string in = tmp("empty_x.npy");
  ASSERT_TRUE(write_npy(in, "u2", {32, 32}, x.data(), x.size() * 2).is_ok());
  for (const std::string& cmd : std::vector<std::string>{
           "validate --shapes t:16:64 --rows 4 --candidate cpu-oracle --quiet --out ''", "quantize --input " + in + " --out ''",
           "bench --no-quantizer --out ''", "probe-cublaslt --out ''",
           "explain --linear t:16:64 --rows 4 --plant sequential --splits 2 --grains 64 --save-reference ''"}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("needs a non-empty path"), std::string::npos) << cmd << ": " << r.out;
  }
}

// An empty input path (an unset shell variable) silently meant "none given": validate and explain
// ran on synthetic inputs and the default linears, and reported as if on the files asked for.
TEST(Cli, EmptyInputPathsAreRefused) {
  std::filesystem::remove_all(tmp("empty_in_out"));
  for (const std::string& cmd : std::vector<std::string>{
           "validate --shapes t:16:64 --rows 4 --candidate cpu-oracle --quiet --inputs '' --out " + tmp("empty_in_out"),
           "validate --inputs= --quiet --out " + tmp("empty_in_out"),
           "validate --checkpoint '' --layer blk.fc --quiet --out " + tmp("empty_in_out"),
           "explain --linear t:16:64 --rows 4 --plant sequential --splits 2 --grains 64 --inputs ''"}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("needs a non-empty path"), std::string::npos) << cmd << ": " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp("empty_in_out")));
}

// The file an input path names was opened as given, so an empty one was "cannot open ''", exit 4 (an
// I/O error), where the options above are refused as bad input: now the same one-line refusal, exit
// 2, before anything is read or written.
TEST(Cli, EmptyInputFilePathsAreRefusedAsBadInput) {
  const std::string q = tmp("empty_file_q"), ck = tmp("empty_file_ck.safetensors");
  std::filesystem::remove(ck);
  for (const std::string& cmd : std::vector<std::string>{
           "quantize --input '' --out " + q, "quantize --input= --shape 32,32 --out " + q, "inspect ''",
           "inspect '' --json", "quantize-checkpoint '' " + ck, "quantize-checkpoint " + tmp("absent.safetensors") + " ''",
           "explain --linear t:16:64 --rows 4 --reference ''",
           "explain --linear t:16:64 --rows 4 --reference '' --dtype bf16"}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("needs a non-empty path"), std::string::npos) << cmd << ": " << r.out;
  }
  for (const char* suffix : {".data.npy", ".scales.npy", ".json"}) EXPECT_FALSE(std::filesystem::exists(q + suffix)) << suffix;
  EXPECT_FALSE(std::filesystem::exists(ck));
}

// --global-scale takes an fp32 written in full: decimal, rounded once to the nearest fp32 (through
// a double, 1.0000000596046448 rounded twice to 1.0), or a hex float that spells it exactly. What
// does not parse completely, inf, nan, values beyond fp32 and negative ones are refused in one line,
// before the input is read; -0 too (0 is taken), whose sign reached every block scale (0xFE).
TEST(Cli, QuantizeGlobalScaleIsAnFp32WrittenInFull) {
  std::vector<uint16_t> x(32 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_rn(static_cast<float>(i % 37) / 5.0f - 3.0f);
  const std::string in = tmp("gs_x.npy"), out = tmp("gs_q");
  ASSERT_TRUE(write_npy(in, "u2", {32, 32}, x.data(), x.size() * 2).is_ok());
  struct Good {
    const char* given;
    const char* bits;
  };
  for (const Good& g : {Good{"0x1p-3", "0x3e000000"}, Good{"0X1P-3", "0x3e000000"}, Good{"0.125", "0x3e000000"},
                        Good{"1.25e-1", "0x3e000000"}, Good{"0x.8p-2", "0x3e000000"}, Good{"0x1p-149", "0x00000001"},
                        Good{"1.0000000596046448", "0x3f800001"}, Good{"0", "0x00000000"}}) {
    auto r = run("quantize --input " + in + " --out " + out + " --json --global-scale " + g.given);
    ASSERT_EQ(r.code, 0) << g.given << ": " << r.out;
    auto meta = Json::parse(r.out);
    ASSERT_TRUE(meta.is_ok()) << r.out;
    EXPECT_EQ((*meta)["global_scale_bits"].as_string(), g.bits) << g.given;
  }
  std::filesystem::remove(out + ".json");
  for (const char* bad : {"", "nan", "inf", "-inf", "infinity", "0.5x", " 0.5", "0.5 ", "+0.5", "--1", "0x", "0x-1p3",
                          "1e", "0x1p", "0x1p-3q", "1e39", "1e-46", "0x1p-150", "-0.5", "-0x1p-3", "-0", "-0.0",
                          "-0x0p0", "-0e5"}) {
    // A missing input file: had the scale been read after it, the error would be the file's (exit 4).
    auto r = run("quantize --input " + tmp("gs_missing.npy") + " --out " + out + " --global-scale '" + bad + "'");
    EXPECT_EQ(r.code, 2) << "'" << bad << "': " << r.out;
    EXPECT_EQ(lines(r.out), 1) << "'" << bad << "': " << r.out;
    EXPECT_NE(r.out.find("--global-scale"), std::string::npos) << "'" << bad << "': " << r.out;
    EXPECT_NE(r.out.find(std::string("'") + bad + "'"), std::string::npos) << "'" << bad << "': " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(out + ".json"));
  auto h = run("quantize --help");
  EXPECT_NE(h.out.find("hex float that spells it exactly (0x1p-3)"), std::string::npos) << h.out;
}

// Integers are decimal: a leading zero is not octal, and hex is refused rather than read.
TEST(Cli, IntegerOptionsAreDecimal) {
  const std::string dir = tmp("dec");
  auto r = run("validate --shapes t:16:64 --rows 010 --candidate cpu-oracle --quiet --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = Json::parse(read_text(dir + "/summary.json").value());
  ASSERT_TRUE(j.is_ok());
  EXPECT_EQ((*j)["results"].items().at(0)["mnk"].items()[0].as_int(), 10);
  for (const char* bad : {"0x10", "1e3", " 16", "16 ", ""}) {
    auto h = run(std::string("validate --shapes t:16:64 --candidate cpu-oracle --quiet --out ") + tmp("dec2") + " --rows '" + bad + "'");
    EXPECT_EQ(h.code, 2) << bad << ": " << h.out;
    EXPECT_NE(h.out.find("--rows expects a decimal integer"), std::string::npos) << bad << ": " << h.out;
  }
}

// All of quantize's outputs appear, or none: one that cannot be written (a directory in the way of
// PREFIX.json) leaves no PREFIX.data.npy or PREFIX.scales.npy behind.
TEST(Cli, QuantizeWritesAllOutputsOrNone) {
  std::vector<uint16_t> x(32 * 32, 0x3f80);
  const std::string in = tmp("all_x.npy"), out = tmp("all_q");
  ASSERT_TRUE(write_npy(in, "u2", {32, 32}, x.data(), x.size() * 2).is_ok());
  for (const char* ext : {".data.npy", ".scales.npy", ".json"}) std::filesystem::remove_all(out + ext);
  std::filesystem::create_directories(out + ".json");
  auto r = run("quantize --input " + in + " --out " + out);
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out + ".data.npy"));
  EXPECT_FALSE(std::filesystem::exists(out + ".scales.npy"));
  std::filesystem::remove(out + ".json");
  auto ok = run("quantize --input " + in + " --out " + out);
  EXPECT_EQ(ok.code, 0) << ok.out;
  for (const char* ext : {".data.npy", ".scales.npy", ".json"}) EXPECT_TRUE(std::filesystem::exists(out + ext)) << ext;
}

// Shapes read from files get the memory estimate the synthetic ones get before anything runs
// (without it, the outputs' allocation failed: "out of memory", exit 4).
TEST(Cli, ValidateChecksTheFootprintOfInputsFromFiles) {
  const std::string dir = tmp("fp_inputs");
  std::filesystem::create_directories(dir);
  std::vector<uint16_t> x(20 * 256, 0x3f80), w(48 * 256, 0x3c00);
  ASSERT_TRUE(write_npy(dir + "/lin.x.npy", "u2", {20, 256}, x.data(), x.size() * 2).is_ok());
  ASSERT_TRUE(write_npy(dir + "/lin.w.npy", "u2", {48, 256}, w.data(), w.size() * 2).is_ok());
  // Each file fits the 60 KiB ceiling; the problem with its three outputs (~68 KiB) does not.
  auto r = run("validate --shapes lin:48:256 --inputs " + dir + " --candidate cpu-oracle --quiet --out " + tmp("fp_out"),
               "NVFP4_MEMORY_LIMIT=60K ");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("validate lin (20x48x256) needs"), std::string::npos) << r.out;
  auto fits = run("validate --shapes lin:48:256 --inputs " + dir + " --candidate cpu-oracle --quiet --out " + tmp("fp_out2"),
                  "NVFP4_MEMORY_LIMIT=1M ");
  EXPECT_EQ(fits.code, 0) << fits.out;
}

// Arguments of the GPU commands are checked before the device: --no-gemm holds with --shapes (whose
// contract check then has nothing to refuse), and probe-cublaslt's counts are bounded, not wrapped.
TEST(Cli, BenchAndProbeArgumentsAreChecked) {
  auto ng = run("bench --no-gemm --no-quantizer --shapes one:64:64 --contract split_k:2");
  EXPECT_NE(ng.code, 2) << ng.out;
  EXPECT_EQ(ng.out.find("chunk count"), std::string::npos) << ng.out;
  for (const char* bad : {"--top 4294967297", "--top 0", "--top 1025", "--force-splitk 0", "--force-splitk -7",
                          "--force-splitk 4294967298", "--rows 99999999999", "--rows 0"}) {
    auto r = run(std::string("probe-cublaslt --shapes fc2 ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << bad << ": " << r.out;
  }
}

// Every integer option has a range and says it in one line naming the option: a negative count or
// seed is refused, not wrapped, and so is a value beyond int64.
TEST(Cli, IntegerOptionsOutOfRangeNameTheOptionAndTheRange) {
  const std::string v = "validate --shapes t:16:64 --candidate cpu-oracle --quiet --out " + tmp("range_v") + " ";
  const std::string e = "explain --linear t:16:64 --rows 4 --plant sequential --splits 2 --grains 64 ";
  const std::pair<std::string, const char*> cases[] = {
      {v + "--rows -3", "--rows must be in 1..2147483647, got -3"},
      {v + "--rows 2147483648", "--rows must be in 1..2147483647, got 2147483648"},
      {v + "--rows 99999999999999999999", "--rows must be in 1..2147483647, got 99999999999999999999"},
      {v + "--seed -1", "--seed must be in 0..9223372036854775807, got -1"},
      {v + "--sample 0", "--sample must be in 1..2147483647, got 0"},
      {e + "--sample -5", "--sample must be in 1..2147483647, got -5"},
      {e + "--seed 18446744073709551615", "--seed must be in 0..9223372036854775807"},
      {"bench --iters 0", "--iters must be in 1..1000000, got 0"},
      {"bench --warmup -1", "--warmup must be in 0..1000000, got -1"},
      {"probe-cublaslt --workspace -1", "--workspace must be in 0..1099511627776, got -1"},
      {"probe-cublaslt --seed -2", "--seed must be in 0..9223372036854775807, got -2"},
      {"probe-cublaslt --force-splitk -1", "--force-splitk must be in 1..1024, got -1"},
  };
  for (const auto& [cmd, want] : cases) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << cmd << ": " << r.out;
  }
  // The bounds themselves are in range.
  auto lo = run(v + "--rows 1 --seed 0 --sample 1");
  EXPECT_EQ(lo.code, 0) << lo.out;
  auto hi = run(v + "--rows 4 --seed 9223372036854775807");
  EXPECT_EQ(hi.code, 0) << hi.out;
}

TEST(Cli, VersionHelpIsHelp) {
  auto h = run("version --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_EQ(h.out.rfind("usage: nvfp4 version", 0), 0u) << h.out;
  auto q = run("quantize-checkpoint --help");
  EXPECT_NE(q.out.find("[--threads N]"), std::string::npos) << q.out;
}

// validate refuses a native backend on another GPU before computing anything. Its message said
// "compute capability 9.0" and "SM120/SM121" beside checks of the major alone (9, 12); now both
// come from one row: the capability a refusal names is the one the check takes, the device's own
// is named too, and the emulated backend it suggests runs there. Without a GPU, on made-up devices.
TEST(Cli, ValidateNativeBackendRefusalNamesTheCapabilityItChecks) {
  const std::vector<std::pair<int, int>> ccs = {{7, 5}, {8, 9}, {9, 0}, {9, 1}, {10, 0}, {12, 0}, {12, 1}, {12, 2}};
  const std::map<std::string, int> native = {{"sm90", 9},           {"sm90-stream", 9},
                                             {"sm120-native", 12},  {"sm120-stream-native", 12},
                                             {"sm120p-native", 12}, {"sm120p-stream-native", 12}};
  for (const char* name : {"cpu-oracle", "cpu-reference", "sm90", "sm90-stream", "gpu-model", "sm120-emulated",
                           "sm120-native", "sm120-stream-emulated", "sm120-stream-native", "sm120p-emulated",
                           "sm120p-native", "sm120p-stream-emulated", "sm120p-stream-native", "cublaslt"}) {
    ASSERT_TRUE(parse_backend(name).is_ok()) << name;
    const auto it = native.find(name);
    for (const auto& [major, minor] : ccs) {
      DeviceInfo dev;
      dev.name = "GPU " + std::to_string(major) + std::to_string(minor);
      dev.cc_major = major;
      dev.cc_minor = minor;
      const Status st = check_backend_device(name, dev);
      // The rule itself is unchanged: the major alone decides.
      EXPECT_EQ(st.is_ok(), it == native.end() || it->second == major) << name << " on " << dev.name;
      if (st.is_ok()) continue;
      const std::string& m = st.message();
      EXPECT_EQ(st.code(), ErrorCode::kUnsupported) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_NE(m.find("compute capability " + std::to_string(it->second) + ".x)"), std::string::npos) << m;
      EXPECT_NE(m.find("this is " + dev.name + " (" + std::to_string(major) + "." + std::to_string(minor) + ")"),
                std::string::npos) << m;
      const auto use = m.find(": use ");
      EXPECT_EQ(use != std::string::npos, std::string(name).find("native") != std::string::npos) << m;
      if (use != std::string::npos) {
        const std::string instead = m.substr(use + 6);
        EXPECT_TRUE(parse_backend(instead).is_ok()) << m;
        EXPECT_TRUE(check_backend_device(instead, dev).is_ok()) << m;
      }
    }
  }
}
