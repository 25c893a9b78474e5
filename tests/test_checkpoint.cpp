// ComfyUI NVFP4 checkpoints: layer checks, quantize-checkpoint against the library's quantizer and
// the golden comfy-cuda quantizations, inspect, validate --checkpoint, and interop with the Python
// safetensors package.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "cli_run.hpp"
#include "golden_path.hpp"
#include "nvfp4/checkpoint.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/quant.hpp"
#include "nvfp4/validate.hpp"

using namespace nvfp4;

namespace {

std::string tmp(const std::string& name) { return scratch("nvfp4_checkpoint_test", name); }

struct Blob {
  StDtype dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
using Blobs = std::vector<std::pair<std::string, Blob>>;

template <typename T>
Blob blob(StDtype d, std::vector<int64_t> shape, const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return Blob{d, std::move(shape), std::vector<uint8_t>(p, p + v.size() * sizeof(T))};
}
Blob f32_blob(float v, std::vector<int64_t> shape = {}) { return blob(StDtype::kF32, std::move(shape), std::vector<float>{v}); }
Blob text_blob(const std::string& s) { return Blob{StDtype::kU8, {static_cast<int64_t>(s.size())}, {s.begin(), s.end()}}; }

Blob* blob_at(Blobs& b, const std::string& name) {
  for (auto& [n, v] : b)
    if (n == name) return &v;
  return nullptr;
}
void drop(Blobs& b, const std::string& name) {
  std::erase_if(b, [&](const auto& e) { return e.first == name; });
}

Status write_blobs(const std::string& path, const Blobs& b, const std::vector<std::pair<std::string, std::string>>& meta = {}) {
  std::vector<StEntry> e;
  for (const auto& [n, v] : b) e.push_back(StEntry{n, v.dtype, v.shape, v.bytes.data(), {}});
  return write_safetensors(path, e, meta);
}

std::vector<uint8_t> bytes_of(const SafetensorsFile& f, const std::string& name) {
  const StTensor* t = f.find(name);
  if (!t) return {};
  return std::vector<uint8_t>(f.data(*t), f.data(*t) + t->nbytes());
}

// One NVFP4 Linear as ComfyUI stores it, from a seeded bf16 weight.
Blobs nvfp4_layer(const std::string& L, int64_t n, int64_t k, uint64_t seed) {
  const std::vector<uint16_t> w = synthetic_weight(n, k, seed);
  auto q = quantize_linear_weight(w.data(), n, k);
  EXPECT_TRUE(q.is_ok()) << q.status().message();
  const Geometry& g = q->t.geom;
  Blobs b;
  b.push_back({L + ".weight", blob(StDtype::kU8, {g.rows16, g.cols16 / 2}, q->t.data)});
  b.push_back({L + ".weight_scale", blob(StDtype::kF8E4M3, {g.sf_rows_pad, g.sf_cols_pad}, q->t.scales)});
  b.push_back({L + ".weight_scale_2", f32_blob(q->t.global_scale)});
  b.push_back({L + ".comfy_quant", blob(StDtype::kU8, {static_cast<int64_t>(q->comfy_quant.size())}, q->comfy_quant)});
  return b;
}

bool python_safetensors() {
  return std::system("python3 -c 'import safetensors.numpy, numpy' >/dev/null 2>&1") == 0;
}

}  // namespace

TEST(Checkpoint, FindsAndChecksNvfp4Layers) {
  Blobs b = nvfp4_layer("blocks.0.fc", 40, 80, 11);
  b.push_back({"blocks.0.fc.input_scale", f32_blob(0.25f)});
  b.push_back({"blocks.0.fc.bias", blob(StDtype::kBF16, {40}, std::vector<uint16_t>(40, 0x3f80))});
  b.push_back({"blocks.0.norm.weight", blob(StDtype::kF32, {48}, std::vector<float>(48, 1.0f))});
  // Another ComfyUI format is listed with its format and not read as NVFP4.
  b.push_back({"blocks.1.fp8.weight", Blob{StDtype::kF8E4M3, {16, 16}, std::vector<uint8_t>(256, 0x38)}});
  b.push_back({"blocks.1.fp8.weight_scale", f32_blob(1.0f)});
  b.push_back({"blocks.1.fp8.comfy_quant", text_blob(R"({"format": "float8_e4m3fn"})")});
  // Listed only in the file metadata (no comfy_quant tensor): still found.
  Blobs c = nvfp4_layer("blocks.2.fc", 32, 64, 12);
  drop(c, "blocks.2.fc.comfy_quant");
  b.insert(b.end(), c.begin(), c.end());
  const std::string path = tmp("layers.safetensors");
  ASSERT_TRUE(write_blobs(path, b, {{"_quantization_metadata", R"({"format_version": "1.0", "layers": {"blocks.2.fc": {"format": "nvfp4"}}})"}}).is_ok());
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  auto layers = checkpoint_layers(f.value());
  ASSERT_TRUE(layers.is_ok()) << layers.status().message();
  ASSERT_EQ(layers->size(), 3u);
  const CheckpointLayer& l = (*layers)[0];
  EXPECT_EQ(l.name, "blocks.0.fc");
  EXPECT_EQ(l.format, "nvfp4");
  EXPECT_EQ(l.n16, 48);
  EXPECT_EQ(l.k16, 80);
  EXPECT_EQ(l.n, 40);  // from the bias length
  EXPECT_EQ(l.k, 80);
  EXPECT_TRUE(l.has_input_scale);
  EXPECT_EQ(l.input_scale, 0.25f);
  EXPECT_TRUE(l.has_bias);
  EXPECT_EQ(l.tensors.size(), 6u);
  EXPECT_EQ((*layers)[1].format, "float8_e4m3fn");
  EXPECT_EQ((*layers)[2].name, "blocks.2.fc");
  EXPECT_EQ((*layers)[2].format, "nvfp4");
  // The weight comes out exactly as stored.
  auto w = load_nvfp4_weight(f.value(), l);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  EXPECT_EQ(w->data, bytes_of(f.value(), "blocks.0.fc.weight"));
  EXPECT_EQ(w->scales, bytes_of(f.value(), "blocks.0.fc.weight_scale"));
  EXPECT_EQ(f32_bits(w->global_scale), f32_bits(l.weight_scale_2));
  EXPECT_EQ(w->geom.rows, 40);
  EXPECT_FALSE(load_nvfp4_weight(f.value(), l, 40, 60).is_ok());  // does not pad to k16 = 80
  EXPECT_FALSE(load_nvfp4_weight(f.value(), (*layers)[1]).is_ok());
  EXPECT_FALSE(checkpoint_layer(f.value(), "blocks.0.norm").is_ok());  // exists, not quantized
  EXPECT_FALSE(checkpoint_layer(f.value(), "nothing").is_ok());
}

using MetaEdit = std::function<void(Blobs&, std::vector<std::pair<std::string, std::string>>&)>;

// The NVFP4 layer L (32 x 64), edited, written to `path`: the message checkpoint_layers refuses it
// with ("" after a test failure: the file could not be written or opened, or it was accepted).
std::string layer_refusal(const std::string& L, const MetaEdit& edit, const std::string& path) {
  Blobs b = nvfp4_layer(L, 32, 64, 5);
  std::vector<std::pair<std::string, std::string>> meta;
  edit(b, meta);
  if (!write_blobs(path, b, meta).is_ok()) return ADD_FAILURE() << "cannot write " << path, "";
  auto f = SafetensorsFile::open(path);
  if (!f.is_ok()) return ADD_FAILURE() << path << ": " << f.status().message(), "";
  auto layers = checkpoint_layers(f.value());
  if (layers.is_ok()) return ADD_FAILURE() << path << ": accepted", "";
  return layers.status().message();
}

TEST(Checkpoint, RefusesBrokenNvfp4Layers) {
  const std::string L = "net.fc";
  struct Case {
    const char* name;
    MetaEdit edit;
    std::string tensor, expect;
  };
  const std::vector<Case> cases = {
      {"no_scale_2", [&](Blobs& b, auto&) { drop(b, L + ".weight_scale_2"); }, L + ".weight_scale_2", "missing"},
      {"no_scale", [&](Blobs& b, auto&) { drop(b, L + ".weight_scale"); }, L + ".weight_scale", "missing"},
      {"no_weight", [&](Blobs& b, auto&) { drop(b, L + ".weight"); }, L + ".weight", "missing"},
      {"weight_bf16", [&](Blobs& b, auto&) { blob_at(b, L + ".weight")->dtype = StDtype::kI16; blob_at(b, L + ".weight")->shape = {32, 16}; },
       L + ".weight", "expected U8 [N16, K16/2]"},
      {"weight_1d", [&](Blobs& b, auto&) { blob_at(b, L + ".weight")->shape = {32 * 32}; }, L + ".weight", "expected U8"},
      {"weight_rows", [&](Blobs& b, auto&) { auto* w = blob_at(b, L + ".weight"); w->shape = {8, 128}; }, L + ".weight", "multiples of 16"},
      {"scale_dtype", [&](Blobs& b, auto&) { auto* s = blob_at(b, L + ".weight_scale"); s->dtype = StDtype::kI16; s->shape = {128, 2}; },
       L + ".weight_scale", "expected F8_E4M3 (or U8) [128, 4]"},
      {"scale_shape", [&](Blobs& b, auto&) { blob_at(b, L + ".weight_scale")->shape = {64, 8}; }, L + ".weight_scale", "expected F8_E4M3"},
      {"scale_2_shape", [&](Blobs& b, auto&) { *blob_at(b, L + ".weight_scale_2") = blob(StDtype::kF32, {2}, std::vector<float>{1, 2}); },
       L + ".weight_scale_2", "expected [] or [1]"},
      {"scale_2_dtype", [&](Blobs& b, auto&) { *blob_at(b, L + ".weight_scale_2") = blob(StDtype::kF16, {}, std::vector<uint16_t>{0x3c00}); },
       L + ".weight_scale_2", "expected F32"},
      {"scale_2_nan", [&](Blobs& b, auto&) { *blob_at(b, L + ".weight_scale_2") = f32_blob(std::nanf("")); }, L + ".weight_scale_2", "not finite"},
      // -0 compares equal to 0 (taken, below) but would carry its sign into alpha.
      {"scale_2_neg_zero", [&](Blobs& b, auto&) { *blob_at(b, L + ".weight_scale_2") = f32_blob(-0.0f); }, L + ".weight_scale_2",
       "global scale must be >= 0 and not -0 (its sign would reach alpha and the sign of every output), got -0"},
      {"input_scale_neg_zero", [&](Blobs& b, auto&) { b.push_back({L + ".input_scale", f32_blob(-0.0f)}); }, L + ".input_scale", "not finite and > 0"},
      {"input_scale_zero", [&](Blobs& b, auto&) { b.push_back({L + ".input_scale", f32_blob(0.0f)}); }, L + ".input_scale", "not finite and > 0"},
      {"bias_len", [&](Blobs& b, auto&) { b.push_back({L + ".bias", blob(StDtype::kF32, {7}, std::vector<float>(7))}); }, L + ".bias", "roundup(L, 16) = 32"},
      {"pre_quant_u8", [&](Blobs& b, auto&) { b.push_back({L + ".pre_quant_scale", Blob{StDtype::kU8, {64}, std::vector<uint8_t>(64)}}); },
       L + ".pre_quant_scale", "expected a float vector"},
      {"comfy_quant_not_json", [&](Blobs& b, auto&) { *blob_at(b, L + ".comfy_quant") = text_blob("{format: nvfp4"); }, L + ".comfy_quant", "not JSON"},
      {"comfy_quant_no_format", [&](Blobs& b, auto&) { *blob_at(b, L + ".comfy_quant") = text_blob(R"({"fmt": "nvfp4"})"); }, L + ".comfy_quant", "string \"format\""},
      {"comfy_quant_f32", [&](Blobs& b, auto&) { *blob_at(b, L + ".comfy_quant") = f32_blob(1.0f, {1}); }, L + ".comfy_quant", "expected a 1-D U8"},
      {"metadata_not_json", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", "{layers"}); }, "", "_quantization_metadata is not JSON"},
      {"metadata_no_layers", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", R"({"format_version": "1.0"})"}); }, "", "no \"layers\" object"},
      {"metadata_layer_absent", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", R"({"layers": {"ghost": {"format": "nvfp4"}}})"}); },
       "ghost.weight", "listed in _quantization_metadata"},
      {"metadata_disagrees", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", R"({"layers": {"net.fc": {"format": "mxfp8"}}})"}); },
       L + ".comfy_quant", "disagrees"},
  };
  for (const auto& c : cases) {
    const std::string path = tmp(std::string("broken_") + c.name + ".safetensors");
    const std::string m = layer_refusal(L, c.edit, path);
    EXPECT_NE(m.find(path), std::string::npos) << c.name << ": " << m;
    if (!c.tensor.empty()) EXPECT_NE(m.find("tensor '" + c.tensor + "'"), std::string::npos) << c.name << ": " << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.name << ": " << m;
    // The CLI says the same in one line and exits 2 (a malformed file is bad input).
    auto r = run("inspect " + path);
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.name << ": " << r.out;
  }
  // A weight_scale_2 of +0 (an all-zero weight) stays a valid layer.
  Blobs z = nvfp4_layer(L, 32, 64, 5);
  *blob_at(z, L + ".weight_scale_2") = f32_blob(0.0f);
  const std::string zp = tmp("zero_scale_2.safetensors");
  ASSERT_TRUE(write_blobs(zp, z).is_ok());
  auto zf = SafetensorsFile::open(zp);
  ASSERT_TRUE(zf.is_ok()) << zf.status().message();
  auto zl = checkpoint_layer(zf.value(), L);
  ASSERT_TRUE(zl.is_ok()) << zl.status().message();
  EXPECT_EQ(f32_bits(zl->weight_scale_2), 0u);
}

// Names come from the file: one holding a newline must not split an error over two lines.
TEST(Checkpoint, ErrorsNamingFileProvidedNamesStayOnOneLine) {
  const std::string L = "x\ny";
  struct Case {
    const char* name;
    MetaEdit edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"comfy_quant_not_json", [&](Blobs& b, auto&) { *blob_at(b, L + ".comfy_quant") = text_blob("{format: nvfp4"); },
       "tensor 'x?y.comfy_quant': not JSON"},
      {"comfy_quant_duplicate_key", [&](Blobs& b, auto&) { *blob_at(b, L + ".comfy_quant") = text_blob("{\"a\nb\": 1, \"a\nb\": 2}"); },
       "duplicate key 'a\\x0ab'"},
      {"no_scale", [&](Blobs& b, auto&) { drop(b, L + ".weight_scale"); }, "NVFP4 layer 'x?y' needs its block scales"},
      {"metadata_no_format", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", R"({"layers": {"p\nq": {}}})"}); },
       "layer 'p?q' has no string \"format\""},
      {"metadata_disagrees", [&](Blobs&, auto& m) { m.push_back({"_quantization_metadata", R"({"layers": {"x\ny": {"format": "a\nb"}}})"}); },
       "disagrees with _quantization_metadata's 'a?b'"},
  };
  for (const auto& c : cases) {
    const std::string path = tmp(std::string("newline_") + c.name + ".safetensors");
    const std::string m = layer_refusal(L, c.edit, path);
    EXPECT_EQ(m.find('\n'), std::string::npos) << c.name << ": " << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.name << ": " << m;
    auto r = run("inspect " + path);
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.name << ": " << r.out;
  }
  // quantize-checkpoint's own refusal names the layer too.
  const std::string src = tmp("newline_half_done.safetensors"), none = tmp("newline_never.safetensors");
  ASSERT_TRUE(write_blobs(src, {{"p\nq.weight", blob(StDtype::kBF16, {16, 32}, synthetic_weight(16, 32, 9))},
                                {"p\nq.weight_scale", f32_blob(1.0f)}}).is_ok());
  auto r = run("quantize-checkpoint " + src + " " + none + " --quiet");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("cannot quantize layer 'p?q'"), std::string::npos) << r.out;
}

// Python's json.dumps (ensure_ascii) spells a character past U+FFFF as a \u surrogate pair. It is one
// code point: quantize-checkpoint used to write it back as two 3-byte sequences, a header that is
// not UTF-8 and that neither this reader nor Python's safetensors would open.
TEST(Checkpoint, SurrogatePairNamesSurviveQuantizeCheckpoint) {
  auto image = [](const std::string& header, const std::vector<uint16_t>& data) {
    std::string b(8, '\0');
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
    return b + header + std::string(reinterpret_cast<const char*>(data.data()), data.size() * 2);
  };
  const std::vector<uint16_t> w = synthetic_weight(16, 32, 9);
  const std::string src = tmp("emoji_in.safetensors"), dst = tmp("emoji_out.safetensors");
  const auto in = image(R"({"\ud83d\ude00.weight": {"dtype": "BF16", "shape": [16, 32], "data_offsets": [0, 1024]}})", w);
  ASSERT_TRUE(write_file(src, in.data(), in.size()).is_ok());
  auto r = run("quantize-checkpoint " + src + " " + dst + " --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  auto f = SafetensorsFile::open(dst);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  const std::string emoji = "\xF0\x9F\x98\x80";
  ASSERT_NE(f->find(emoji + ".weight"), nullptr);
  EXPECT_EQ(f->find(emoji + ".weight")->dtype, StDtype::kU8);
  EXPECT_NE(f->find(emoji + ".comfy_quant"), nullptr);
  EXPECT_EQ(run("inspect " + dst).code, 0);
  if (python_safetensors()) {
    const std::string cmd = "python3 " NVFP4_TESTS_DIR "/safetensors_interop.py read " + dst + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  // Half a pair is no character: refused in one line.
  const std::string lone = tmp("emoji_lone.safetensors");
  const auto bad = image(R"({"\ud83d.weight": {"dtype": "BF16", "shape": [16, 32], "data_offsets": [0, 1024]}})", w);
  ASSERT_TRUE(write_file(lone, bad.data(), bad.size()).is_ok());
  auto l = run("inspect " + lone);
  EXPECT_EQ(l.code, 2) << l.out;
  EXPECT_EQ(std::count(l.out.begin(), l.out.end(), '\n'), 1) << l.out;
  EXPECT_NE(l.out.find("unpaired high surrogate"), std::string::npos) << l.out;
}

TEST(Checkpoint, QuantizeCheckpointEqualsTheLibraryQuantizer) {
  const std::vector<uint16_t> wa = synthetic_weight(64, 96, 21), wb = synthetic_weight(120, 200, 22),
                              we = synthetic_weight(16, 32, 23);
  std::vector<float> wc(32 * 48);
  for (size_t i = 0; i < wc.size(); ++i) wc[i] = std::sin(static_cast<float>(i) * 0.37f) * 0.01f;
  Blobs in;
  in.push_back({"m.emb.weight", blob(StDtype::kBF16, {16, 32}, we)});
  in.push_back({"m.a.weight", blob(StDtype::kBF16, {64, 96}, wa)});
  in.push_back({"m.b.weight", blob(StDtype::kBF16, {120, 200}, wb)});
  in.push_back({"m.b.bias", blob(StDtype::kBF16, {120}, std::vector<uint16_t>(120, 0xbf00))});
  in.push_back({"m.norm.weight", blob(StDtype::kF32, {64}, std::vector<float>(64, 0.5f))});
  in.push_back({"m.c.weight", blob(StDtype::kF32, {32, 48}, wc)});
  const std::string src = tmp("bf16.safetensors"), dst = tmp("nvfp4.safetensors");
  std::filesystem::remove(dst);
  ASSERT_TRUE(write_blobs(src, in, {{"modelspec.title", "test"}}).is_ok());

  auto r = run("quantize-checkpoint " + src + " " + dst + " --layers '^m\\.(a|b|c)$'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[3/3]"), std::string::npos) << r.out;  // progress on stderr
  EXPECT_NE(r.out.find("3 layers quantized"), std::string::npos) << r.out;
  auto f = SafetensorsFile::open(dst);
  ASSERT_TRUE(f.is_ok()) << f.status().message();

  // Each layer, tensor by tensor, against the library's own API with ComfyUI's weight scale.
  struct Want {
    std::string L;
    std::vector<uint16_t> w;
    int64_t n, k;
  };
  std::vector<uint16_t> wc_bf16(wc.size());
  for (size_t i = 0; i < wc.size(); ++i) wc_bf16[i] = bf16_rn(wc[i]);
  for (const Want& want : {Want{"m.a", wa, 64, 96}, Want{"m.b", wb, 120, 200}, Want{"m.c", wc_bf16, 32, 48}}) {
    QuantizeOptions qo;
    qo.pad = true;  // comfy-cuda, hi_first, swizzled: the defaults
    const float s_w = f32_from_bits(static_cast<uint32_t>(bf16_rn(bf16_to_f32(amax_bf16(want.w.data(), want.n * want.k)) / 2688.0f)) << 16);
    EXPECT_EQ(f32_bits(s_w), f32_bits(global_scale_dynamic(want.w.data(), want.n * want.k)));
    auto q = quantize(want.w.data(), want.n, want.k, s_w, qo);
    ASSERT_TRUE(q.is_ok());
    const Geometry& g = q->geom;
    const StTensor* tw = f->find(want.L + ".weight");
    const StTensor* ts = f->find(want.L + ".weight_scale");
    const StTensor* t2 = f->find(want.L + ".weight_scale_2");
    const StTensor* tq = f->find(want.L + ".comfy_quant");
    ASSERT_TRUE(tw && ts && t2 && tq) << want.L;
    EXPECT_EQ(tw->dtype, StDtype::kU8);
    EXPECT_EQ(tw->shape, (std::vector<int64_t>{g.rows16, g.cols16 / 2}));
    EXPECT_EQ(ts->dtype, StDtype::kF8E4M3);
    EXPECT_EQ(ts->shape, (std::vector<int64_t>{g.sf_rows_pad, g.sf_cols_pad}));
    EXPECT_EQ(t2->dtype, StDtype::kF32);
    EXPECT_TRUE(t2->shape.empty());
    EXPECT_EQ(bytes_of(f.value(), want.L + ".weight"), q->data) << want.L;
    EXPECT_EQ(bytes_of(f.value(), want.L + ".weight_scale"), q->scales) << want.L;
    float got_s;
    std::memcpy(&got_s, f->data(*t2), 4);
    EXPECT_EQ(f32_bits(got_s), f32_bits(s_w)) << want.L;
    const auto marker = bytes_of(f.value(), want.L + ".comfy_quant");
    EXPECT_EQ(std::string(marker.begin(), marker.end()), R"({"format": "nvfp4"})");
  }
  // Everything else is copied byte for byte, metadata included, and the new layers are listed.
  for (const char* name : {"m.emb.weight", "m.b.bias", "m.norm.weight"})
    EXPECT_EQ(bytes_of(f.value(), name), blob_at(in, name)->bytes) << name;
  EXPECT_EQ(f->find("m.emb.weight_scale"), nullptr);
  ASSERT_NE(f->metadata("modelspec.title"), nullptr);
  auto qm = Json::parse(*f->metadata("_quantization_metadata"));
  ASSERT_TRUE(qm.is_ok());
  EXPECT_EQ((*qm)["layers"].size(), 3u);
  EXPECT_EQ((*qm)["layers"]["m.b"]["format"].as_string(), "nvfp4");
  auto layers = checkpoint_layers(f.value());
  ASSERT_TRUE(layers.is_ok()) << layers.status().message();
  EXPECT_EQ(layers->size(), 3u);
  EXPECT_EQ((*layers)[1].n, 120);  // m.b: logical N from its bias

  // The JSON summary, and a second pass over the output: nothing left to quantize but m.emb.
  auto j = run("quantize-checkpoint " + dst + " " + tmp("again.safetensors") + " --quiet --json");
  ASSERT_EQ(j.code, 0) << j.out;
  auto js = Json::parse(j.out);
  ASSERT_TRUE(js.is_ok()) << j.out;
  EXPECT_EQ((*js)["quantized_layers"].as_int(), 1);
  EXPECT_EQ((*js)["rounded_to_bf16_first"].size(), 0u);

  // Bad input, arguments or a broken file: exit 2 and no output file.
  const std::string none = tmp("never.safetensors");
  std::filesystem::remove(none);
  EXPECT_EQ(run("quantize-checkpoint " + src + " " + none + " --layers '('").code, 2);
  EXPECT_EQ(run("quantize-checkpoint " + src + " " + none + " --layers nomatch --quiet").code, 2);
  EXPECT_EQ(run("quantize-checkpoint " + src).code, 2);
  // --threads is an int: a value that would wrap (4294967295 to -1) is refused like -1.
  for (const char* t : {"-1", "1025", "4294967295"}) {
    auto rt = run("quantize-checkpoint " + src + " " + none + " --quiet --threads " + t);
    EXPECT_EQ(rt.code, 2) << t << ": " << rt.out;
    EXPECT_NE(rt.out.find("--threads must be in 0..1024"), std::string::npos) << t << ": " << rt.out;
  }
  auto full = read_file(src);
  const std::string cut = tmp("cut.safetensors");
  ASSERT_TRUE(write_file(cut, full->data(), full->size() - 3).is_ok());
  auto rc = run("quantize-checkpoint " + cut + " " + none);
  EXPECT_EQ(rc.code, 2) << rc.out;
  EXPECT_EQ(std::count(rc.out.begin(), rc.out.end(), '\n'), 1) << rc.out;
  EXPECT_NE(rc.out.find(cut), std::string::npos) << rc.out;
  EXPECT_FALSE(std::filesystem::exists(none));
  // A weight with an Inf has no finite ComfyUI scale: refused, naming the tensor.
  std::vector<uint16_t> inf = wa;
  inf[5] = 0x7f80;
  ASSERT_TRUE(write_blobs(tmp("inf.safetensors"), {{"x.weight", blob(StDtype::kBF16, {64, 96}, inf)}}).is_ok());
  auto ri = run("quantize-checkpoint " + tmp("inf.safetensors") + " " + none + " --quiet");
  EXPECT_NE(ri.code, 0);
  EXPECT_NE(ri.out.find("tensor 'x.weight'"), std::string::npos) << ri.out;
  EXPECT_FALSE(std::filesystem::exists(none));
}

// ComfyUI's weight quantization is the comfy-cuda recipe with s_w = f32(bf16(amax/2688)): the golden
// files' "dyn" cuda arrays are exactly that, so a checkpoint made from their inputs must hold them.
TEST(Checkpoint, QuantizeCheckpointMatchesGoldenComfyCuda) {
  struct G {
    const char* file;
    const char* dataset;
  };
  const std::vector<G> sets = {{"quant/quantize_main.json", "weight_normal"}, {"quant/quantize_main.json", "act_outliers"},
                               {"quant/quantize_edge.json", "misaligned_120x200"}, {"quant/quantize_edge.json", "tiny"},
                               {"quant/quantize_edge.json", "zero_blocks"}, {"quant/quantize_edge.json", "all_zero"}};
  // Three bytes first put every weight at an odd offset: the unaligned (copying) read path.
  Blobs in = {{"odd", Blob{StDtype::kU8, {3}, {1, 2, 3}}}};
  for (const auto& s : sets) {
    auto g = GoldenFile::open(golden_path(s.file));
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    auto x = g->get(std::string(s.dataset) + ".x");
    ASSERT_TRUE(x.is_ok());
    in.push_back({std::string(s.dataset) + ".weight", blob(StDtype::kBF16, x->shape, x->to_vector<uint16_t>())});
  }
  const std::string src = tmp("golden_in.safetensors"), dst = tmp("golden_out.safetensors");
  ASSERT_TRUE(write_blobs(src, in).is_ok());
  auto r = quantize_checkpoint(src, dst, {});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->quantized, static_cast<int64_t>(sets.size()));
  auto f = SafetensorsFile::open(dst);
  ASSERT_TRUE(f.is_ok());
  for (const auto& s : sets) {
    auto g = GoldenFile::open(golden_path(s.file));
    const std::string d = s.dataset;
    auto packed = g->get(d + ".dyn.cuda.packed"), scales = g->get(d + ".dyn.cuda.scales"), gs = g->get(d + ".dyn.global_scale");
    ASSERT_TRUE(packed.is_ok() && scales.is_ok() && gs.is_ok()) << d;
    EXPECT_EQ(bytes_of(f.value(), d + ".weight"), packed->to_vector<uint8_t>()) << d;
    EXPECT_EQ(bytes_of(f.value(), d + ".weight_scale"), scales->to_vector<uint8_t>()) << d;
    EXPECT_EQ(bytes_of(f.value(), d + ".weight_scale_2"), gs->to_vector<uint8_t>()) << d;
    EXPECT_EQ(f->find(d + ".weight")->shape, packed->shape) << d;
  }
}

TEST(Checkpoint, InspectListsLayers) {
  Blobs b = nvfp4_layer("dit.attn.qkv", 48, 128, 3);
  b.push_back({"dit.attn.qkv.input_scale", f32_blob(0.5f)});
  b.push_back({"dit.pos", blob(StDtype::kF32, {4}, std::vector<float>(4, 2.0f))});
  const std::string path = tmp("inspect.safetensors");
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  auto t = run("inspect " + path + " --tensors");
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("dit.attn.qkv"), std::string::npos);
  EXPECT_NE(t.out.find("48 x 128"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("(0x3f000000)"), std::string::npos) << t.out;  // input_scale 0.5
  EXPECT_NE(t.out.find("dit.pos"), std::string::npos);
  auto j = run("inspect " + path + " --json");
  ASSERT_EQ(j.code, 0) << j.out;
  auto js = Json::parse(j.out);
  ASSERT_TRUE(js.is_ok()) << j.out;
  const Json& l = (*js)["quantized_layers"].items().at(0);
  EXPECT_EQ(l["format"].as_string(), "nvfp4");
  EXPECT_EQ(l["shape"].items()[1].as_int(), 128);
  EXPECT_EQ(l["scale_dtype"].as_string(), "F8_E4M3");
  EXPECT_EQ(l["input_scale_bits"].as_string(), "0x3f000000");
  EXPECT_EQ((*js)["other_bytes"].as_int(), 16);
  EXPECT_EQ(run("inspect").code, 2);
  EXPECT_EQ(run("inspect " + tmp("missing.safetensors")).code, 4);
}

// A file whose contents are wrong is bad input (exit 2) for every command that reads a checkpoint;
// only a file that cannot be read at all is an I/O error (exit 4). Malformed files exited 4 too,
// as if the disk had failed.
TEST(Checkpoint, MalformedFilesAreBadInputAndUnreadableOnesAnIoError) {
  auto image = [](uint8_t header_len, const std::string& rest) { return std::string(1, static_cast<char>(header_len)) + std::string(7, '\0') + rest; };
  const std::string json = R"({"a.weight": {"dtype": "U8", )";
  struct Case {
    const char* name;
    std::string bytes;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"truncated_header", image(64, R"({"a.weight")"), "truncated: header length 64 but only 11 bytes follow"},
      {"header_not_json", image(static_cast<uint8_t>(json.size()), json), "header: invalid JSON"},
  };
  const std::string out = tmp("malformed_out.safetensors"), vdir = tmp("malformed_validate");
  std::filesystem::remove(out);
  std::filesystem::remove_all(vdir);
  auto commands = [&](const std::string& in) {
    return std::vector<std::string>{"inspect " + in, "quantize-checkpoint " + in + " " + out + " --quiet",
                                    "validate --checkpoint " + in + " --layer a --candidate cpu-oracle --quiet --out " + vdir};
  };
  for (const Case& c : cases) {
    const std::string in = tmp(std::string("malformed_") + c.name + ".safetensors");
    ASSERT_TRUE(write_file(in, c.bytes.data(), c.bytes.size()).is_ok());
    for (const std::string& cmd : commands(in)) {
      auto r = run(cmd);
      EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
      EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << cmd << ": " << r.out;
      EXPECT_NE(r.out.find(in), std::string::npos) << cmd << ": " << r.out;
      EXPECT_NE(r.out.find(c.expect), std::string::npos) << cmd << ": " << r.out;
    }
  }
  // A path that does not exist, and one that is a directory: never read, so nothing is known of
  // their contents.
  const std::string dir = tmp("malformed_is_a_dir.safetensors");
  std::filesystem::create_directories(dir);
  for (const std::string& in : {tmp("malformed_missing.safetensors"), dir}) {
    for (const std::string& cmd : commands(in)) {
      auto r = run(cmd);
      EXPECT_EQ(r.code, 4) << cmd << ": " << r.out;
      EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << cmd << ": " << r.out;
      EXPECT_NE(r.out.find(in), std::string::npos) << cmd << ": " << r.out;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(vdir + "/summary.json"));
}

TEST(Checkpoint, ValidateARealLayer) {
  Blobs b = nvfp4_layer("blk.mlp", 64, 160, 9);
  Blobs c = nvfp4_layer("blk.static", 32, 64, 10);
  c.push_back({"blk.static.input_scale", f32_blob(0.125f)});
  b.insert(b.end(), c.begin(), c.end());
  b.push_back({"blk.plain.weight", blob(StDtype::kBF16, {16, 16}, std::vector<uint16_t>(256, 0x3f80))});
  const std::string path = tmp("validate.safetensors");
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  // The problem the harness builds holds the stored weight and scales as they are.
  auto p = prepare_checkpoint_layer(path, "blk.static", 8, 1, "");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->w.data, blob_at(b, "blk.static.weight")->bytes);
  EXPECT_EQ(p->w.scales, blob_at(b, "blk.static.weight_scale")->bytes);
  EXPECT_EQ(p->s_x, 0.125f);  // the static input_scale
  EXPECT_EQ(p->s_static, 0.125f);  // what the streaming backends are given
  auto pd = prepare_checkpoint_layer(path, "blk.mlp", 8, 1, "");
  ASSERT_TRUE(pd.is_ok()) << pd.status().message();
  EXPECT_EQ(pd->s_static, 0.0f);  // no input_scale: dynamic
  EXPECT_EQ(f32_bits(p->alpha), f32_bits(0.125f * p->s_w));

  const std::string out = tmp("val_ck");
  auto r = run("validate --checkpoint " + path + " --layer blk.mlp --rows 8 --candidate cpu-oracle --quiet --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  auto sum = Json::parse(read_text(out + "/summary.json").value());
  ASSERT_TRUE(sum.is_ok());
  const Json& res = (*sum)["results"].items().at(0);
  EXPECT_EQ(res["linear"].as_string(), "blk.mlp");
  EXPECT_EQ(res["mnk"].dump(0), "[8, 64, 160]");
  EXPECT_EQ(res["inputs"]["source"].as_string(), "checkpoint");
  EXPECT_TRUE(res["raw_blockscaled_equal"].as_bool());
  // A given activation: its rows and its width (which pads to the weight's K16).
  std::vector<uint16_t> x(5 * 150);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_rn(std::cos(static_cast<float>(i)) * 2.0f);
  const std::string xp = tmp("x.npy");
  ASSERT_TRUE(write_npy(xp, "u2", {5, 150}, x.data(), x.size() * 2).is_ok());
  auto rx = run("validate --checkpoint " + path + " --layer blk.mlp --inputs " + xp + " --candidate cpu-oracle --quiet --out " + out + "x");
  ASSERT_EQ(rx.code, 0) << rx.out;
  auto sx = Json::parse(read_text(out + "x/summary.json").value());
  EXPECT_EQ((*sx)["results"].items().at(0)["mnk"].dump(0), "[5, 64, 150]");
  // Wrong activation width, unknown or unquantized layer, missing --layer: exit 2, one line.
  ASSERT_TRUE(write_npy(xp, "u2", {5, 100}, x.data(), 5 * 100 * 2).is_ok());
  for (const std::string& bad : {"--checkpoint " + path + " --layer blk.mlp --inputs " + xp, "--checkpoint " + path + " --layer nope",
                                 "--checkpoint " + path + " --layer blk.plain", "--checkpoint " + path,
                                 "--checkpoint " + path + " --layer blk.mlp --linear fc2"}) {
    auto rb = run("validate " + bad + " --quiet --out " + out + "bad");
    EXPECT_EQ(rb.code, 2) << bad << ": " << rb.out;
    EXPECT_EQ(std::count(rb.out.begin(), rb.out.end(), '\n'), 1) << bad << ": " << rb.out;
  }
}

// Two finite scales whose product overflows: every GEMM would apply alpha = Inf, all outputs Inf or
// NaN, and validate compared them as equal (PASS). Reading the layer refuses it, in Python's words.
TEST(Checkpoint, RefusesAStaticInputScaleWhoseAlphaOverflows) {
  Blobs b = nvfp4_layer("blk.fc", 32, 64, 10);
  *blob_at(b, "blk.fc.weight_scale_2") = f32_blob(10.0f);
  b.push_back({"blk.fc.input_scale", f32_blob(3e38f)});
  const std::string path = tmp("alpha_overflow.safetensors");
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  const std::string want = "'" + path + "': layer 'blk.fc': alpha = f32(input_scale * weight_scale_2) must be finite, got inf (3.00000001e+38 * 10)";
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  auto l = checkpoint_layer(f.value(), "blk.fc");
  ASSERT_FALSE(l.is_ok());
  EXPECT_EQ(l.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(l.status().message(), want);
  EXPECT_FALSE(checkpoint_layers(f.value()).is_ok());
  auto p = prepare_checkpoint_layer(path, "blk.fc", 8, 1, "");
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().message(), want);
  for (const std::string& cmd : {"validate --checkpoint " + path + " --layer blk.fc --rows 8 --candidate cpu-oracle --quiet --out " + tmp("alpha_val"),
                                 "inspect " + path}) {
    auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << cmd << ": " << r.out;
  }
  // Scales whose product stays finite are taken, however large.
  *blob_at(b, "blk.fc.weight_scale_2") = f32_blob(1.0f);
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  auto g = SafetensorsFile::open(path);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto ok = checkpoint_layer(g.value(), "blk.fc");
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->input_scale, 3e38f);
}

// Without an input_scale the activation's dynamic s_x meets weight_scale_2 only in validate (and
// explain): a large activation and a large, finite weight_scale_2 overflowed alpha there, both
// sides applied Inf and validate reported PASS. The checkpoint layer and the same arrays given as
// --inputs .npy files are refused, naming both values.
TEST(Checkpoint, ValidateRefusesAnAlphaThatOverflowsWithTheDynamicScale) {
  Blobs b = nvfp4_layer("blk.fc", 32, 64, 10);
  *blob_at(b, "blk.fc.weight_scale_2") = f32_blob(3e38f);
  const std::string path = tmp("dyn_alpha.safetensors");
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  std::vector<uint16_t> x(4 * 64, bf16_rn(1e30f));
  const std::string xp = tmp("dyn_alpha_x.npy");
  ASSERT_TRUE(write_npy(xp, "u2", {4, 64}, x.data(), x.size() * 2).is_ok());
  const float s_x = global_scale_dynamic(x.data(), static_cast<int64_t>(x.size()));
  char vals[80];
  std::snprintf(vals, sizeof vals, "got inf (%.9g * 3.00000001e+38)", static_cast<double>(s_x));
  const std::string want = "'" + path + "': layer 'blk.fc': alpha = f32(s_x (x's dynamic scale) * weight_scale_2) must be finite, " + vals;
  auto p = prepare_checkpoint_layer(path, "blk.fc", 0, 1, xp);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(), want);
  auto r = run("validate --checkpoint " + path + " --layer blk.fc --inputs " + xp + " --candidate cpu-oracle --quiet --out " + tmp("dyn_val"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  // The same layer as --inputs arrays (<name>.weight.npy, .weight_scale.npy, .weight_scale_2.npy).
  const std::string dir = tmp("dyn_alpha_inputs");
  std::filesystem::create_directories(dir);
  const float s2 = 3e38f;
  const auto& wq = blob_at(b, "blk.fc.weight")->bytes;
  const auto& sq = blob_at(b, "blk.fc.weight_scale")->bytes;
  ASSERT_TRUE(write_npy(dir + "/fc.x.npy", "u2", {4, 64}, x.data(), x.size() * 2).is_ok());
  ASSERT_TRUE(write_npy(dir + "/fc.weight.npy", "u1", {32, 32}, wq.data(), wq.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/fc.weight_scale.npy", "u1", {128, 4}, sq.data(), sq.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/fc.weight_scale_2.npy", "f4", {}, &s2, 4).is_ok());
  auto q = prepare_layer(LinearShape{"fc", 32, 64}, 0, 1, dir);
  ASSERT_FALSE(q.is_ok());
  EXPECT_EQ(q.status().message(), std::string("linear 'fc': alpha = f32(s_x (x's dynamic scale) * weight_scale_2) must be finite, ") + vals);
  // A moderate activation gives a finite alpha with the same weight: taken.
  std::vector<uint16_t> small(4 * 64, bf16_rn(1.0f));
  ASSERT_TRUE(write_npy(xp, "u2", {4, 64}, small.data(), small.size() * 2).is_ok());
  auto ok = prepare_checkpoint_layer(path, "blk.fc", 0, 1, xp);
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(f32_bits(ok->alpha), f32_bits(ok->s_x * 3e38f));
}

// validate's --inputs arrays took any finite weight_scale_2.npy, a negative one or -0 included,
// which the checkpoint reader refuses (one rule, weight_global_scale_problem).
TEST(Checkpoint, InputsArraysTakeTheCheckpointsRuleForWeightScale2) {
  Blobs b = nvfp4_layer("blk.fc", 32, 64, 11);
  const std::string dir = tmp("s2_rule_inputs");
  std::filesystem::create_directories(dir);
  std::vector<uint16_t> x(4 * 64, bf16_rn(1.0f));
  const auto& wq = blob_at(b, "blk.fc.weight")->bytes;
  const auto& sq = blob_at(b, "blk.fc.weight_scale")->bytes;
  ASSERT_TRUE(write_npy(dir + "/fc.x.npy", "u2", {4, 64}, x.data(), x.size() * 2).is_ok());
  ASSERT_TRUE(write_npy(dir + "/fc.weight.npy", "u1", {32, 32}, wq.data(), wq.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/fc.weight_scale.npy", "u1", {128, 4}, sq.data(), sq.size()).is_ok());
  const std::string p2 = dir + "/fc.weight_scale_2.npy";
  for (const float s2 : {-0.0f, -1.0f}) {
    ASSERT_TRUE(write_npy(p2, "f4", {}, &s2, 4).is_ok());
    auto q = prepare_layer(LinearShape{"fc", 32, 64}, 0, 1, dir);
    ASSERT_FALSE(q.is_ok());
    EXPECT_EQ(q.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(q.status().message(), "'" + p2 + "': " + weight_global_scale_problem(s2));
    auto r = run("validate --inputs " + dir + " --shapes fc:32:64 --candidate cpu-oracle --quiet --out " + tmp("s2_rule_val"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  EXPECT_NE(weight_global_scale_problem(-0.0f).find("not -0"), std::string::npos);
  EXPECT_TRUE(weight_global_scale_problem(0.0f).empty());
  // The value as it is, not std::to_string's six decimals (which printed -1e-30 as -0.000000).
  EXPECT_EQ(weight_global_scale_problem(-1e-30f), "global scale -1e-30 is not finite and >= 0");
  const float zero = 0.0f;
  ASSERT_TRUE(write_npy(p2, "f4", {}, &zero, 4).is_ok());
  EXPECT_TRUE(prepare_layer(LinearShape{"fc", 32, 64}, 0, 1, dir).is_ok());
}

// A checkpoint layer's K is known only once the file is read: GPU sides with a contract are checked
// against it then (they were refused with "GEMM K must be positive"), and its footprint is checked
// before the outputs are allocated.
TEST(Checkpoint, ValidateChecksAGpuContractAndTheFootprintOnTheLayersShape) {
  const std::string path = tmp("contract.safetensors");
  ASSERT_TRUE(write_blobs(path, nvfp4_layer("blk.mlp", 64, 160, 9)).is_ok());  // K = 160: three k64 chunks
  const std::string base = "validate --checkpoint " + path + " --layer blk.mlp --rows 8 --quiet --out " + tmp("val_contract");
  const bool gpu = !available_gpu_kernels().empty();
  for (const char* sides : {"--candidate sm90 --contract sequential", "--candidate sm120-emulated@split_k:2",
                            "--candidate cpu-oracle --reference gpu-model@sequential"}) {
    auto r = run(base + " " + sides);
    EXPECT_TRUE(r.code == 0 || (r.code == 3 && std::count(r.out.begin(), r.out.end(), '\n') == 1)) << sides << ": " << r.out;
    if (!gpu) EXPECT_EQ(r.code, 3) << sides << ": " << r.out;
    EXPECT_EQ(r.out.find("must be positive"), std::string::npos) << sides << ": " << r.out;
  }
  // More slices than chunks is still bad input where the kernel can run (without a GPU the device
  // check answers first).
  auto many = run(base + " --candidate gpu-model@split_k:4");
  EXPECT_EQ(many.code, gpu ? 2 : 3) << many.out;
  // The file fits a 1 MiB ceiling; the layer at 1000 rows with its three outputs (~1.6 MiB) does not.
  auto big = run("validate --checkpoint " + path + " --layer blk.mlp --rows 1000 --candidate cpu-oracle --quiet --out " +
                     tmp("val_big"),
                 "NVFP4_MEMORY_LIMIT=1M ");
  EXPECT_EQ(big.code, 3) << big.out;
  EXPECT_EQ(std::count(big.out.begin(), big.out.end(), '\n'), 1) << big.out;
  EXPECT_NE(big.out.find("validate blk.mlp (1000x64x160) needs"), std::string::npos) << big.out;
}

// validate --checkpoint on a layer with an input_scale: the streaming backends quantize x themselves
// and are handed the static scale (without it sm90-stream derives the dynamic one and is refused for
// a scale that differs from the layer's). Needs a Hopper GPU; the plumbing is checked on the CPU above.
TEST(Checkpoint, ValidateGivesTheStaticInputScaleToStreamingBackends) {
  const auto k = available_gpu_kernels();
  if (std::find(k.begin(), k.end(), GpuGemmKernel::kSm90) == k.end()) GTEST_SKIP() << "skipped: no Hopper GPU (sm90-stream)";
  Blobs b = nvfp4_layer("blk.static", 48, 200, 11);
  b.push_back({"blk.static.input_scale", f32_blob(0.0625f)});  // far from the synthetic x's dynamic scale
  const std::string path = tmp("static_stream.safetensors");
  ASSERT_TRUE(write_blobs(path, b).is_ok());
  const std::string out = tmp("val_static_stream");
  auto r = run("validate --checkpoint " + path + " --layer blk.static --rows 37 --candidate sm90-stream --quiet --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  auto sum = Json::parse(read_text(out + "/summary.json").value());
  ASSERT_TRUE(sum.is_ok());
  const Json& res = (*sum)["results"].items().at(0);
  EXPECT_TRUE(res["raw_blockscaled_equal"].as_bool()) << res.dump(2);
  // The SM120 streaming producer derives the dynamic scale only: refused in one line (exit 3).
  auto r120 = run("validate --checkpoint " + path + " --layer blk.static --rows 8 --candidate sm120-stream-emulated --quiet --out " + out + "120");
  EXPECT_EQ(r120.code, 3) << r120.out;
  EXPECT_EQ(std::count(r120.out.begin(), r120.out.end(), '\n'), 1) << r120.out;
}

TEST(SafetensorsInterop, PythonWritesWeRead) {
  if (!python_safetensors()) GTEST_SKIP() << "python3 with safetensors and numpy not found (pip install safetensors numpy)";
  // Arrays handed to Python as .npy, saved by safetensors.numpy.save_file: numeric dtypes, a scalar,
  // an empty tensor, and an NVFP4 layer in the older U8-scale spelling (numpy has no float8).
  const std::string dir = tmp("py_in");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<uint16_t> w = synthetic_weight(48, 64, 4);
  auto q = quantize_linear_weight(w.data(), 48, 64);
  ASSERT_TRUE(q.is_ok());
  const float s2 = q->t.global_scale;
  std::vector<float> f32(6);
  for (size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<float>(i) * -1.25f;
  ASSERT_TRUE(write_npy(dir + "/lin.weight.npy", "u1", {48, 32}, q->t.data.data(), q->t.data.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/lin.weight_scale.npy", "u1", {128, 4}, q->t.scales.data(), q->t.scales.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/lin.weight_scale_2.npy", "f4", {}, &s2, 4).is_ok());
  ASSERT_TRUE(write_npy(dir + "/lin.comfy_quant.npy", "u1", {static_cast<int64_t>(q->comfy_quant.size())}, q->comfy_quant.data(),
                        q->comfy_quant.size()).is_ok());
  ASSERT_TRUE(write_npy(dir + "/other.f32.npy", "f4", {2, 3}, f32.data(), 24).is_ok());
  ASSERT_TRUE(write_npy(dir + "/other.u16.npy", "u2", {4}, w.data(), 8).is_ok());
  ASSERT_TRUE(write_npy(dir + "/other.empty.npy", "f4", {0, 3}, f32.data(), 0).is_ok());
  ASSERT_TRUE(write_text(dir + "/metadata.json", R"({"_quantization_metadata": "{\"format_version\": \"1.0\", \"layers\": {\"lin\": {\"format\": \"nvfp4\"}}}", "note": "py"})").is_ok());
  const std::string path = tmp("from_python.safetensors");
  const std::string cmd = "python3 " NVFP4_TESTS_DIR "/safetensors_interop.py write " + path + " " + dir;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(bytes_of(f.value(), "lin.weight"), q->t.data);
  EXPECT_EQ(bytes_of(f.value(), "lin.weight_scale"), q->t.scales);
  EXPECT_EQ(bytes_of(f.value(), "other.f32"), std::vector<uint8_t>(reinterpret_cast<uint8_t*>(f32.data()), reinterpret_cast<uint8_t*>(f32.data()) + 24));
  EXPECT_EQ(f->find("other.f32")->dtype, StDtype::kF32);
  EXPECT_EQ(f->find("other.u16")->dtype, StDtype::kU16);
  EXPECT_EQ(f->find("other.empty")->shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(f->find("lin.weight_scale_2")->shape.empty());
  ASSERT_NE(f->metadata("note"), nullptr);
  auto layers = checkpoint_layers(f.value());
  ASSERT_TRUE(layers.is_ok()) << layers.status().message();
  ASSERT_EQ(layers->size(), 1u);
  EXPECT_EQ((*layers)[0].scale_dtype, StDtype::kU8);
  EXPECT_EQ(f32_bits((*layers)[0].weight_scale_2), f32_bits(s2));
  auto t = load_nvfp4_weight(f.value(), (*layers)[0]);
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->data, q->t.data);
}

TEST(SafetensorsInterop, PythonReadsOurs) {
  if (!python_safetensors()) GTEST_SKIP() << "python3 with safetensors and numpy not found (pip install safetensors numpy)";
  // A quantize-checkpoint output (BF16, F8_E4M3, F32 scalars, U8) plus numpy-readable dtypes.
  Blobs in;
  in.push_back({"a.weight", blob(StDtype::kBF16, {32, 48}, synthetic_weight(32, 48, 7))});
  in.push_back({"a.bias", blob(StDtype::kF32, {32}, std::vector<float>(32, 0.5f))});
  in.push_back({"ids", blob(StDtype::kI64, {3}, std::vector<int64_t>{1, -2, 3})});
  in.push_back({"scalar", f32_blob(7.0f)});
  in.push_back({"empty", Blob{StDtype::kF16, {0}, {}}});
  in.push_back({"keep.weight", blob(StDtype::kBF16, {16, 16}, synthetic_weight(16, 16, 8))});
  const std::string src = tmp("ours_in.safetensors"), dst = tmp("ours_out.safetensors");
  ASSERT_TRUE(write_blobs(src, in, {{"who", "nvfp4"}}).is_ok());
  QuantizeCheckpointOptions o;
  o.layers_regex = "^a$";
  ASSERT_TRUE(quantize_checkpoint(src, dst, o).is_ok());
  auto f = SafetensorsFile::open(dst);
  ASSERT_TRUE(f.is_ok());
  const std::string cmd = "python3 " NVFP4_TESTS_DIR "/safetensors_interop.py read " + dst + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  auto j = Json::parse(out);
  ASSERT_TRUE(j.is_ok()) << out;
  const Json& ts = (*j)["tensors"];
  ASSERT_EQ(ts.size(), f->tensors().size()) << out;
  for (const StTensor& t : f->tensors()) {
    const Json& e = ts[t.name];
    ASSERT_FALSE(e.is_null()) << t.name;
    EXPECT_EQ(e["dtype"].as_string(), to_string(t.dtype)) << t.name;
    std::vector<int64_t> shape;
    for (const Json& d : e["shape"].items()) shape.push_back(d.as_int());
    EXPECT_EQ(shape, t.shape) << t.name;
    EXPECT_EQ(e["sha256"].as_string(), sha256_hex(f->data(t), t.nbytes())) << t.name;
  }
  EXPECT_EQ((*j)["metadata"]["who"].as_string(), "nvfp4");
  EXPECT_FALSE((*j)["metadata"]["_quantization_metadata"].is_null());
}
