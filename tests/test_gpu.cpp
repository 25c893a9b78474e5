// GPU kernels against their CPU counterparts, bit for bit (run on the H200 by tools/gpu-check).
// Without a GPU every test here reports "skipped: no CUDA device".
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "golden_path.hpp"
#include "nvfp4/bench.hpp"
#include "nvfp4/cublaslt.hpp"
#include "nvfp4/cuda.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/validate.hpp"
#include "nvfp4/quant.hpp"
#include "random_tensor.hpp"

#if NVFP4_TESTS_HAVE_CUDART
#include <cuda_runtime.h>

#include "cuda/common/kernels.hpp"
#include "cuda/common/operands.hpp"
#include "cuda/split_plan.hpp"
#include "cuda/sm90/sm90_layout.hpp"
#endif

using namespace nvfp4;

#define REQUIRE_GPU()                                          \
  do {                                                         \
    auto _d = cuda_device();                                   \
    if (!_d.is_ok()) GTEST_SKIP() << "skipped: no CUDA device (" << _d.status().message() << ")"; \
  } while (0)

namespace {
uint32_t canon(float f) { return std::isnan(f) ? 0x7FFFFFFFu : f32_bits(f); }
// The kernels with the streaming A producer (sm120p-*: the pipelined kernel's shared-memory producer).
bool streams_a(GpuGemmKernel k) {
  return k == GpuGemmKernel::kSm120Native || k == GpuGemmKernel::kSm120Emulated || k == GpuGemmKernel::kSm120pNative ||
         k == GpuGemmKernel::kSm120pEmulated;
}
}

TEST(Gpu, RcpApproxTableMatchesTheInstruction) {
  REQUIRE_GPU();
  auto bad = gpu_rcp_mismatches();
  ASSERT_TRUE(bad.is_ok()) << bad.status().message();
  EXPECT_EQ(bad.value(), 0);
}

TEST(Gpu, Bf16PairInstructionEqualsBf16RnOnEveryNonNanFloat) {
  REQUIRE_GPU();
  auto bad = gpu_bf16_pair_mismatches();
  ASSERT_TRUE(bad.is_ok()) << bad.status().message();
  EXPECT_EQ(bad.value(), 0);
}

TEST(Gpu, QuantizerBitIdenticalToCpuOnGoldenAndLargeInputs) {
  REQUIRE_GPU();
  for (const char* f : {"quant/quantize_main.json", "quant/quantize_edge.json"}) {
    auto g = GoldenFile::open(golden_path(f));
    ASSERT_TRUE(g.is_ok());
    for (const auto& key : g->keys()) {
      if (key.size() < 2 || key.substr(key.size() - 2) != ".x") continue;
      const std::string ds = key.substr(0, key.size() - 2);
      const auto x = g->get(key)->to_vector<uint16_t>();
      const int64_t R = g->get(key)->shape[0], C = g->get(key)->shape[1];
      for (const char* sc : {"dyn", "f32", "fixed"}) {
        auto gs = g->get(ds + "." + sc + ".global_scale");
        if (!gs.is_ok()) continue;
        const float s = gs->to_vector<float>()[0];
        for (auto order : {NibbleOrder::kHiFirst, NibbleOrder::kLoFirst})
          for (auto layout : {ScaleLayout::kSwizzled128x4, ScaleLayout::kLinear}) {
            QuantizeOptions o;
            o.pad = true;
            o.nibbles = order;
            o.scale_layout = layout;
            auto gpu = quantize_gpu(x.data(), R, C, s, o);
            auto cpu = quantize(x.data(), R, C, s, o);
            ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
            EXPECT_EQ(gpu->data, cpu->data) << ds << "." << sc;
            EXPECT_EQ(gpu->scales, cpu->scales) << ds << "." << sc;
            if (order == NibbleOrder::kHiFirst && layout == ScaleLayout::kSwizzled128x4) {
              EXPECT_EQ(gpu->data, g->get(ds + "." + sc + ".cuda.packed")->to_vector<uint8_t>()) << ds << "." << sc;
              EXPECT_EQ(gpu->scales, g->get(ds + "." + sc + ".cuda.scales")->to_vector<uint8_t>()) << ds << "." << sc;
            }
          }
      }
    }
  }
  const auto big = synthetic_activation(4096, 5376, 9);
  const float s = global_scale_dynamic(big.data(), big.size());
  auto gpu = quantize_gpu(big.data(), 4096, 5376, s, QuantizeOptions{});
  auto cpu = quantize(big.data(), 4096, 5376, s, QuantizeOptions{});
  ASSERT_TRUE(gpu.is_ok());
  EXPECT_EQ(gpu->data, cpu->data);
  EXPECT_EQ(gpu->scales, cpu->scales);
  // Unaligned rows (cols % 8 != 0) take the scalar path.
  auto odd = synthetic_activation(37, 203, 4);
  QuantizeOptions o;
  o.pad = true;
  EXPECT_EQ(quantize_gpu(odd.data(), 37, 203, 0.01f, o)->data, quantize(odd.data(), 37, 203, 0.01f, o)->data);
}

TEST(Gpu, GemmKernelsBitIdenticalToOracleOnRandomAndOddShapes) {
  REQUIRE_GPU();
  std::mt19937 rng(5);
  const LinearShape shapes[] = {{"a", 40, 1024}, {"b", 8, 64}, {"c", 130, 4000}, {"d", 264, 7168}, {"e", 33, 208}};
  for (const auto& l : shapes) {
    for (int64_t rows : {1, 16, 77, 128}) {
      auto p = prepare_layer(l, rows, rng(), "");
      ASSERT_TRUE(p.is_ok());
      GemmSpec spec;
      spec.alpha = p->alpha;
      auto ref = gemm_oracle(p->a, p->w, spec);
      ASSERT_TRUE(ref.is_ok());
      for (GpuGemmKernel k : available_gpu_kernels()) {
        auto g = gemm_gpu(p->a, p->w, p->alpha, nullptr, k);
        ASSERT_TRUE(g.is_ok()) << to_string(k) << ": " << g.status().message();
        int64_t bad_raw = 0, bad_out = 0;
        for (size_t i = 0; i < g->raw.size(); ++i) {
          bad_raw += canon(g->raw[i]) != canon((*ref)[0].raw[i]);
          bad_out += g->out[i] != (*ref)[0].out[i];
        }
        EXPECT_EQ(bad_raw, 0) << to_string(k) << " " << l.name << " rows " << rows;
        EXPECT_EQ(bad_out, 0) << to_string(k) << " " << l.name << " rows " << rows;
      }
    }
  }
}

TEST(Gpu, GemmKernelsFuseBiasAfterAlpha) {
  REQUIRE_GPU();
  auto p = prepare_layer(LinearShape{"bias", 72, 2048}, 33, 17, "");
  ASSERT_TRUE(p.is_ok());
  std::vector<uint16_t> bias(72);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = bf16_rn(static_cast<float>(static_cast<int>(i) - 36) * 0.37f);
  GemmSpec spec;
  spec.alpha = p->alpha;
  spec.bias = bias.data();
  auto ref = gemm_oracle(p->a, p->w, spec);
  ASSERT_TRUE(ref.is_ok());
  for (GpuGemmKernel k : available_gpu_kernels()) {
    auto g = gemm_gpu(p->a, p->w, p->alpha, bias.data(), k);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    EXPECT_EQ(g->out, (*ref)[0].out) << to_string(k);
  }
}

TEST(Gpu, StreamingAProducerEqualsQuantizeThenGemm) {
  REQUIRE_GPU();
  std::mt19937 rng(11);
  // K not a multiple of 64, of 16, or of 8 (scalar loads); M not a multiple of the tile, and above
  // the pipelined kernel's 128-row tile (several M tiles, a partial one).
  const std::pair<int64_t, int64_t> shapes[] = {{1, 64},   {16, 1024}, {77, 208},  {128, 5376},
                                                {33, 200}, {9, 1000},  {257, 333}, {130, 4000}};
  for (auto [m, k] : shapes) {
    const int64_t n = 40 + static_cast<int64_t>(rng() % 60);
    const auto x = synthetic_activation(m, k, rng());
    const auto wb = synthetic_weight(n, k, rng());
    QuantizeOptions qo;
    qo.pad = true;
    const float s_x = global_scale_dynamic(x.data(), x.size()), s_w = global_scale_dynamic(wb.data(), wb.size());
    auto A = quantize(x.data(), m, k, s_x, qo);
    auto W = quantize(wb.data(), n, k, s_w, qo);
    ASSERT_TRUE(A.is_ok() && W.is_ok());
    GemmSpec spec;
    spec.alpha = s_x * s_w;
    auto ref = gemm_oracle(A.value(), W.value(), spec);
    ASSERT_TRUE(ref.is_ok());
    for (GpuGemmKernel kern : available_gpu_kernels()) {
      if (!streams_a(kern)) continue;
      auto g = gemm_gpu_stream_a(x.data(), m, k, W.value(), nullptr, kern);
      ASSERT_TRUE(g.is_ok()) << g.status().message();
      EXPECT_EQ(f32_bits(g->s_x), f32_bits(s_x)) << m << "x" << k;
      int64_t bad_raw = 0, bad_out = 0;
      for (size_t i = 0; i < g->raw.size(); ++i) {
        bad_raw += canon(g->raw[i]) != canon((*ref)[0].raw[i]);
        bad_out += g->out[i] != (*ref)[0].out[i];
      }
      EXPECT_EQ(bad_raw, 0) << to_string(kern) << " " << m << "x" << n << "x" << k;
      EXPECT_EQ(bad_out, 0) << to_string(kern) << " " << m << "x" << n << "x" << k;
      // Quantize-then-GEMM on the same kernel: the packed A the streaming producer never writes.
      auto q = gemm_gpu(A.value(), W.value(), spec.alpha, nullptr, kern);
      ASSERT_TRUE(q.is_ok()) << q.status().message();
      EXPECT_EQ(q->raw.size(), g->raw.size());
      int64_t bad_q = 0;
      for (size_t i = 0; i < g->raw.size() && i < q->raw.size(); ++i)
        bad_q += canon(g->raw[i]) != canon(q->raw[i]) || g->out[i] != q->out[i];
      EXPECT_EQ(bad_q, 0) << to_string(kern) << " stream vs quantize-then-GEMM " << m << "x" << n << "x" << k;
    }
  }
  // An all-zero activation: s_x = 0, the recipe's saturated scales, zero output.
  std::vector<uint16_t> zeros(16 * 64, 0);
  QuantizeOptions padded;
  padded.pad = true;
  auto W = quantize(synthetic_weight(8, 64, 1).data(), 8, 64, 0.01f, padded);
  ASSERT_TRUE(W.is_ok()) << W.status().message();
  for (GpuGemmKernel kern : {GpuGemmKernel::kSm120Emulated, GpuGemmKernel::kSm120pEmulated}) {
    auto g = gemm_gpu_stream_a(zeros.data(), 16, 64, W.value(), nullptr, kern);
    ASSERT_TRUE(g.is_ok()) << to_string(kern) << ": " << g.status().message();
    EXPECT_EQ(g->s_x, 0.0f) << to_string(kern);
    for (float v : g->raw) EXPECT_EQ(f32_bits(v), 0u) << to_string(kern);
  }
  EXPECT_FALSE(gemm_gpu_stream_a(zeros.data(), 16, 64, W.value(), nullptr, GpuGemmKernel::kModel).is_ok());
}

TEST(Gpu, GemmKernelsOnTheGoldenChains) {
  REQUIRE_GPU();
  auto g = GoldenFile::open(golden_path("mma/gemm_chain.json"));
  ASSERT_TRUE(g.is_ok());
  for (const auto& key : g->keys()) {
    if (key.size() < 8 || key.substr(key.size() - 8) != ".a_codes") continue;
    const std::string p = key.substr(0, key.size() - 7);
    const auto ac = g->get(p + "a_codes").value(), bc = g->get(p + "b_codes").value();
    const int64_t M = ac.shape[0], K = ac.shape[1], N = bc.shape[0];
    auto pack = [&](const GoldenFile::Array& codes, const std::string& sfk, int64_t rows) {
      const Geometry geo = Geometry::of(rows, K);
      const auto c = codes.to_vector<uint8_t>();
      std::vector<uint8_t> d(geo.data_bytes());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < K; j += 2) d[r * geo.row_bytes() + j / 2] = pack_pair(c[r * K + j], c[r * K + j + 1], NibbleOrder::kLoFirst);
      std::vector<uint8_t> sf = g->get(p + sfk)->to_vector<uint8_t>();
      sf.resize(geo.rows16 * geo.sf_cols, 0);  // linear scales cover the rows padded to 16
      auto t = Tensor::make(rows, K, NibbleOrder::kLoFirst, ScaleLayout::kLinear, 1.0f, d, sf);
      EXPECT_TRUE(t.is_ok()) << t.status().message();
      return t.value();
    };
    const Tensor A = pack(ac, "sfa", M), W = pack(bc, "sfb", N);
    const float alpha = g->get(p + "alpha")->to_vector<float>()[0];
    const auto d_seq = g->get(p + "d_seq")->to_vector<float>();
    const auto d_bf16 = g->get(p + "d_bf16")->to_vector<uint16_t>();
    for (GpuGemmKernel k : available_gpu_kernels()) {
      auto out = gemm_gpu(A, W, alpha, nullptr, k);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      for (int64_t i = 0; i < M * N; ++i) {
        ASSERT_EQ(canon(out->raw[i]), canon(d_seq[i])) << to_string(k) << " " << p << " " << i;
        ASSERT_EQ(out->out[i], d_bf16[i]) << to_string(k) << " " << p << " " << i;
      }
    }
  }
}

TEST(Gpu, NativeSm120KernelRefusedOffBlackwell) {
  REQUIRE_GPU();
  auto d = cuda_device();
  if (d->cc_major == 12) GTEST_SKIP() << "this GPU runs the native kernel";
  auto p = prepare_layer(LinearShape{"t", 16, 64}, 16, 1, "");
  auto r = gemm_gpu(p->a, p->w, p->alpha, nullptr, GpuGemmKernel::kSm120Native);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("SM120/SM121"), std::string::npos);
}

TEST(Gpu, CublasLtNvfp4RefusedOffBlackwellWithOneLine) {
  REQUIRE_GPU();
  auto env = cublaslt_env();
  ASSERT_TRUE(env.is_ok()) << env.status().message();
  if (env->cc_major == 10 || env->cc_major == 12) GTEST_SKIP() << "this GPU supports NVFP4 cuBLASLt";
  Status s = cublaslt_nvfp4_supported(env.value());
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("needs compute capability 10.x or 12.x"), std::string::npos);
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  auto probe = cublaslt_probe(128, 5376, 14336, CublasLtPlanRequest{});
  EXPECT_FALSE(probe.is_ok());  // the heuristic has no NVFP4 plan here
  auto p = prepare_layer(LinearShape{"t", 16, 64}, 16, 1, "");
  auto run = cublaslt_gemm(p->a, p->w, p->alpha, nullptr, CublasLtPlanRequest{});
  ASSERT_FALSE(run.is_ok());
  EXPECT_NE(run.status().message().find("needs compute capability 10.x or 12.x"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The Hopper kernel (sm90): beyond the shared tests above, the inputs its fast-path tests are
// about: outlier channels, adversarial scales that force the slow path, NaN/Inf activations, zero
// blocks, subnormal scales, every tile height, a static input scale, repeatability.
namespace {
bool have_sm90() {
  auto d = cuda_device();
  return d.is_ok() && d->cc_major == 9;
}
int64_t count_diff(const GpuGemmOutput& g, const GemmResult& r) {
  int64_t bad = 0;
  for (size_t i = 0; i < g.raw.size(); ++i) bad += canon(g.raw[i]) != canon(r.raw[i]) || g.out[i] != r.out[i];
  return bad;
}
Tensor quantized(const std::vector<uint16_t>& x, int64_t rows, int64_t cols) {
  QuantizeOptions o;
  o.pad = true;
  return quantize(x.data(), rows, cols, global_scale_dynamic(x.data(), x.size()), o).value();
}
// A K-split configuration's name has five fields (BMxRWxTWxNHxKS), the others four.
bool is_ksplit_config(const std::string& cfg) { return std::count(cfg.begin(), cfg.end(), 'x') == 4; }
}  // namespace

TEST(Gpu, Sm90BitIdenticalOnRealisticActivationsAtEveryTokenCount) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t N = 1000, K = 5376;  // N not a multiple of the 128-row tile
  const Tensor W = quantized(synthetic_weight(N, K, 21), N, K);
  for (auto kind : {ActivationKind::kOutlierChannels, ActivationKind::kNormal, ActivationKind::kMiniMax})
    for (int64_t m : {1, 16, 128, 333, 4096}) {
      const Tensor A = quantized(synthetic_activation(m, K, 5 + m, kind), m, K);
      GemmSpec spec;
      spec.alpha = A.global_scale * W.global_scale;
      auto ref = gemm_oracle(A, W, spec);
      ASSERT_TRUE(ref.is_ok());
      auto g = gemm_gpu(A, W, spec.alpha, nullptr, GpuGemmKernel::kSm90);
      ASSERT_TRUE(g.is_ok()) << g.status().message();
      EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "kind " << static_cast<int>(kind) << " m " << m;
      std::printf("[sm90] activations %d m %5lld: %lld element steps, %.5f%% slow, %lld / %lld thread-chunks missed the "
                  "tile / group test, %.3f ms\n",
                  static_cast<int>(kind), static_cast<long long>(m), static_cast<long long>(g->steps),
                  100.0 * g->slow_steps / std::max<int64_t>(1, g->steps), static_cast<long long>(g->tile_misses),
                  static_cast<long long>(g->group_misses), g->kernel_ms);
    }
}

TEST(Gpu, Sm90SlowPathAdversarialScalesZeroBlocksSubnormalsAndEveryTileHeight) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  std::mt19937 rng(99);
  struct Band {
    int lo, hi;
  };
  // full range (NaN 0x7F included), subnormal scales only, a wide band
  for (Band b : {Band{0x00, 0x7F}, Band{0x00, 0x0F}, Band{0x18, 0x60}})
    for (const std::string& cfg : sm90_configs()) {
      const Tensor A = nvfp4::testing::random_tensor(150, 1000, rng, b.lo, b.hi, NibbleOrder::kHiFirst);
      const Tensor W = nvfp4::testing::random_tensor(200, 1000, rng, b.lo, b.hi, NibbleOrder::kLoFirst);
      GemmSpec spec;
      spec.alpha = 0.75f;
      auto ref = gemm_oracle(A, W, spec);
      ASSERT_TRUE(ref.is_ok());
      setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
      auto g = gemm_gpu(A, W, spec.alpha, nullptr, GpuGemmKernel::kSm90);
      unsetenv("NVFP4_SM90_CONFIG");
      ASSERT_TRUE(g.is_ok()) << g.status().message();
      EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "band " << b.lo << ".." << b.hi << " config " << cfg;
      if (b.lo == 0x00 && b.hi == 0x7F) EXPECT_GT(g->slow_steps, g->steps / 10);  // the slow path really ran
    }
}

TEST(Gpu, Sm90EveryTileConfigurationOnOddShapesAndRealisticActivations) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  // M and N not multiples of any tile, K with an odd number of chunks (21) and not a multiple of 64,
  // and K of two chunks (fewer than a K-split stage holds and than its chunk-sum warpgroups), a bias:
  // every configuration's fast path, partial tiles and stages, idle warpgroups.
  const int64_t m = 333, n = 1000;
  std::vector<uint16_t> bias(n);
  for (int64_t i = 0; i < n; ++i) bias[i] = static_cast<uint16_t>(0x3C00 + (i * 37) % 900);
  for (const int64_t k : {int64_t{1337}, int64_t{100}}) {
    const Tensor W = quantized(synthetic_weight(n, k, 31), n, k);
    for (auto kind : {ActivationKind::kOutlierChannels, ActivationKind::kMiniMax}) {
      const Tensor A = quantized(synthetic_activation(m, k, 17, kind), m, k);
      GemmSpec spec;
      spec.alpha = A.global_scale * W.global_scale;
      spec.bias = bias.data();
      auto ref = gemm_oracle(A, W, spec);
      ASSERT_TRUE(ref.is_ok());
      for (const std::string& cfg : sm90_configs()) {
        setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
        auto g = gemm_gpu(A, W, spec.alpha, bias.data(), GpuGemmKernel::kSm90);
        unsetenv("NVFP4_SM90_CONFIG");
        ASSERT_TRUE(g.is_ok()) << g.status().message();
        EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "K " << k << " kind " << static_cast<int>(kind) << " config " << cfg;
        std::printf("[sm90] %-10s K %5lld activations %d: %.5f%% slow, %lld / %lld thread-chunks missed the tile / group test\n",
                    cfg.c_str(), static_cast<long long>(k), static_cast<int>(kind), 100.0 * g->slow_steps / std::max<int64_t>(1, g->steps),
                    static_cast<long long>(g->tile_misses), static_cast<long long>(g->group_misses));
      }
    }
  }
}

// Every K-split configuration on attn_out_proj's geometry at M = 16: 84 tiles of one row block and
// 112 chunks, so each CTA goes round its stage ring many times (the shapes above have at most 21
// chunks). A configuration whose chunk-sum warpgroups shared ring slots (32x1x1x1x4, seven slots
// for four warpgroups) gave wrong bits in one tile here in every run (results v14 r7).
TEST(Gpu, Sm90EveryKSplitConfigurationOnALongK) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 16, n = 5376, k = 7168;
  const Tensor W = quantized(synthetic_weight(n, k, 41), n, k);
  const Tensor A = quantized(synthetic_activation(m, k, 43, ActivationKind::kMiniMax), m, k);
  GemmSpec spec;
  spec.alpha = A.global_scale * W.global_scale;
  auto ref = gemm_oracle(A, W, spec);
  ASSERT_TRUE(ref.is_ok());
  int ksplit = 0;
  for (const std::string& cfg : sm90_configs()) {
    if (!is_ksplit_config(cfg)) continue;
    ++ksplit;
    setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
    for (int run = 0; run < 3; ++run) {
      auto g = gemm_gpu(A, W, spec.alpha, nullptr, GpuGemmKernel::kSm90);
      EXPECT_TRUE(g.is_ok()) << cfg << ": " << g.status().message();
      if (!g.is_ok()) break;
      EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "config " << cfg << " run " << run;
    }
    unsetenv("NVFP4_SM90_CONFIG");
  }
  EXPECT_GE(ksplit, 5);
}

#if NVFP4_TESTS_HAVE_CUDART
namespace {
// Device memory for a test, freed on scope exit.
struct DevMem {
  void* p = nullptr;
  explicit DevMem(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess); }
  ~DevMem() { cudaFree(p); }
  template <typename T>
  T* as() const { return static_cast<T*>(p); }
};

// The device entry points' arguments for a packed A (codes a, swizzled scales sf) or a bf16 x, with
// a bf16 out and an optional fp32 raw, all in device memory; the rest at its defaults.
DeviceMatmul matmul_args(const DevMem& a, const DevMem& sf, int64_t m, int64_t k, NibbleOrder nibbles, float alpha,
                         const DevMem& out, float* raw) {
  DeviceMatmul mm;
  mm.a = a.as<uint8_t>();
  mm.a_scales = sf.as<uint8_t>();
  mm.m = m;
  mm.k = k;
  mm.nibbles = nibbles;
  mm.alpha = alpha;
  mm.out = out.as<uint16_t>();
  mm.raw = raw;
  return mm;
}
// matmul_gpu_device on tile configuration cfg (NVFP4_SM90_CONFIG) into out, filled first with a NaN
// pattern where nothing is written: in `bad`, how many of its bf16 outputs differ from want.
void sm90_bf16_mismatches(const std::string& cfg, const PreparedWeight& w, const DeviceMatmul& mm, const DevMem& out,
                          const std::vector<uint16_t>& want, int64_t& bad) {
  std::vector<uint16_t> got(want.size());
  ASSERT_EQ(cudaMemset(out.p, 0xFF, want.size() * 2), cudaSuccess);
  setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
  const Status s = matmul_gpu_device(w, mm);
  unsetenv("NVFP4_SM90_CONFIG");
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(got.data(), out.p, want.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  bad = 0;
  for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
}
// The operands of the bf16-output tests, A [m, k] and W [n, k]: outlier-channel activations and a
// synthetic checkpoint weight (seeds a_seed, w_seed), or adversarial codes and scales from rng for
// both (the NaN scale byte included, so that NaN outputs occur).
struct OutputTestOperands {
  Tensor A, W;
};
OutputTestOperands output_test_operands(bool adversarial, int64_t m, int64_t n, int64_t k, std::mt19937& rng, uint64_t a_seed,
                                        uint64_t w_seed) {
  if (adversarial)
    return {nvfp4::testing::random_tensor(m, k, rng, 0x00, 0x7F, NibbleOrder::kHiFirst).with(NibbleOrder::kHiFirst, ScaleLayout::kSwizzled128x4),
            nvfp4::testing::random_tensor(n, k, rng, 0x20, 0x50, NibbleOrder::kLoFirst)};
  return {quantized(synthetic_activation(m, k, a_seed, ActivationKind::kOutlierChannels), m, k),
          quantized(synthetic_weight(n, k, w_seed), n, k)};
}
DeviceLinear linear_args(const DevMem& x, int64_t m, int64_t k, const DevMem& out, float* raw) {
  DeviceLinear ln;
  ln.x = x.as<uint16_t>();
  ln.m = m;
  ln.k = k;
  ln.out = out.as<uint16_t>();
  ln.raw = raw;
  return ln;
}

// The sm90 pre-pass's outputs for m tokens (mp padded, blocks of bm) and `chunks` k64 chunks, and
// its arguments with that geometry (the input side is the caller's).
struct PrepOutputs {
  int64_t m, chunks, mp, bm;
  DevMem a16{static_cast<size_t>(mp * chunks * 64 * 2)}, trec{mp * chunks * sizeof(cuda::sm90::TokenRec)},
      atile{(mp / bm) * chunks * sizeof(cuda::sm90::TileRec)}, agroup{(mp / bm) * chunks * 4 * sizeof(cuda::sm90::TileRec)};
  cuda::Sm90Prep args() const {
    cuda::Sm90Prep p;
    p.m = m;
    p.chunks = chunks;
    p.mp = mp;
    p.bm = static_cast<int>(bm);
    p.a16 = a16.as<uint16_t>();
    p.trec = trec.as<cuda::sm90::TokenRec>();
    p.atile = atile.as<cuda::sm90::TileRec>();
    p.agroup = agroup.as<cuda::sm90::TileRec>();
    return p;
  }
};
}  // namespace

// The device-pointer path a Python/torch caller takes (prepare_weight_gpu_device, matmul_gpu_device,
// linear_gpu_device): the weight prepacked on the GPU is the host prepack's bytes, and the results
// are the oracle's bits; both nibble orders, N not a multiple of 64, K not of 64.
TEST(Gpu, Sm90DevicePrepackAndDeviceCallsEqualTheHostPrepackAndTheOracle) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 77, k = 1000;
  for (int64_t n : {72, 200})
    for (NibbleOrder nib : {NibbleOrder::kHiFirst, NibbleOrder::kLoFirst}) {
      const Tensor W = quantized(synthetic_weight(n, k, 41 + n), n, k).with(nib, ScaleLayout::kSwizzled128x4);
      auto host = prepare_weight_gpu(W, GpuGemmKernel::kSm90);
      ASSERT_TRUE(host.is_ok()) << host.status().message();
      DevMem dw(W.data.size()), ds(W.scales.size());
      ASSERT_EQ(cudaMemcpy(dw.p, W.data.data(), W.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(ds.p, W.scales.data(), W.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
      DeviceWeightSource src;
      src.data = dw.as<uint8_t>();
      src.scales = ds.as<uint8_t>();
      src.n = n;
      src.k = k;
      src.nibbles = nib;
      src.global_scale = W.global_scale;
      auto dev = prepare_weight_gpu_device(src, GpuGemmKernel::kSm90);
      ASSERT_TRUE(dev.is_ok()) << dev.status().message();
      auto hb = prepared_weight_bytes(*host.value()), db = prepared_weight_bytes(*dev.value());
      ASSERT_TRUE(hb.is_ok() && db.is_ok());
      EXPECT_EQ(hb->codes, db->codes) << "n " << n;
      EXPECT_EQ(hb->scales, db->scales);
      EXPECT_EQ(hb->records, db->records);

      const auto x = synthetic_activation(m, k, 43, ActivationKind::kOutlierChannels);
      const Tensor A = quantized(x, m, k);
      GemmSpec spec;
      spec.alpha = A.global_scale * W.global_scale;
      auto ref = gemm_oracle(A, W, spec);
      ASSERT_TRUE(ref.is_ok());
      DevMem da(A.data.size()), dsa(A.scales.size()), dout(m * n * 2), draw(m * n * 4), dx(x.size() * 2);
      ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
      GpuGemmOutput got;
      got.out.resize(m * n);
      got.raw.resize(m * n);
      DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, draw.as<float>());
      for (const auto* w : {host.value().get(), dev.value().get()}) {
        ASSERT_TRUE(matmul_gpu_device(*w, mm).is_ok());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << "matmul n " << n;
      }
      // The layer's real input: bf16 x quantized on the GPU (dynamic scale), the same oracle bits.
      DeviceLinear ln = linear_args(dx, m, k, dout, draw.as<float>());
      ASSERT_TRUE(linear_gpu_device(*dev.value(), ln).is_ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << "linear n " << n;
    }
}

// Without the fp32 copy (raw = null) the sm90 epilogue writes the bf16 output with one 8-byte store
// per lane and four rows where 4 | n (bf16_rn by the pair instruction, NaNs by bf16_rn), and element
// by element otherwise: both, under every tile configuration, on a partial last row block (n = 1000:
// 40 rows; n = 998: 38) and partial token tiles (m = 333), with a bias, equal the oracle's bf16
// output, on outlier-channel activations and on random codes under the full scale-byte range (NaN
// 0x7F included: NaN outputs with their payloads).
TEST(Gpu, Sm90Bf16OutputWithoutTheFp32CopyOnEveryTileConfiguration) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 333, k = 1337;
  std::mt19937 rng(61);
  for (const bool adversarial : {false, true})
    for (const int64_t n : {int64_t{1000}, int64_t{996}, int64_t{998}}) {  // the output by tensor copies (8 | n), by 8-byte stores, element by element
      const auto [A, W] = output_test_operands(adversarial, m, n, k, rng, 19, 53 + n);
      std::vector<uint16_t> bias(n);
      for (int64_t i = 0; i < n; ++i) bias[i] = static_cast<uint16_t>(0xBC00 + (i * 29) % 700);
      // Besides the checkpoint's alpha, a subnormal one and one above 2^120: the edges of folding 2^7
      // into alpha (one multiply instead of two; results v32 r5, not kept, exact below 2^120 only).
      const std::vector<float> alphas = adversarial ? std::vector<float>{0.75f}
                                                    : std::vector<float>{A.global_scale * W.global_scale, 0x1p121f, 0x1p-140f};
      auto w = prepare_weight_gpu(W, GpuGemmKernel::kSm90);
      ASSERT_TRUE(w.is_ok()) << w.status().message();
      DevMem da(A.data.size()), dsa(A.scales.size()), dout(m * n * 2), dbias(n * 2);
      ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dbias.p, bias.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
      for (const float alpha : alphas) {
        GemmSpec spec;
        spec.alpha = alpha;
        spec.bias = bias.data();
        auto ref = gemm_oracle(A, W, spec);
        ASSERT_TRUE(ref.is_ok());
        const std::vector<uint16_t>& want = (*ref)[0].out;
        if (adversarial)  // NaN outputs really occur
          EXPECT_GT(std::count_if(want.begin(), want.end(), [](uint16_t h) { return (h & 0x7FFF) > 0x7F80; }), 0);
        DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, nullptr);
        mm.bias = dbias.as<uint16_t>();
        for (const std::string& cfg : sm90_configs()) {
          int64_t bad = -1;
          ASSERT_NO_FATAL_FAILURE(sm90_bf16_mismatches(cfg, *w.value(), mm, dout, want, bad));
          EXPECT_EQ(bad, 0) << (adversarial ? "adversarial" : "outliers") << " n " << n << " alpha " << alpha << " config " << cfg;
        }
      }
    }
}

namespace {
// NVFP4_TEST_SM90_CONFIGS (a comma list) runs some configurations only in the tests that take it:
// compute-sanitizer's racecheck takes minutes for all of them.
bool sm90_config_selected(const std::string& cfg) {
  const char* only = std::getenv("NVFP4_TEST_SM90_CONFIGS");
  return !only || ("," + std::string(only) + ",").find("," + cfg + ",") != std::string::npos;
}
}  // namespace

// The output by tensor copies with more tiles than SMs on every configuration, so that CTAs write
// their buffers again (each waits for its previous copy to have read it): 2053 tokens x 1544 rows
// (25 row blocks, the last of 8 rows), outlier activations and adversarial ones with NaN outputs.
// Takes NVFP4_TEST_SM90_CONFIGS.
TEST(Gpu, Sm90Bf16OutputBuffersReusedAcrossTiles) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 2053, n = 1544, k = 192;
  std::mt19937 rng(67);
  for (const bool adversarial : {false, true}) {
    const auto [A, W] = output_test_operands(adversarial, m, n, k, rng, 23, 71);
    std::vector<uint16_t> bias(n);
    for (int64_t i = 0; i < n; ++i) bias[i] = static_cast<uint16_t>(0x3C00 + (i * 37) % 900);
    GemmSpec spec;
    spec.alpha = adversarial ? 0.75f : A.global_scale * W.global_scale;
    spec.bias = bias.data();
    auto ref = gemm_oracle(A, W, spec);
    ASSERT_TRUE(ref.is_ok());
    const std::vector<uint16_t>& want = (*ref)[0].out;
    if (adversarial) EXPECT_GT(std::count_if(want.begin(), want.end(), [](uint16_t h) { return (h & 0x7FFF) > 0x7F80; }), 0);
    auto w = prepare_weight_gpu(W, GpuGemmKernel::kSm90);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    DevMem da(A.data.size()), dsa(A.scales.size()), dout(m * n * 2), dbias(n * 2);
    ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dbias.p, bias.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
    DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, nullptr);
    mm.bias = dbias.as<uint16_t>();
    for (const std::string& cfg : sm90_configs()) {
      if (!sm90_config_selected(cfg)) continue;
      int64_t bad = -1;
      ASSERT_NO_FATAL_FAILURE(sm90_bf16_mismatches(cfg, *w.value(), mm, dout, want, bad));
      EXPECT_EQ(bad, 0) << (adversarial ? "adversarial" : "outliers") << " config " << cfg;
    }
  }
}

// A last round of tiles taken as units of one row block (128x2x1x1, where the last round of tiles is
// partial and its row blocks fit one round): 3437 tokens x 1832 rows (29 row blocks, the last of 40
// rows, so that the last row tile of two, three or four blocks is short as well) give 27 x 15 = 405
// tiles of 128x2x1x1, a last round of 9 tiles on 132 SMs (18 units). Every configuration, the bf16
// output and (outlier activations) the fp32 one, outlier and adversarial activations. Takes
// NVFP4_TEST_SM90_CONFIGS.
TEST(Gpu, Sm90LastRoundOfOneRowBlockUnits) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 3437, n = 1832, k = 192;
  std::mt19937 rng(71);
  for (const bool adversarial : {false, true}) {
    const auto [A, W] = output_test_operands(adversarial, m, n, k, rng, 29, 73);
    GemmSpec spec;
    spec.alpha = adversarial ? 0.75f : A.global_scale * W.global_scale;
    auto ref = gemm_oracle(A, W, spec);
    ASSERT_TRUE(ref.is_ok());
    auto w = prepare_weight_gpu(W, GpuGemmKernel::kSm90);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    DevMem da(A.data.size()), dsa(A.scales.size()), dout(m * n * 2);
    ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
    const DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, nullptr);
    for (const std::string& cfg : sm90_configs()) {
      if (!sm90_config_selected(cfg)) continue;
      int64_t bad = -1;
      ASSERT_NO_FATAL_FAILURE(sm90_bf16_mismatches(cfg, *w.value(), mm, dout, (*ref)[0].out, bad));
      EXPECT_EQ(bad, 0) << (adversarial ? "adversarial" : "outliers") << " config " << cfg;
      if (adversarial) continue;
      setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
      auto g = gemm_gpu(A, W, spec.alpha, nullptr, GpuGemmKernel::kSm90);
      unsetenv("NVFP4_SM90_CONFIG");
      ASSERT_TRUE(g.is_ok()) << g.status().message();
      EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "fp32 and bf16 outputs, config " << cfg;
    }
  }
}

// The K-split's two stage loops: with the chunks per tile a multiple of the stage's, a chunk-sum
// warpgroup of four-chunk stages waits for its slot group and arrives once per stage, otherwise
// once per chunk. K = 768 and 1280 (12 and 20 chunks: whole stages of 2 and 4, each CTA's last
// slot group of eight short by four, so the stage's one arrival also counts the missing chunks),
// 448 (7: a partial last stage) and 1088 (17); M = 16 and 32 on 300 rows (five row blocks, the
// last partial: a tile per CTA) and M = 144 on 2000 rows (288 or 160 tiles: CTAs of two and three
// tiles). Takes NVFP4_TEST_SM90_CONFIGS.
TEST(Gpu, Sm90KSplitWholeAndPartialStagesAndShortSlotGroups) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  struct Shape {
    int64_t m, n;
  };
  int runs = 0;
  for (const int64_t k : {int64_t{768}, int64_t{1280}, int64_t{448}, int64_t{1088}}) {
    for (const Shape sh : {Shape{16, 300}, Shape{32, 300}, Shape{144, 2000}}) {
      const Tensor W = quantized(synthetic_weight(sh.n, k, 47), sh.n, k);
      const Tensor A = quantized(synthetic_activation(sh.m, k, 53, ActivationKind::kOutlierChannels), sh.m, k);
      GemmSpec spec;
      spec.alpha = A.global_scale * W.global_scale;
      auto ref = gemm_oracle(A, W, spec);
      ASSERT_TRUE(ref.is_ok());
      for (const std::string& cfg : sm90_configs()) {
        if (!is_ksplit_config(cfg) || !sm90_config_selected(cfg)) continue;
        setenv("NVFP4_SM90_CONFIG", cfg.c_str(), 1);
        auto g = gemm_gpu(A, W, spec.alpha, nullptr, GpuGemmKernel::kSm90);
        unsetenv("NVFP4_SM90_CONFIG");
        EXPECT_TRUE(g.is_ok()) << cfg << " K=" << k << ": " << g.status().message();
        if (!g.is_ok()) continue;
        EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "config " << cfg << " M=" << sh.m << " N=" << sh.n << " K=" << k;
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, std::getenv("NVFP4_TEST_SM90_CONFIGS") ? 12 : 4 * 3 * 5);
}

namespace {
// fp16 bits -> value, exactly (normal, subnormal and zero; the pre-pass writes no Inf or NaN).
float f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1F, f = h & 0x3FF;
  const float v = e == 0 ? std::ldexp(static_cast<float>(f), -24) : std::ldexp(static_cast<float>(f | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
// A' of element kk of row src as the pre-pass must write it (exact): lo_first packed A data (lda
// bytes a row), 128x4 swizzled scales (cp columns); a NaN scale byte gives 0 (the slow path says NaN).
float host_a_prime(const std::vector<uint8_t>& data, const std::vector<uint8_t>& sf, int64_t lda, int64_t cp, int64_t src, int64_t kk) {
  const uint8_t byte = sf[swizzled_offset(src, kk / 16, cp)];
  const float sv = (byte & 0x7F) == 0x7F ? 0.0f : hopper::scale_value(byte);
  return e2m1_decode((data[src * lda + kk / 2] >> (4 * (kk % 2))) & 0xF) * sv;
}
}  // namespace

// The sm90 pre-pass's outputs from packed A (A' in fp16, the per-token records, the tile and
// thread-group records; sm90_prep_a.cu) equal the same quantities computed here on the host from the
// §3 definitions (hopper_exact.hpp), for every tile height, M and K off the tile, and scale bytes
// covering zero, subnormal, the largest finite and the NaN pattern; with one chunk per CTA and, from
// 64 tokens, with two and four (18 chunks: the last CTA of four takes two).
TEST(Gpu, Sm90PrePassEqualsTheHostRecords) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 333, k = 1100, k64 = 1152, chunks = k64 / 64, lda = k64 / 2, cp = k64 / 16;
  const auto x = synthetic_activation(m, k, 47, ActivationKind::kOutlierChannels);
  const Tensor A = quantized(x, m, k);
  std::vector<uint8_t> data, sf;
  cuda::prepare_operand(A, lda, data, sf);
  std::mt19937 rng(5);
  const uint8_t special[] = {0x00, 0x01, 0x07, 0x08, 0x7E, 0x7F, 0xFF};
  for (int i = 0; i < 400; ++i) sf[rng() % sf.size()] = special[rng() % sizeof special];
  // Every code byte (two codes) under every scale byte: rows 0-63 take all 256 code bytes in turn,
  // rows 0-127 all 256 scale bytes (the pre-pass decodes codes and scales by bit tricks).
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t b = 0; b < lda; ++b) data[r * lda + b] = static_cast<uint8_t>(r * 7 + b);
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t col = 0; col < cp; ++col) sf[swizzled_offset(r, col, cp)] = static_cast<uint8_t>(r * 16 + col * 3);
  DevMem da(data.size()), ds(sf.size());
  ASSERT_EQ(cudaMemcpy(da.p, data.data(), data.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(ds.p, sf.data(), sf.size(), cudaMemcpyHostToDevice), cudaSuccess);
  for (const auto [bm, cpb] : {std::pair<int, int>{8, 1}, {16, 1}, {24, 1}, {32, 1}, {48, 1}, {64, 1}, {64, 2}, {64, 4}, {128, 1},
                                {128, 2}, {128, 4}, {256, 1}, {256, 4}}) {  // the GEMM's heights, and others the pre-pass takes (8 to 256, multiples of 8)
    const int64_t mp = (m + bm - 1) / bm * bm, blocks = mp / bm;
    const PrepOutputs out{m, chunks, mp, bm};
    const DevMem &a16 = out.a16, &trec = out.trec, &atile = out.atile, &agroup = out.agroup;
    // Every output byte written: NaN patterns where the pre-pass leaves one out.
    ASSERT_EQ(cudaMemset(a16.p, 0xFF, mp * k64 * 2), cudaSuccess);
    ASSERT_EQ(cudaMemset(trec.p, 0xFF, mp * chunks * sizeof(cuda::sm90::TokenRec)), cudaSuccess);
    ASSERT_EQ(cudaMemset(atile.p, 0xFF, blocks * chunks * sizeof(cuda::sm90::TileRec)), cudaSuccess);
    ASSERT_EQ(cudaMemset(agroup.p, 0xFF, blocks * chunks * 4 * sizeof(cuda::sm90::TileRec)), cudaSuccess);
    cuda::Sm90Prep p = out.args();
    p.a = da.as<uint8_t>();
    p.sfa = ds.as<uint8_t>();
    p.chunks_per_cta = cpb;
    ASSERT_TRUE(cuda::launch_sm90_prep(p, nullptr).is_ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> g16(mp * k64);
    std::vector<cuda::sm90::TokenRec> gt(mp * chunks);
    std::vector<cuda::sm90::TileRec> gtile(blocks * chunks), ggroup(blocks * chunks * 4);
    ASSERT_EQ(cudaMemcpy(g16.data(), a16.p, g16.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(gt.data(), trec.p, gt.size() * sizeof gt[0], cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(gtile.data(), atile.p, gtile.size() * sizeof gtile[0], cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(ggroup.data(), agroup.p, ggroup.size() * sizeof ggroup[0], cudaMemcpyDeviceToHost), cudaSuccess);
    auto same_rec = [](const cuda::sm90::TileRec& a, const cuda::sm90::TileRec& b) {
      for (int g = 0; g < 4; ++g)
        if (f32_bits(a.mag_n[g]) != f32_bits(b.mag_n[g]) || f32_bits(a.mag[g]) != f32_bits(b.mag[g])) return false;
      return a.lo == b.lo && a.hi == b.hi && (a.nan != 0) == (b.nan != 0);
    };
    int64_t bad16 = 0, badt = 0, badtile = 0, badgroup = 0;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t b = 0; b < blocks; ++b) {
        hopper::TileChunk tile, group[4];
        hopper::tile_init(tile);
        for (auto& t : group) hopper::tile_init(t);
        for (int i = 0; i < bm; ++i) {
          const int64_t row = b * bm + i, src = row < m ? row : m - 1;  // padding tokens repeat the last
          uint32_t sf4 = 0;
          std::memcpy(&sf4, &sf[swizzled_offset(src, 4 * c, cp)], 4);
          float asum[4] = {0, 0, 0, 0};
          for (int kk = 0; kk < 64; ++kk) {
            const float v = host_a_prime(data, sf, lda, cp, src, c * 64 + kk);
            asum[kk / 16] += std::fabs(v);  // exact
            bad16 += f32_bits(f16_value(g16[row * k64 + c * 64 + kk])) != f32_bits(v);
          }
          const hopper::RowChunk rc = hopper::activation_chunk(sf4, asum);
          const cuda::sm90::TokenRec& t = gt[(b * chunks + c) * bm + i];
          bool ok = t.sf == sf4 && t.lo == rc.lo && t.hi == rc.hi && (t.nan != 0) == rc.nan;
          for (int g = 0; g < 4; ++g) ok = ok && f32_bits(t.mag[g]) == f32_bits(rc.mag[g]);
          badt += !ok;
          hopper::tile_add(tile, rc, asum);
          hopper::tile_add(group[(i % 8) / 2], rc, asum);
        }
        badtile += !same_rec(gtile[c * blocks + b], cuda::sm90::tile_rec(tile));
        for (int t = 0; t < 4; ++t) badgroup += !same_rec(ggroup[(b * chunks + c) * 4 + t], cuda::sm90::tile_rec(group[t]));
      }
    EXPECT_EQ(bad16, 0) << "bm " << bm << " chunks per CTA " << cpb;
    EXPECT_EQ(badt, 0) << "bm " << bm << " chunks per CTA " << cpb;
    EXPECT_EQ(badtile, 0) << "bm " << bm << " chunks per CTA " << cpb;
    EXPECT_EQ(badgroup, 0) << "bm " << bm << " chunks per CTA " << cpb;
  }
  // Chunks per CTA the pre-pass does not take: refused with a one-line reason.
  const PrepOutputs out{m, chunks, 384, 16};
  for (const auto [bm, cpb] : {std::pair<int, int>{128, 3}, {16, 2}, {128, -1}}) {
    cuda::Sm90Prep p = out.args();
    p.bm = bm;
    p.a = da.as<uint8_t>();
    p.sfa = ds.as<uint8_t>();
    p.chunks_per_cta = cpb;
    const Status st = cuda::launch_sm90_prep(p, nullptr);
    EXPECT_FALSE(st.is_ok()) << bm << " " << cpb;
    EXPECT_NE(st.message().find("chunks per CTA"), std::string::npos) << st.message();
  }
}

// The amax in per-block pieces (no zeroed word, no atomics; the streaming sm90 pre-pass reduces
// them itself after a programmatic dependent launch) equals the single-word atomic amax and the
// host's max |x| with NaN skipped, on sizes off the 16-byte vector and the block, an unaligned x,
// NaN and Inf values and an all-zero x; and the pre-pass makes the same dynamic scale and A' from
// the pieces as from the word.
TEST(Gpu, AmaxPartialsEqualTheSingleWordAmax) {
  REQUIRE_GPU();
  std::mt19937 rng(71);
  const int64_t sizes[] = {1, 7, 8, 1000, 333 * 1000 + 3, 2048 * 7168};
  for (const int64_t n : sizes)
    for (int variant = 0; variant < 3; ++variant) {  // random with NaN/Inf, all zero, unaligned start
      std::vector<uint16_t> x(n + 1);
      for (auto& v : x) v = variant == 1 ? 0 : static_cast<uint16_t>(rng());
      if (variant != 1) {
        x[rng() % x.size()] = 0x7FC1;  // NaN: skipped
        x[rng() % x.size()] = 0xFF80;  // -Inf: the maximum
      }
      const uint16_t* host = x.data() + (variant == 2 ? 1 : 0);
      uint32_t want = 0;
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t a = host[i] & 0x7FFFu;
        if (a <= 0x7F80u && a > want) want = a;
      }
      DevMem dx(x.size() * 2), word(4), parts(cuda::amax_partial_count(n) * 4);
      ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
      const uint16_t* dev = dx.as<uint16_t>() + (variant == 2 ? 1 : 0);
      ASSERT_EQ(cudaMemset(word.p, 0, 4), cudaSuccess);
      ASSERT_EQ(cudaMemset(parts.p, 0xFF, cuda::amax_partial_count(n) * 4), cudaSuccess);  // every piece must be written
      ASSERT_TRUE(cuda::launch_amax_bf16(dev, n, word.as<uint32_t>(), nullptr).is_ok());
      ASSERT_TRUE(cuda::launch_amax_bf16_partials(dev, n, parts.as<uint32_t>(), nullptr).is_ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      uint32_t got_word = 0;
      std::vector<uint32_t> got_parts(cuda::amax_partial_count(n));
      ASSERT_EQ(cudaMemcpy(&got_word, word.p, 4, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got_parts.data(), parts.p, got_parts.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      const uint32_t got = *std::max_element(got_parts.begin(), got_parts.end());
      EXPECT_EQ(got_word, want) << "n " << n << " variant " << variant;
      EXPECT_EQ(got, want) << "n " << n << " variant " << variant;
    }
  if (!have_sm90()) return;
  // The pre-pass from bf16 x: scale and A' through the word (amax launched here) and through its
  // own amax pass on x_amax_partials: in pieces under a programmatic dependent launch (77 x 1000),
  // and for an activation whose amax takes the full grid, through the word in piece 0 (264 x 8000).
  for (const auto [m, k] : {std::pair<int64_t, int64_t>{77, 1000}, {264, 8000}}) {
    const int64_t k64 = (k + 63) / 64 * 64, chunks = k64 / 64, bm = 16, mp = (m + bm - 1) / bm * bm;
    const auto x = synthetic_activation(m, k, 13, ActivationKind::kOutlierChannels);
    DevMem dx(x.size() * 2), word(4), parts(cuda::amax_partial_count(m * k) * 4), sx(8);
    ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    std::vector<uint16_t> a16[2];
    float s_x[2] = {0, 0};
    for (int way = 0; way < 2; ++way) {
      const PrepOutputs out{m, chunks, mp, bm};
      cuda::Sm90Prep p = out.args();
      p.x = dx.as<uint16_t>();
      p.k = k;
      p.s_w = 1.0f;
      p.s_x_out = sx.as<float>() + way;
      if (way == 0) {
        ASSERT_EQ(cudaMemset(word.p, 0, 4), cudaSuccess);
        ASSERT_TRUE(cuda::launch_amax_bf16(p.x, m * k, word.as<uint32_t>(), nullptr).is_ok());
        p.x_amax = word.as<uint32_t>();
      } else {
        ASSERT_EQ(cudaMemset(parts.p, 0xFF, cuda::amax_partial_count(m * k) * 4), cudaSuccess);  // garbage: must be overwritten
        p.x_amax_partials = parts.as<uint32_t>();
      }
      ASSERT_TRUE(cuda::launch_sm90_prep(p, nullptr).is_ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      a16[way].resize(mp * k64);
      ASSERT_EQ(cudaMemcpy(a16[way].data(), out.a16.p, a16[way].size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    ASSERT_EQ(cudaMemcpy(s_x, sx.p, 8, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(f32_bits(s_x[0]), f32_bits(s_x[1])) << m << "x" << k;
    EXPECT_GT(s_x[1], 0.0f);
    EXPECT_TRUE(a16[0] == a16[1]) << m << "x" << k;
    // And A' is the host quantizer's codes times its scales (comfy-cuda, the same dynamic scale),
    // padding tokens repeating the last, zeros past K.
    const Tensor A = quantized(x, m, k);
    const int64_t lda = k64 / 2, cp = k64 / 16;
    std::vector<uint8_t> data, sf;
    cuda::prepare_operand(A, lda, data, sf);
    int64_t bad = 0;
    for (int64_t row = 0; row < mp; ++row)
      for (int64_t kk = 0; kk < k64; ++kk) {
        const int64_t src = row < m ? row : m - 1;
        bad += f32_bits(f16_value(a16[0][row * k64 + kk])) != f32_bits(host_a_prime(data, sf, lda, cp, src, kk));
      }
    EXPECT_EQ(bad, 0) << m << "x" << k;
  }
  const int64_t m = 77, k = 1000, chunks = 16, mp = 80, bm = 16;
  DevMem dx(m * k * 2);
  // Neither source of a dynamic scale: refused, one line.
  cuda::Sm90Prep bad;
  bad.x = dx.as<uint16_t>();
  bad.k = k;
  bad.m = m;
  bad.chunks = chunks;
  bad.mp = mp;
  bad.bm = bm;
  const Status st = cuda::launch_sm90_prep(bad, nullptr);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("x_amax"), std::string::npos);
}

// The pre-pass from bf16 x with two chunks per CTA (the launcher's choice for large activations)
// writes the same bytes as with one (sm90_prep_a, whose A' the test above checks against the host
// quantizer): A', the token, tile and thread-group records, alpha and s_x, for a dynamic scale from
// the amax word, a static host scale and a static scale in device memory; tile heights 64 and
// 128, K off the tile with an odd chunk count (the last CTA takes one chunk), NaN and Inf values
// in x. Chunk counts the launcher does not take for bf16 x are refused with a one-line reason.
TEST(Gpu, Sm90PrePassChunksPerCtaSameBytes) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 333, k = 1030, k64 = 1088, chunks = k64 / 64;
  auto x = synthetic_activation(m, k, 19, ActivationKind::kOutlierChannels);
  x[7] = 0x7FC0;            // NaN: the quantizer's NaN path
  x[2 * k + 100] = 0xFF80;  // -Inf
  DevMem dx(x.size() * 2), word(4), dscale(4), outs(16);
  ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(word.p, 0, 4), cudaSuccess);
  ASSERT_TRUE(cuda::launch_amax_bf16(dx.as<uint16_t>(), m * k, word.as<uint32_t>(), nullptr).is_ok());
  const float s_static = 0.0421875f;
  ASSERT_EQ(cudaMemcpy(dscale.p, &s_static, 4, cudaMemcpyHostToDevice), cudaSuccess);
  for (int bm : {64, 128})
    for (int scale = 0; scale < 3; ++scale) {  // the amax word, the host's static scale, a device scale
      const int64_t mp = (m + bm - 1) / bm * bm, blocks = mp / bm;
      std::vector<uint8_t> got[2][4];
      uint32_t scalars[2][2] = {{0, 0}, {0, 0}};
      for (int cpb : {1, 2}) {
        const PrepOutputs out{m, chunks, mp, bm};
        const size_t bytes[4] = {static_cast<size_t>(mp * k64 * 2), mp * chunks * sizeof(cuda::sm90::TokenRec),
                                 blocks * chunks * sizeof(cuda::sm90::TileRec), blocks * chunks * 4 * sizeof(cuda::sm90::TileRec)};
        const DevMem* bufs[4] = {&out.a16, &out.trec, &out.atile, &out.agroup};
        for (int b = 0; b < 4; ++b) ASSERT_EQ(cudaMemset(bufs[b]->p, 0xA5, bytes[b]), cudaSuccess);  // every byte must be written
        ASSERT_EQ(cudaMemset(outs.p, 0, 16), cudaSuccess);
        cuda::Sm90Prep p = out.args();
        p.x = dx.as<uint16_t>();
        p.k = k;
        p.s_w = 0.75f;
        p.alpha_out = outs.as<float>();
        p.s_x_out = outs.as<float>() + 1;
        if (scale == 0) p.x_amax = word.as<uint32_t>();
        if (scale == 1) p.s_static = s_static;
        if (scale == 2) p.alpha_a = dscale.as<float>();
        p.chunks_per_cta = cpb;
        ASSERT_TRUE(cuda::launch_sm90_prep(p, nullptr).is_ok()) << "bm " << bm << " scale " << scale << " cpb " << cpb;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        for (int b = 0; b < 4; ++b) {
          got[cpb - 1][b].resize(bytes[b]);
          ASSERT_EQ(cudaMemcpy(got[cpb - 1][b].data(), bufs[b]->p, bytes[b], cudaMemcpyDeviceToHost), cudaSuccess);
        }
        ASSERT_EQ(cudaMemcpy(scalars[cpb - 1], outs.p, 8, cudaMemcpyDeviceToHost), cudaSuccess);
      }
      // TileRec's padding bytes are written as zeros by both kernels (whole-struct stores).
      const char* names[4] = {"A'", "token records", "tile records", "group records"};
      for (int b = 0; b < 4; ++b) EXPECT_TRUE(got[0][b] == got[1][b]) << names[b] << ", bm " << bm << " scale " << scale;
      EXPECT_EQ(scalars[0][0], scalars[1][0]) << "alpha, bm " << bm << " scale " << scale;
      EXPECT_EQ(scalars[0][1], scalars[1][1]) << "s_x, bm " << bm << " scale " << scale;
      EXPECT_NE(scalars[1][1], 0u) << "s_x written";
    }
  // Refused: four chunks per CTA of bf16 x, and two where the dynamic scale comes in amax pieces.
  DevMem parts(cuda::amax_partial_count(m * k) * 4);
  for (int way = 0; way < 2; ++way) {
    const PrepOutputs out{m, chunks, 384, 128};
    cuda::Sm90Prep p = out.args();
    p.x = dx.as<uint16_t>();
    p.k = k;
    p.s_w = 1.0f;
    if (way == 0) {
      p.s_static = s_static;
      p.chunks_per_cta = 4;
    } else {
      p.x_amax_partials = parts.as<uint32_t>();
      p.chunks_per_cta = 2;
    }
    const Status st = cuda::launch_sm90_prep(p, nullptr);
    EXPECT_FALSE(st.is_ok()) << way;
    EXPECT_NE(st.message().find("chunks per CTA"), std::string::npos) << st.message();
  }
}
#endif

TEST(Gpu, Sm90StreamingWithNanInfActivationsAndStaticScale) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 70, k = 1000, n = 130;
  // NaN everywhere; +-Inf only with the static scale (a dynamic scale of an Inf tensor is Inf,
  // which the quantizer refuses as a global scale).
  auto x_nan = synthetic_activation(m, k, 8, ActivationKind::kOutlierChannels);
  x_nan[5] = 0x7FC0;
  x_nan[2 * k + 333] = 0xFFC1;
  auto x_inf = x_nan;
  x_inf[k + 17] = 0x7F80;
  x_inf[3 * k + 900] = 0xFF80;
  const Tensor W = quantized(synthetic_weight(n, k, 9), n, k);
  QuantizeOptions o;
  o.pad = true;
  for (float s_static : {0.0f, 0.0421875f}) {
    const auto& x = s_static > 0 ? x_inf : x_nan;
    const float s_x = s_static > 0 ? s_static : global_scale_dynamic(x.data(), x.size());
    auto A = quantize(x.data(), m, k, s_x, o);
    ASSERT_TRUE(A.is_ok()) << A.status().message();
    GemmSpec spec;
    spec.alpha = s_x * W.global_scale;
    auto ref = gemm_oracle(A.value(), W, spec);
    ASSERT_TRUE(ref.is_ok());
    auto g = gemm_gpu_stream_a(x.data(), m, k, W, nullptr, GpuGemmKernel::kSm90, ReductionContract::sequential(), s_static);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    EXPECT_EQ(f32_bits(g->s_x), f32_bits(s_x));
    EXPECT_EQ(count_diff(g.value(), (*ref)[0]), 0) << "static scale " << s_static;
  }
  EXPECT_FALSE(gemm_gpu_stream_a(x_nan.data(), m, k, W, nullptr, GpuGemmKernel::kSm90, ReductionContract::sequential(), -1.0f).is_ok());
}

TEST(Gpu, Sm90HundredRunsBitIdentical) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU";
  const int64_t m = 128, n = 1000, k = 5376;
  const Tensor A = quantized(synthetic_activation(m, k, 3, ActivationKind::kMiniMax), m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 4), n, k);
  auto first = gemm_gpu(A, W, 0.5f, nullptr, GpuGemmKernel::kSm90);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  for (int i = 0; i < 99; ++i) {
    auto g = gemm_gpu(A, W, 0.5f, nullptr, GpuGemmKernel::kSm90);
    ASSERT_TRUE(g.is_ok());
    ASSERT_EQ(std::memcmp(g->raw.data(), first->raw.data(), g->raw.size() * 4), 0) << "run " << i + 1;
    ASSERT_EQ(g->out, first->out) << "run " << i + 1;
  }
}

TEST(Gpu, Sm90RefusesBadInputWithOneLine) {
  REQUIRE_GPU();
  const Tensor A = quantized(synthetic_activation(16, 128, 1), 16, 128);
  const Tensor W = quantized(synthetic_weight(16, 256, 1), 16, 256);
  auto r = gemm_gpu(A, W, 1.0f, nullptr, GpuGemmKernel::kSm90);  // K mismatch
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  if (!have_sm90()) {
    auto q = gemm_gpu(A, A, 1.0f, nullptr, GpuGemmKernel::kSm90);
    ASSERT_FALSE(q.is_ok());
    EXPECT_NE(q.status().message().find("Hopper"), std::string::npos);
  }
}

namespace {
// Split-K contracts for the GPU tests: S 2..4, both partition rules, all three merges, the grain
// cycling through 64..512 (18 contracts).
std::vector<ReductionContract> split_contracts() {
  std::vector<ReductionContract> v;
  const int grains[] = {64, 128, 256, 512};
  int i = 0;
  for (int s = 2; s <= 4; ++s)
    for (auto rule : {PartitionRule::kCublas, PartitionRule::kCutlass})
      for (auto merge : {MergeMode::kFp32, MergeMode::kBf16Partials, MergeMode::kBf16Serial})
        v.push_back(ReductionContract::split_k(s, grains[i++ % 4], rule, merge));
  return v;
}
struct Diff {
  int64_t raw = 0, out = 0;
};
// A bf16 bias of n values repeating a ramp of `period` steps centred on zero.
std::vector<uint16_t> ramp_bias(int64_t n, int period, float step) {
  std::vector<uint16_t> b;
  for (int64_t i = 0; i < n; ++i) b.push_back(bf16_rn(static_cast<float>(i % period - period / 2) * step));
  return b;
}
Diff count_diffs(const GpuGemmOutput& g, const GemmResult& ref) {
  Diff d;
  for (size_t i = 0; i < g.raw.size(); ++i) {
    d.raw += canon(g.raw[i]) != canon(ref.raw[i]);
    d.out += g.out[i] != ref.out[i];
  }
  return d;
}
}  // namespace

// Every GPU backend (plain and streaming) under every split-K contract equals the CPU oracle under
// the same contract, bit for bit: the four MiniMax H3 shapes at small M and odd shapes.
TEST(Gpu, SplitKContractsBitIdenticalToOracle) {
  REQUIRE_GPU();
  const auto contracts = split_contracts();
  struct Case {
    LinearShape l;
    int64_t rows;
    bool bias;
  };
  std::vector<Case> cases;
  for (const auto& l : minimax_h3_linears()) cases.push_back({l, 16, false});
  cases.push_back({{"odd_a", 130, 4000}, 77, false});
  cases.push_back({{"odd_b", 40, 208}, 33, true});
  cases.push_back({{"odd_c", 264, 7168}, 1, false});
  cases.push_back({{"odd_d", 72, 2048}, 130, true});
  int64_t sensitive = 0;  // outputs where some split contract differs from sequential: the test can fail
  std::mt19937 rng(23);
  for (const Case& c : cases) {
    auto p = prepare_layer(c.l, c.rows, rng(), "");
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    const std::vector<uint16_t> bias = c.bias ? ramp_bias(c.l.n, 23, 0.61f) : std::vector<uint16_t>{};
    GemmSpec spec;
    spec.alpha = p->alpha;
    spec.bias = c.bias ? bias.data() : nullptr;
    spec.contracts = {ReductionContract::sequential()};
    spec.contracts.insert(spec.contracts.end(), contracts.begin(), contracts.end());
    auto ref = gemm_oracle(p->a, p->w, spec);
    ASSERT_TRUE(ref.is_ok()) << ref.status().message();
    for (size_t ci = 1; ci < ref->size(); ++ci)
      for (size_t i = 0; i < (*ref)[0].raw.size(); ++i) sensitive += canon((*ref)[ci].raw[i]) != canon((*ref)[0].raw[i]);
    for (size_t ci = 0; ci < spec.contracts.size(); ++ci) {
      const ReductionContract& k = spec.contracts[ci];
      const std::string what = c.l.name + " M " + std::to_string(c.rows) + " " + k.to_string();
      for (GpuGemmKernel kern : available_gpu_kernels()) {
        if (!check_gpu_contract(kern, k, c.l.k).is_ok()) {  // sequential-only kernels (sm90) refuse split-K in one line
          EXPECT_FALSE(gemm_gpu(p->a, p->w, p->alpha, spec.bias, kern, k).is_ok()) << to_string(kern) << " " << what;
          continue;
        }
        auto g = gemm_gpu(p->a, p->w, p->alpha, spec.bias, kern, k);
        ASSERT_TRUE(g.is_ok()) << to_string(kern) << " " << what << ": " << g.status().message();
        const Diff d = count_diffs(g.value(), (*ref)[ci]);
        EXPECT_EQ(d.raw, 0) << to_string(kern) << " " << what;
        EXPECT_EQ(d.out, 0) << to_string(kern) << " " << what;
        if (!streams_a(kern)) continue;
        auto s = gemm_gpu_stream_a(p->x.data(), p->m, c.l.k, p->w, spec.bias, kern, k);
        ASSERT_TRUE(s.is_ok()) << "stream " << to_string(kern) << " " << what << ": " << s.status().message();
        EXPECT_EQ(f32_bits(s->s_x), f32_bits(p->s_x)) << what;
        const Diff ds = count_diffs(s.value(), (*ref)[ci]);
        EXPECT_EQ(ds.raw, 0) << "stream " << to_string(kern) << " " << what;
        EXPECT_EQ(ds.out, 0) << "stream " << to_string(kern) << " " << what;
      }
    }
  }
  EXPECT_GT(sensitive, 0) << "no split contract changed any output: the comparison could not fail";
}

// The pipelined kernel at both tile widths (64 and 128 columns, forced through
// NVFP4_SM120P_TILE_N; the launcher otherwise picks by shape and SM count): plain and streaming A,
// sequential and split-K, against the oracle bit for bit, on shapes whose N, M and K are not
// multiples of the tile, the stage (k256) or the chunk. A bad value of the variable is one line.
TEST(Gpu, PipelinedKernelBothTileWidthsBitIdenticalToOracle) {
  REQUIRE_GPU();
  struct Restore {  // the variable as it was, however the test ends
    const char* name;
    const char* prev = std::getenv(name);
    std::string saved = prev ? prev : "";
    ~Restore() { prev ? setenv(name, saved.c_str(), 1) : unsetenv(name); }
  } restore_tile{"NVFP4_SM120P_TILE_N"}, restore_l2{"NVFP4_SM120P_L2_PROMOTION"};
  struct Case {
    LinearShape l;
    int64_t rows;
    bool bias;
  };
  const Case cases[] = {{{"n200_k4000", 200, 4000}, 77, true},  {{"n264_k7168", 264, 7168}, 130, false},
                        {{"n40_k208", 40, 208}, 33, false},     {{"n129_k320", 129, 320}, 1, true},
                        {{"n384_k1088", 384, 1088}, 128, false}};
  const ReductionContract contracts[] = {ReductionContract::sequential(),
                                         ReductionContract::split_k(2, 256, PartitionRule::kCublas, MergeMode::kFp32),
                                         ReductionContract::split_k(3, 64, PartitionRule::kCutlass, MergeMode::kBf16Serial)};
  std::mt19937 rng(29);
  for (const char* width : {"64", "128"}) {
    ASSERT_EQ(setenv("NVFP4_SM120P_TILE_N", width, 1), 0);
    for (const Case& c : cases) {
      auto p = prepare_layer(c.l, c.rows, rng(), "");
      ASSERT_TRUE(p.is_ok()) << p.status().message();
      const std::vector<uint16_t> bias = c.bias ? ramp_bias(c.l.n, 19, 0.37f) : std::vector<uint16_t>{};
      GemmSpec spec;
      spec.alpha = p->alpha;
      spec.bias = c.bias ? bias.data() : nullptr;
      spec.contracts.assign(std::begin(contracts), std::end(contracts));
      auto ref = gemm_oracle(p->a, p->w, spec);
      ASSERT_TRUE(ref.is_ok()) << ref.status().message();
      for (size_t ci = 0; ci < spec.contracts.size(); ++ci) {
        const ReductionContract& k = spec.contracts[ci];
        if (!check_gpu_contract(GpuGemmKernel::kSm120pEmulated, k, c.l.k).is_ok()) continue;  // S above the chunks
        const std::string what = std::string("tile ") + width + " " + c.l.name + " M " + std::to_string(c.rows) + " " + k.to_string();
        auto g = gemm_gpu(p->a, p->w, p->alpha, spec.bias, GpuGemmKernel::kSm120pEmulated, k);
        ASSERT_TRUE(g.is_ok()) << what << ": " << g.status().message();
        const Diff d = count_diffs(g.value(), (*ref)[ci]);
        EXPECT_EQ(d.raw, 0) << what;
        EXPECT_EQ(d.out, 0) << what;
        auto st = gemm_gpu_stream_a(p->x.data(), p->m, c.l.k, p->w, spec.bias, GpuGemmKernel::kSm120pEmulated, k);
        ASSERT_TRUE(st.is_ok()) << "stream " << what << ": " << st.status().message();
        const Diff ds = count_diffs(st.value(), (*ref)[ci]);
        EXPECT_EQ(ds.raw, 0) << "stream " << what;
        EXPECT_EQ(ds.out, 0) << "stream " << what;
      }
    }
  }
  ASSERT_EQ(setenv("NVFP4_SM120P_TILE_N", "96", 1), 0);
  auto p = prepare_layer(LinearShape{"t", 16, 64}, 16, 1, "");
  ASSERT_TRUE(p.is_ok());
  auto bad = gemm_gpu(p->a, p->w, p->alpha, nullptr, GpuGemmKernel::kSm120pEmulated);
  EXPECT_FALSE(bad.is_ok());
  if (!bad.is_ok()) EXPECT_NE(bad.status().message().find("NVFP4_SM120P_TILE_N must be 64 or 128"), std::string::npos);
  ASSERT_EQ(setenv("NVFP4_SM120P_TILE_N", "128", 1), 0);
  ASSERT_EQ(setenv("NVFP4_SM120P_L2_PROMOTION", "512", 1), 0);
  bad = gemm_gpu(p->a, p->w, p->alpha, nullptr, GpuGemmKernel::kSm120pEmulated);
  EXPECT_FALSE(bad.is_ok());
  if (!bad.is_ok()) EXPECT_NE(bad.status().message().find("NVFP4_SM120P_L2_PROMOTION must be 128 or 256"), std::string::npos);
  // The 256-byte promotion is a cache hint: the same bits.
  ASSERT_EQ(setenv("NVFP4_SM120P_L2_PROMOTION", "256", 1), 0);
  GemmSpec spec;
  spec.alpha = p->alpha;
  auto ref = gemm_oracle(p->a, p->w, spec);
  ASSERT_TRUE(ref.is_ok());
  auto g = gemm_gpu(p->a, p->w, p->alpha, nullptr, GpuGemmKernel::kSm120pEmulated);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const Diff d = count_diffs(g.value(), (*ref)[0]);
  EXPECT_EQ(d.raw + d.out, 0);
}

TEST(Gpu, SplitKRefusedWhenSlicesExceedChunks) {
  REQUIRE_GPU();
  auto p = prepare_layer(LinearShape{"t", 16, 128}, 16, 1, "");
  ASSERT_TRUE(p.is_ok());
  const auto c = ReductionContract::split_k(3, 64, PartitionRule::kCublas, MergeMode::kFp32);
  for (GpuGemmKernel k : available_gpu_kernels()) {
    auto r = gemm_gpu(p->a, p->w, p->alpha, nullptr, k, c);
    ASSERT_FALSE(r.is_ok()) << to_string(k);
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  }
  auto s = gemm_gpu_stream_a(p->x.data(), 16, 128, p->w, nullptr, GpuGemmKernel::kSm120Emulated, c);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
}

#if NVFP4_TESTS_HAVE_CUDART
// The device entry points without the fp32 copy of the accumulators (raw = null, what a framework
// call asks for) on every SM120-side kernel this GPU runs: the same bf16 outputs as the oracle's, and
// with raw given, its fp32 accumulators too. Until 2026-12-04 these calls allocated a scratch copy of
// raw and the kernel wrote it (m x n x 4 bytes of DRAM traffic per call for nothing).
TEST(Gpu, DeviceEntryPointsWithoutTheFp32CopyOnEverySm120Kernel) {
  REQUIRE_GPU();
  const int64_t m = 45, n = 136, k = 1000;
  const auto x = synthetic_activation(m, k, 61, ActivationKind::kOutlierChannels);
  const Tensor A = quantized(x, m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 62), n, k);
  GemmSpec spec;
  spec.alpha = A.global_scale * W.global_scale;
  auto ref = gemm_oracle(A, W, spec);
  ASSERT_TRUE(ref.is_ok()) << ref.status().message();
  DevMem da(A.data.size()), dsa(A.scales.size()), dx(x.size() * 2), dout(m * n * 2), draw(m * n * 4);
  ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  int ran = 0;
  for (GpuGemmKernel kernel : available_gpu_kernels()) {
    if (kernel == GpuGemmKernel::kSm90) continue;  // its own device-pointer tests above
    auto w = prepare_weight_gpu(W, kernel);
    if (!w.is_ok()) continue;  // a kernel without a prepared-weight form
    for (bool with_raw : {false, true}) {
      DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, with_raw ? draw.as<float>() : nullptr);
      ASSERT_EQ(cudaMemset(dout.p, 0xFF, m * n * 2), cudaSuccess);
      ASSERT_EQ(cudaMemset(draw.p, 0xFF, m * n * 4), cudaSuccess);
      const Status st = matmul_gpu_device(*w.value(), mm);
      ASSERT_TRUE(st.is_ok()) << to_string(kernel) << ": " << st.message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      GpuGemmOutput got;
      got.out.resize(m * n);
      got.raw.resize(m * n);
      ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got.out, (*ref)[0].out) << to_string(kernel) << " matmul, raw " << with_raw;
      if (with_raw) EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << to_string(kernel) << " matmul raw";
      else EXPECT_EQ(std::count_if(got.raw.begin(), got.raw.end(), [](float v) { return f32_bits(v) != 0xFFFFFFFFu; }), 0)
          << to_string(kernel) << ": raw written though none was given";
      // The layer's real input, where the kernel has the streaming A producer.
      DeviceLinear ln = linear_args(dx, m, k, dout, mm.raw);
      ASSERT_EQ(cudaMemset(dout.p, 0xFF, m * n * 2), cudaSuccess);
      const Status sl = linear_gpu_device(*w.value(), ln);
      if (!sl.is_ok()) continue;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got.out, (*ref)[0].out) << to_string(kernel) << " linear, raw " << with_raw;
    }
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no SM120-side kernel took a prepared weight";
}

// Split-K without the fp32 copy of the accumulators (raw = nullptr, the production configuration,
// docs/gb10-performance.md): the merge writes the same bf16 outputs as with it, which the contract
// tests compare with the oracle. Before 2026-12-04 the merge wrote raw unconditionally.
TEST(Gpu, SplitKMergeWithoutTheFp32CopyGivesTheSameOutputs) {
  REQUIRE_GPU();
  const int64_t m = 77, n = 200, k = 1000, k64 = 1024, lda = k64 / 2;
  const Tensor A = quantized(synthetic_activation(m, k, 8, ActivationKind::kOutlierChannels), m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 9), n, k);
  std::vector<uint8_t> ha, hsa, hw, hsw;
  cuda::prepare_operand(A, lda, ha, hsa);
  cuda::prepare_operand(W, lda, hw, hsw);
  DevMem da(ha.size()), dsa(hsa.size()), dw(hw.size()), dsw(hsw.size()), dout(m * n * 2);
  ASSERT_EQ(cudaMemcpy(da.p, ha.data(), ha.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dsa.p, hsa.data(), hsa.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dw.p, hw.data(), hw.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dsw.p, hsw.data(), hsw.size(), cudaMemcpyHostToDevice), cudaSuccess);
  const float alpha = A.global_scale * W.global_scale;
  for (const char* text : {"split_k:2:grain=128:cublas:fp32", "split_k:3:grain=64:cutlass:bf16_serial"}) {
    const ReductionContract c = ReductionContract::parse(text).value();
    auto ref = gemm_gpu(A, W, alpha, nullptr, GpuGemmKernel::kSm120pEmulated, c);
    ASSERT_TRUE(ref.is_ok()) << ref.status().message();
    auto plan = cuda::plan_slices(c, k);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    DevMem dpart(plan->workspace_floats_per_output() * m * n * 4);
    ASSERT_EQ(cudaMemset(dout.p, 0xFF, m * n * 2), cudaSuccess);
    cuda::GemmOperands op{da.as<uint8_t>(), dw.as<uint8_t>(), dsa.as<uint8_t>(), dsw.as<uint8_t>(), m, n, k64, alpha,
                          nullptr, nullptr, dout.as<uint16_t>()};
    cuda::set_slices(op, plan.value(), dpart.as<float>());
    ASSERT_TRUE(cuda::launch_sm120p_gemm(op, cuda::Sm120pMode::kEmulated, cuda_device()->sm_count, nullptr).is_ok());
    ASSERT_TRUE(cuda::launch_merge_splitk(op, nullptr).is_ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> got(m * n);
    ASSERT_EQ(cudaMemcpy(got.data(), dout.p, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, ref->out) << text;
  }
}
// The device entry points under split-K contracts (what cuBLASLt may plan for a shape: FC2's likely
// plan, docs/fc2-playbook.md) on every SM120-side kernel this GPU runs: the partials in a
// stream-ordered workspace and the ordered merge, the oracle's bits under the same contract, with and
// without raw. sm90 refuses them with one line.
TEST(Gpu, DeviceEntryPointsUnderSplitKContracts) {
  REQUIRE_GPU();
  const int64_t m = 70, n = 96, k = 1000;
  const auto x = synthetic_activation(m, k, 71, ActivationKind::kOutlierChannels);
  const Tensor A = quantized(x, m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 72), n, k);
  DevMem da(A.data.size()), dsa(A.scales.size()), dx(x.size() * 2), dout(m * n * 2), draw(m * n * 4);
  ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  int ran = 0;
  for (const char* text : {"split_k:3:grain=128:cublas:fp32", "split_k:2:grain=64:cutlass:bf16_serial",
                           "split_k:4:grain=256:cublas:bf16_partials"}) {
    const ReductionContract c = ReductionContract::parse(text).value();
    GemmSpec spec;
    spec.alpha = A.global_scale * W.global_scale;
    spec.contracts = {c};
    auto ref = gemm_oracle(A, W, spec);
    ASSERT_TRUE(ref.is_ok()) << ref.status().message();
    for (GpuGemmKernel kernel : available_gpu_kernels()) {
      auto w = prepare_weight_gpu(W, kernel);
      if (!w.is_ok()) continue;
      DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, spec.alpha, dout, draw.as<float>());
      mm.contract = c;
      if (kernel == GpuGemmKernel::kSm90) {
        const Status st = matmul_gpu_device(*w.value(), mm);
        EXPECT_FALSE(st.is_ok());
        EXPECT_NE(st.message().find("sequential contract only"), std::string::npos) << st.message();
        EXPECT_EQ(st.message().find('\n'), std::string::npos);
        continue;
      }
      GpuGemmOutput got;
      got.out.resize(m * n);
      got.raw.resize(m * n);
      ASSERT_EQ(cudaMemset(dout.p, 0xFF, m * n * 2), cudaSuccess);
      const Status st = matmul_gpu_device(*w.value(), mm);
      ASSERT_TRUE(st.is_ok()) << to_string(kernel) << " " << text << ": " << st.message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << to_string(kernel) << " matmul " << text;
      DeviceLinear ln = linear_args(dx, m, k, dout, nullptr);
      ln.contract = c;  // no raw: the merge writes the bf16 outputs alone
      ASSERT_EQ(cudaMemset(dout.p, 0xFF, m * n * 2), cudaSuccess);
      const Status sl = linear_gpu_device(*w.value(), ln);
      ASSERT_TRUE(sl.is_ok()) << to_string(kernel) << " " << text << ": " << sl.message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got.out, (*ref)[0].out) << to_string(kernel) << " linear " << text;
      ++ran;
    }
  }
  EXPECT_GT(ran, 0) << "no SM120-side kernel took a prepared weight";
  // S larger than the chunk count: one line, nothing launched.
  auto w = prepare_weight_gpu(W, available_gpu_kernels().back());
  if (w.is_ok()) {
    DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, 1.0f, dout, nullptr);
    mm.contract = ReductionContract::split_k(17, 64, PartitionRule::kCublas, MergeMode::kFp32);  // K = 1000: 16 chunks
    const Status st = matmul_gpu_device(*w.value(), mm);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos);
  }
}
#endif  // NVFP4_TESTS_HAVE_CUDART

// The memory-path proxy

// The memory-path proxy (the pipelined kernel with a register-only stand-in for the MMA) runs on
// any GPU and is reported against a copy of the same weight bytes; its speed is judged from
// gpu-check's bench.json, not here.
TEST(Gpu, MemoryPathProxyReportsItsWeightStreamAgainstACopy) {
  REQUIRE_GPU();
  BenchOptions o;
  o.rows = 128;
  o.linears = {LinearShape{"small", 512, 2048}};
  o.backends = {"sm120p-proxy"};
  o.backends_explicit = true;
  o.iters = 3;
  o.warmup = 1;
  o.quantizer = false;
  auto j = run_bench(o, [](const std::string&) {});
  ASSERT_TRUE(j.is_ok()) << j.status().message();
  const Json& row = (*j)["gemm"].items().at(0);
  EXPECT_GT(row["weight_copy_gb_per_s"].as_number(), 0.0);
  const Json& k = row["kernels"].items().at(0);
  EXPECT_EQ(k["backend"].as_string(), "sm120p-proxy");
  EXPECT_GT(k["fraction_of_copy"].as_number(), 0.0);
  // Under a split-K contract (the plan cuBLASLt most likely runs for FC2, docs/fc2-playbook.md) the
  // row times the partials and their merge, and says so.
  o.contract = ReductionContract::split_k(3, 256, PartitionRule::kCublas, MergeMode::kFp32);
  auto js = run_bench(o, [](const std::string&) {});
  ASSERT_TRUE(js.is_ok()) << js.status().message();
  const Json& ks = (*js)["gemm"].items().at(0)["kernels"].items().at(0);
  EXPECT_EQ(ks["backend"].as_string(), "sm120p-proxy@split_k:3:grain=256:cublas:fp32");
  EXPECT_EQ(ks["contract"].as_string(), "split_k:3:grain=256:cublas:fp32");
  EXPECT_GT(ks["fraction_of_copy"].as_number(), 0.0);
  // The sm90 kernel runs the sequential contract only: named with another, a one-line refusal.
  if (cuda_device()->cc_major == 9) {
    o.backends = {"sm90"};
    auto r = run_bench(o, [](const std::string&) {});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
    EXPECT_NE(r.status().message().find("sequential contract only"), std::string::npos) << r.status().message();
  }
}

// Repeatability: every GPU backend (each kernel available_gpu_kernels() lists, so kernels added
// later are covered, with and without the streaming A producer where the kernel has one, and the
// GPU quantizer) runs 100 times on the same inputs and must give the same bits every time. The
// hashes of those bits go to $NVFP4_REPEAT_HASH_FILE when it is set; when that file already exists
// they must equal what it holds (tools/gpu-check runs this test in two processes).
TEST(Gpu, EveryBackendGivesIdenticalBitsOnEveryRun) {
  REQUIRE_GPU();
  constexpr int kRuns = 100;
  // Odd M, N and K: partial tiles, padded K, a tail that is not a multiple of 64.
  auto p = prepare_layer(LinearShape{"repeat", 200, 1000}, 77, 4242, "");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  const auto bias = synthetic_activation(1, 200, 3);
  std::string record;
  auto add = [&](const std::string& name, const std::vector<std::vector<uint8_t>>& runs) {
    int64_t differing = 0;
    for (const auto& r : runs) differing += r != runs.front();
    EXPECT_EQ(differing, 0) << name << ": " << differing << " of " << runs.size() << " runs differ from the first";
    record += name + " " + sha256_hex(runs.front().data(), runs.front().size()) + "\n";
  };
  auto bytes_of = [](const GpuGemmOutput& g) {
    std::vector<uint8_t> b(g.raw.size() * 4 + g.out.size() * 2 + 4);
    std::memcpy(b.data(), g.raw.data(), g.raw.size() * 4);
    std::memcpy(b.data() + g.raw.size() * 4, g.out.data(), g.out.size() * 2);
    std::memcpy(b.data() + b.size() - 4, &g.s_x, 4);
    return b;
  };
  const auto kernels = available_gpu_kernels();
  ASSERT_FALSE(kernels.empty());
  for (GpuGemmKernel k : kernels) {
    for (bool stream : {false, true}) {
      std::vector<std::vector<uint8_t>> runs;
      bool unsupported_here = false;
      for (int i = 0; i < kRuns && !unsupported_here; ++i) {
        auto g = stream ? gemm_gpu_stream_a(p->x.data(), p->m, p->shape.k, p->w, bias.data(), k)
                        : gemm_gpu(p->a, p->w, p->alpha, bias.data(), k);
        if (!g.is_ok() && g.status().code() == ErrorCode::kUnsupported && i == 0) {
          unsupported_here = true;  // e.g. no streaming producer in this kernel
          break;
        }
        ASSERT_TRUE(g.is_ok()) << to_string(k) << (stream ? " stream" : "") << ": " << g.status().message();
        runs.push_back(bytes_of(g.value()));
      }
      if (!unsupported_here) add(std::string(to_string(k)) + (stream ? "+stream-a" : ""), runs);
    }
  }
  {
    std::vector<std::vector<uint8_t>> runs;
    QuantizeOptions o;
    o.pad = true;
    for (int i = 0; i < kRuns; ++i) {
      auto q = quantize_gpu(p->x.data(), p->m, p->shape.k, p->s_x, o);
      ASSERT_TRUE(q.is_ok()) << q.status().message();
      std::vector<uint8_t> b = q->data;
      b.insert(b.end(), q->scales.begin(), q->scales.end());
      runs.push_back(std::move(b));
    }
    add("quantize_gpu", runs);
  }
  if (const char* f = std::getenv("NVFP4_REPEAT_HASH_FILE")) {
    auto before = read_text(f);
    if (before.is_ok()) EXPECT_EQ(before.value(), record) << "bits differ from the process that wrote " << f;
    else ASSERT_TRUE(write_text(f, record).is_ok());
  }
  std::printf("%s", record.c_str());
}

// The device entry points on a machine without a usable GPU (this one in CI: a CUDA build, no
// driver) say "unsupported here", as cuda.hpp promises, and not "CUDA error": callers that skip on
// kUnsupported must not see a failure. Until 2026-12-04 they returned kCuda from cudaGetDevice.
TEST(DeviceApi, WithoutAGpuEveryEntryPointSaysUnsupported) {
  if (cuda_device().is_ok()) GTEST_SKIP() << "a GPU is here: the GPU tests cover these calls";
  const Tensor W = quantized(synthetic_weight(64, 128, 3), 64, 128);
  // Never dereferenced: every call must stop before it touches device memory.
  auto* fake8 = reinterpret_cast<uint8_t*>(uintptr_t{1} << 20);
  auto* fake16 = reinterpret_cast<uint16_t*>(uintptr_t{1} << 20);
  auto expect_unsupported = [](const Status& s, const char* what) {
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << what << ": " << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << what;
  };
  expect_unsupported(prepare_weight_gpu(W, GpuGemmKernel::kSm90).status(), "prepare_weight_gpu");
  DeviceWeightSource src;
  src.data = fake8;
  src.scales = fake8;
  src.n = 64;
  src.k = 128;
  src.global_scale = 1.0f;
  expect_unsupported(prepare_weight_gpu_device(src, GpuGemmKernel::kSm90).status(), "prepare_weight_gpu_device");
  QuantizeOptions o;
  o.pad = true;
  expect_unsupported(quantize_gpu_device(fake16, 16, 128, 1.0f, o, fake8, fake8, nullptr), "quantize_gpu_device");
  expect_unsupported(amax_bf16_device(fake16, 16, nullptr).status(), "amax_bf16_device");
  expect_unsupported(dequantize_gpu_device(fake8, fake8, 16, 128, 1.0f, NibbleOrder::kHiFirst, fake16, nullptr),
                     "dequantize_gpu_device");
  const auto* fake_scale = reinterpret_cast<const float*>(uintptr_t{1} << 20);
  expect_unsupported(quantize_gpu_device_with_device_scale(fake16, 16, 128, fake_scale, o, fake8, fake8, nullptr),
                     "quantize_gpu_device_with_device_scale");
  expect_unsupported(dequantize_gpu_device_with_device_scale(fake8, fake8, 16, 128, fake_scale, NibbleOrder::kHiFirst, fake16,
                                                             nullptr),
                     "dequantize_gpu_device_with_device_scale");
  PreparedWeight pw;  // sm90's, never read: the call stops where it asks for the GPU
  pw.n = 64;
  pw.k = 128;
  pw.kernel = GpuGemmKernel::kSm90;
  DeviceLinear ln;
  ln.x = fake16;
  ln.m = 16;
  ln.k = 128;
  ln.out = fake16;
  ln.s_static_dev = fake_scale;
  expect_unsupported(linear_gpu_device(pw, ln), "linear_gpu_device with s_static_dev");
}

// quantize_gpu_device's codes go out one 8-byte store per block of 16: a buffer at an offset that
// breaks that alignment (a byte view of a larger tensor) is refused in one line before anything is
// launched, instead of a misaligned-address fault that ends the process's CUDA context.
TEST(DeviceApi, QuantizeRefusesCodesNotOnAnEightByteBoundary) {
  if (!cuda_info().built_with_cuda) GTEST_SKIP() << "built without CUDA";
  auto* x = reinterpret_cast<uint16_t*>(uintptr_t{1} << 20);
  auto* scales = reinterpret_cast<uint8_t*>(uintptr_t{1} << 21);
  auto* data = reinterpret_cast<uint8_t*>((uintptr_t{1} << 22) + 4);
  QuantizeOptions o;
  o.pad = true;
  const Status s = quantize_gpu_device(x, 16, 128, 1.0f, o, data, scales, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("data is not 8-byte aligned"), std::string::npos) << s.message();
}

// The device-scale entry points check their pointers before anything is launched or any GPU is
// asked for (a scale pointer is read by a kernel: a null or misaligned one would fault there), and
// matmul takes both global scale pointers or neither. Runs without a GPU.
TEST(DeviceApi, DeviceScalePointersAreCheckedFirst) {
  if (!cuda_info().built_with_cuda) GTEST_SKIP() << "built without CUDA";
  auto* x = reinterpret_cast<uint16_t*>(uintptr_t{1} << 20);
  auto* scales = reinterpret_cast<uint8_t*>(uintptr_t{1} << 21);
  auto* data = reinterpret_cast<uint8_t*>(uintptr_t{1} << 22);
  const auto* odd = reinterpret_cast<const float*>((uintptr_t{1} << 23) + 2);
  QuantizeOptions o;
  o.pad = true;
  auto expect_refused = [](const Status& s, const char* needle) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  expect_refused(quantize_gpu_device_with_device_scale(x, 16, 128, nullptr, o, data, scales, nullptr), "pointer is null");
  expect_refused(quantize_gpu_device_with_device_scale(x, 16, 128, odd, o, data, scales, nullptr), "4-byte aligned");
  expect_refused(dequantize_gpu_device_with_device_scale(data, scales, 16, 128, nullptr, NibbleOrder::kHiFirst, x, nullptr),
                 "pointer is null");
  expect_refused(dequantize_gpu_device_with_device_scale(data, scales, 16, 128, odd, NibbleOrder::kHiFirst, x, nullptr),
                 "4-byte aligned");
  PreparedWeight w;  // never reached: the arguments are refused first
  w.n = 64;
  w.k = 128;
  w.kernel = GpuGemmKernel::kSm120pEmulated;
  DeviceMatmul mm;
  mm.a = data;
  mm.a_scales = scales;
  mm.m = 16;
  mm.k = 128;
  mm.out = x;
  mm.scale_a = reinterpret_cast<const float*>(uintptr_t{1} << 23);
  expect_refused(matmul_gpu_device(w, mm), "both global scale pointers");
  mm.scale_w = odd;
  expect_refused(matmul_gpu_device(w, mm), "scale_w is not 4-byte aligned");
  // linear's static input scale in device memory: not with a host one too, sm90's alone (as the host
  // one), 4-byte aligned; each in one line.
  DeviceLinear ln;
  ln.x = x;
  ln.m = 16;
  ln.k = 128;
  ln.out = x;
  ln.s_static_dev = reinterpret_cast<const float*>(uintptr_t{1} << 23);
  ln.s_static = 0.5f;
  w.kernel = GpuGemmKernel::kSm90;
  expect_refused(linear_gpu_device(w, ln), "not both");
  ln.s_static = 0.0f;
  for (GpuGemmKernel k : {GpuGemmKernel::kSm120pNative, GpuGemmKernel::kSm120pEmulated, GpuGemmKernel::kSm120Native,
                          GpuGemmKernel::kSm120Emulated}) {
    w.kernel = k;
    const Status st = linear_gpu_device(w, ln);
    EXPECT_EQ(st.code(), ErrorCode::kUnsupported) << to_string(k) << ": " << st.message();
    EXPECT_NE(st.message().find("implemented by the sm90 kernel only"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(to_string(k)), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
  }
  w.kernel = GpuGemmKernel::kSm90;
  ln.s_static_dev = odd;
  expect_refused(linear_gpu_device(w, ln), "s_static_dev is not 4-byte aligned");
}

// sm90_config_for is public: an SM count of zero or less (a caller's uninitialised value) must not
// divide by zero inside the launcher's rule; it is taken as one SM.
TEST(DeviceApi, Sm90ConfigChoiceWithoutSmsDoesNotDivideByZero) {
  for (int64_t m : {1, 16, 100, 300, 4096})
    for (int sms : {0, -5}) EXPECT_EQ(sm90_config_for(m, 4096, sms), sm90_config_for(m, 4096, 1)) << m << " " << sms;
}

// Which GPUs a target list serves. Until 2026-12-05 the C++ side hard-coded 9.0, 12.0 and 12.1, so a
// build without sm_120a still offered its kernels to an SM120 GPU (Python read the list itself).
TEST(KernelTargets, ArchSpecificImagesServeTheirOwnGpuOnly) {
  constexpr auto kNone = KernelCode::kNone, kArch = KernelCode::kArchSpecific;
  const std::string_view dflt = "sm_90a sm_120a sm_121a";
  EXPECT_EQ(kernels_cover(dflt, 9, 0), kArch);
  EXPECT_EQ(kernels_cover(dflt, 12, 0), kArch);
  EXPECT_EQ(kernels_cover(dflt, 12, 1), kArch);
  for (auto [major, minor] : {std::pair{8, 0}, {8, 9}, {9, 1}, {10, 0}, {12, 2}, {13, 0}})
    EXPECT_EQ(kernels_cover(dflt, major, minor), kNone) << major << "." << minor;
  EXPECT_EQ(kernels_cover("sm_90a", 12, 0), kNone);    // a Hopper-only build on an RTX 50
  EXPECT_EQ(kernels_cover("sm_120a", 12, 1), kNone);   // 'a' is not forward compatible, not even to 12.1
  EXPECT_EQ(kernels_cover("sm_90a sm_120a", 12, 1), kNone);
  EXPECT_EQ(kernels_cover("", 9, 0), kNone);           // a build without CUDA
  EXPECT_EQ(kernels_cover("  sm_90a  ", 9, 0), kArch);
  EXPECT_EQ(kernels_cover("sm_ sm_9x compute_ sm90a sm_90b foo", 9, 0), kNone);
}

TEST(KernelTargets, PortableAndFamilyImagesAndPtx) {
  constexpr auto kNone = KernelCode::kNone, kPortable = KernelCode::kPortable, kArch = KernelCode::kArchSpecific;
  // Portable machine code runs on its major's later minors only.
  EXPECT_EQ(kernels_cover("sm_120", 12, 1), kPortable);
  EXPECT_EQ(kernels_cover("sm_121", 12, 0), kNone);
  EXPECT_EQ(kernels_cover("sm_90", 12, 0), kNone);
  // Family images: the same major, minor at least their own; no arch-specific features.
  EXPECT_EQ(kernels_cover("sm_120f", 12, 1), kPortable);
  EXPECT_EQ(kernels_cover("sm_100f", 10, 3), kPortable);
  EXPECT_EQ(kernels_cover("sm_103f", 10, 0), kNone);
  EXPECT_EQ(kernels_cover("sm_120f", 11, 0), kNone);
  // Portable PTX is JIT-compiled on every later GPU, but without wgmma: on Hopper it is portable only.
  EXPECT_EQ(kernels_cover("compute_90", 9, 0), kPortable);
  EXPECT_EQ(kernels_cover("compute_90", 12, 1), kPortable);
  EXPECT_EQ(kernels_cover("compute_90", 8, 9), kNone);
  // Arch-specific PTX compiles on its own architecture only.
  EXPECT_EQ(kernels_cover("compute_90a", 9, 0), kArch);
  EXPECT_EQ(kernels_cover("compute_90a", 10, 0), kNone);
  EXPECT_EQ(kernels_cover("compute_120a", 12, 1), kNone);
  // The driver takes machine code over PTX, and the image closest to the GPU.
  EXPECT_EQ(kernels_cover("sm_90a compute_90", 9, 0), kArch);
  EXPECT_EQ(kernels_cover("sm_90a compute_90", 12, 0), kPortable);
  EXPECT_EQ(kernels_cover("sm_120 compute_120a", 12, 0), kPortable);
  EXPECT_EQ(kernels_cover("sm_120 sm_121a", 12, 1), kArch);
  EXPECT_EQ(kernels_cover("sm_121a sm_120", 12, 1), kArch);
  // Two images of one architecture: which the driver loads is not documented, so not arch-specific.
  EXPECT_EQ(kernels_cover("sm_90 sm_90a", 9, 0), kPortable);
  EXPECT_EQ(kernels_cover("sm_90a sm_90", 9, 0), kPortable);
}

// Every report of the build's targets and every check against them read the same list.
TEST(KernelTargets, TheBuildsListIsTheOneCudaInfoReports) {
  const CudaInfo ci = cuda_info();
  EXPECT_EQ(ci.built_targets, built_cuda_targets());
  EXPECT_EQ(built_cuda_targets().empty(), !ci.built_with_cuda);
}

#if NVFP4_TESTS_HAVE_CUDART
// The first SM120 kernel reads A's scales four bytes at a time and the pipelined one by bulk copies:
// scales at an offset are refused in one line on every SM120-side kernel, as the other operands are,
// instead of faulting (until 2026-12-04 only the pipelined kernels checked them).
TEST(Gpu, MatmulRefusesMisalignedScalesOnEverySm120Kernel) {
  REQUIRE_GPU();
  const int64_t m = 16, n = 64, k = 256;
  const Tensor A = quantized(synthetic_activation(m, k, 5, ActivationKind::kOutlierChannels), m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 6), n, k);
  DevMem da(A.data.size()), dsa(A.scales.size() + 16), dout(m * n * 2);
  int ran = 0;
  for (GpuGemmKernel kernel : available_gpu_kernels()) {
    if (kernel == GpuGemmKernel::kSm90) continue;  // reads scale bytes one at a time
    auto w = prepare_weight_gpu(W, kernel);
    if (!w.is_ok()) continue;
    DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, 1.0f, dout, nullptr);
    mm.a_scales = static_cast<const uint8_t*>(dsa.p) + 1;
    const Status st = matmul_gpu_device(*w.value(), mm);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << to_string(kernel) << ": " << st.message();
    EXPECT_NE(st.message().find("a_scales"), std::string::npos) << st.message();
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no SM120-side kernel took a prepared weight";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Global scales left in device memory (comfy-kitchen's CUDA scalars), read by the kernels so that
// nothing waits for the stream. quantize and dequantize: the bits of the host-scale calls (and of
// quantize() / dequantize() on the CPU) on the golden-style scales, a bf16 dynamic one, 0, and an
// odd padded shape, in both nibble orders.
TEST(Gpu, QuantizeAndDequantizeReadTheirGlobalScaleFromDeviceMemory) {
  REQUIRE_GPU();
  for (const auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 256}, {37, 203}}) {
    const auto x = synthetic_activation(rows, cols, 17, ActivationKind::kOutlierChannels);
    const Geometry g = Geometry::of(rows, cols);
    DevMem dx(x.size() * 2), ds(4), dd(g.data_bytes()), dsf(g.scale_bytes(ScaleLayout::kSwizzled128x4)),
        dout(g.rows16 * g.cols16 * 2);
    ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    for (const float s : {global_scale_dynamic(x.data(), x.size()), 0.0123f, 0.0f})
      for (const NibbleOrder nib : {NibbleOrder::kHiFirst, NibbleOrder::kLoFirst}) {
        QuantizeOptions o;
        o.pad = true;
        o.nibbles = nib;
        const Tensor want = quantize(x.data(), rows, cols, s, o).value();
        ASSERT_EQ(cudaMemcpy(ds.p, &s, 4, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemset(dd.p, 0xAB, g.data_bytes()), cudaSuccess);
        ASSERT_EQ(cudaMemset(dsf.p, 0xAB, g.scale_bytes(ScaleLayout::kSwizzled128x4)), cudaSuccess);
        const Status st = quantize_gpu_device_with_device_scale(dx.as<uint16_t>(), rows, cols, ds.as<float>(), o,
                                                                dd.as<uint8_t>(), dsf.as<uint8_t>(), nullptr);
        ASSERT_TRUE(st.is_ok()) << st.message();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        Tensor got = want;
        ASSERT_EQ(cudaMemcpy(got.data.data(), dd.p, got.data.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.scales.data(), dsf.p, got.scales.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(got.data, want.data) << rows << "x" << cols << " s " << s;
        EXPECT_EQ(got.scales, want.scales) << rows << "x" << cols << " s " << s;
        // Back to bf16 from the same device scale: dequantize()'s comfy-cuda bits, padding included.
        const Status sd = dequantize_gpu_device_with_device_scale(dd.as<uint8_t>(), dsf.as<uint8_t>(), rows, cols,
                                                                  ds.as<float>(), nib, dout.as<uint16_t>(), nullptr);
        ASSERT_TRUE(sd.is_ok()) << sd.message();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<uint16_t> y(g.rows16 * g.cols16);
        ASSERT_EQ(cudaMemcpy(y.data(), dout.p, y.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(y, dequantize(want, DequantRecipe::kComfyCuda)) << rows << "x" << cols << " s " << s;
      }
  }
}

// matmul_gpu_device with A's and W's global scales in device memory (scale_a, scale_w): alpha =
// f32_rn(s_a * s_w) formed on the GPU (sm90: by its pre-pass) and the host alpha not read (NaN
// here), on every kernel with a device path, sequential and (SM120-side) split-K: the oracle's
// bits. A product the host alpha check would refuse (Inf) is applied as is: the oracle's outputs
// under that alpha, a NaN being any NaN (Inf * 0 makes the platform's default NaN pattern). The
// scales are written on the call's own non-blocking stream just before it, as a framework's are;
// a host pointer is refused in one line.
TEST(Gpu, MatmulFormsAlphaFromGlobalScalesInDeviceMemory) {
  REQUIRE_GPU();
  const int64_t m = 45, n = 136, k = 1000;
  const auto x = synthetic_activation(m, k, 63, ActivationKind::kOutlierChannels);
  const Tensor A = quantized(x, m, k);
  const Tensor W = quantized(synthetic_weight(n, k, 64), n, k);
  DevMem da(A.data.size()), dsa(A.scales.size()), dout(m * n * 2), draw(m * n * 4), dscales(8);
  ASSERT_EQ(cudaMemcpy(da.p, A.data.data(), A.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dsa.p, A.scales.data(), A.scales.size(), cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int ran = 0;
  for (GpuGemmKernel kernel : available_gpu_kernels()) {
    auto w = prepare_weight_gpu(W, kernel);
    if (!w.is_ok()) continue;  // a kernel without a device path
    {
      const float host_scale = 1.0f;
      DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, 1.0f, dout, nullptr);
      mm.scale_a = &host_scale;
      mm.scale_w = dscales.as<float>();
      const Status st = matmul_gpu_device(*w.value(), mm);
      EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << to_string(kernel) << ": " << st.message();
      EXPECT_NE(st.message().find("scale_a is not in the memory of CUDA device"), std::string::npos) << st.message();
    }
    std::vector<std::string> contracts = {"sequential"};
    if (kernel != GpuGemmKernel::kSm90) contracts.push_back("split_k:3:cublas:fp32");
    for (const float s_a : {A.global_scale, std::numeric_limits<float>::infinity()})
      for (const std::string& c : contracts) {
        const float host_scales[2] = {s_a, W.global_scale};
        ASSERT_EQ(cudaMemsetAsync(dscales.p, 0, 8, stream), cudaSuccess);  // then the values, on the same stream
        ASSERT_EQ(cudaMemcpyAsync(dscales.p, host_scales, 8, cudaMemcpyHostToDevice, stream), cudaSuccess);
        GemmSpec spec;
        spec.alpha = s_a * W.global_scale;  // f32_rn, §2.4
        spec.contracts = {ReductionContract::parse(c).value()};
        auto ref = gemm_oracle(A, W, spec);
        ASSERT_TRUE(ref.is_ok()) << ref.status().message();
        DeviceMatmul mm = matmul_args(da, dsa, m, k, A.nibbles, std::numeric_limits<float>::quiet_NaN(), dout,
                                      draw.as<float>());
        mm.scale_a = dscales.as<float>();
        mm.scale_w = dscales.as<float>() + 1;
        mm.contract = spec.contracts[0];
        mm.stream = stream;
        ASSERT_EQ(cudaMemsetAsync(dout.p, 0xFF, m * n * 2, stream), cudaSuccess);
        const Status st = matmul_gpu_device(*w.value(), mm);
        ASSERT_TRUE(st.is_ok()) << to_string(kernel) << " " << c << ": " << st.message();
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        GpuGemmOutput got;
        got.out.resize(m * n);
        got.raw.resize(m * n);
        ASSERT_EQ(cudaMemcpy(got.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        const GemmResult& r = (*ref)[0];
        if (std::isfinite(spec.alpha)) {
          EXPECT_EQ(count_diff(got, r), 0) << to_string(kernel) << " " << c;
          continue;
        }
        int64_t bad = 0, nan = 0;
        for (int64_t i = 0; i < m * n; ++i) {
          const bool gn = (got.out[i] & 0x7FFF) > 0x7F80, rn = (r.out[i] & 0x7FFF) > 0x7F80;
          nan += gn;
          bad += canon(got.raw[i]) != canon(r.raw[i]) || gn != rn || (!gn && got.out[i] != r.out[i]);
        }
        EXPECT_EQ(bad, 0) << to_string(kernel) << " " << c << " alpha Inf";
        EXPECT_LT(nan, m * n) << "every output NaN: the Inf alpha case tests nothing";
      }
    ++ran;
  }
  cudaStreamDestroy(stream);
  EXPECT_GT(ran, 0) << "no kernel with a device path ran";
}

namespace {
// A host function that holds its stream until `open` (or ten seconds) and then says it is done: work
// enqueued behind it cannot run, so a call that returns while it holds waited for nothing.
struct StreamGate {
  std::atomic<bool> open{false}, done{false};
  static void CUDART_CB hold(void* p) {
    auto* g = static_cast<StreamGate*>(p);
    const auto t0 = std::chrono::steady_clock::now();
    while (!g->open.load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) std::this_thread::yield();
    g->done.store(true);
  }
};
}  // namespace

// linear_gpu_device with the static input scale in device memory (s_static_dev; ComfyUI's
// input_scale, a CUDA tensor): the sm90 pre-pass reads it, quantizes x with it and forms alpha =
// f32_rn(s_in * s_w) on the GPU. The host s_static is 0, so a pre-pass that ignored the device scale
// would take the dynamic one (Inf: x holds an Inf), which no value below is: the oracle's bits
// (quantize() with the scale, then gemm_oracle) and the host-scale call's, with a bias, NaN and +-Inf in x (the
// per-element path), m not a multiple of the token tile and K not of 64. 0 is quantized with, not
// taken as "dynamic". The scale is written on the call's own non-blocking stream just before the
// call, as a framework's is; once the kernels are loaded, a call enqueued behind a host function
// that holds the stream returns while it still holds (nothing waits for the stream). A host
// pointer is refused in one line.
TEST(Gpu, LinearReadsItsStaticInputScaleFromDeviceMemory) {
  REQUIRE_GPU();
  if (!have_sm90()) GTEST_SKIP() << "not a Hopper GPU (a static input scale is sm90's)";
  const int64_t m = 77, n = 136, k = 1000;
  auto x = synthetic_activation(m, k, 81, ActivationKind::kOutlierChannels);
  x[7] = 0x7FC0;           // NaN
  x[2 * k + 301] = 0x7F80;  // +Inf
  x[5 * k + 999] = 0xFF80;  // -Inf (the last column)
  const Tensor W = quantized(synthetic_weight(n, k, 82), n, k);
  const auto bias = ramp_bias(n, 29, 0.0625f);
  auto w = prepare_weight_gpu(W, GpuGemmKernel::kSm90);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  DevMem dx(x.size() * 2), dbias(n * 2), dout(m * n * 2), draw(m * n * 4), dscale(4);
  ASSERT_EQ(cudaMemcpy(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dbias.p, bias.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
  float* pinned = nullptr;  // the scale's host copy: pinned, so that its copy never waits for the stream
  ASSERT_EQ(cudaMallocHost(&pinned, 4), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto args = [&] {
    DeviceLinear ln = linear_args(dx, m, k, dout, draw.as<float>());
    ln.bias = dbias.as<uint16_t>();
    ln.stream = stream;
    return ln;
  };
  auto fetch = [&](GpuGemmOutput& g) {
    g.out.resize(m * n);
    g.raw.resize(m * n);
    ASSERT_EQ(cudaMemcpy(g.out.data(), dout.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(g.raw.data(), draw.p, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  };
  {
    const float host_scale = 0.5f;
    DeviceLinear ln = args();
    ln.s_static_dev = &host_scale;
    const Status st = linear_gpu_device(*w.value(), ln);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.message();
    EXPECT_NE(st.message().find("s_static_dev is not in the memory of CUDA device"), std::string::npos) << st.message();
  }
  // The dynamic scale of x is Inf (an Inf element): every static value here differs from it.
  const float s_finite = global_scale_dynamic(x.data(), 2 * k);  // the first two rows' (finite)
  QuantizeOptions o;
  o.pad = true;
  for (const float s_in : {s_finite, 2.0f * s_finite, 0.0421875f, 0.0f}) {
    const Tensor A = quantize(x.data(), m, k, s_in, o).value();
    GemmSpec spec;
    spec.alpha = s_in * W.global_scale;  // f32_rn, §2.4
    spec.bias = bias.data();
    auto ref = gemm_oracle(A, W, spec);
    ASSERT_TRUE(ref.is_ok()) << ref.status().message();
    *pinned = s_in;
    ASSERT_EQ(cudaMemsetAsync(dscale.p, 0xFF, 4, stream), cudaSuccess);  // NaN, then the value, on the call's stream
    ASSERT_EQ(cudaMemcpyAsync(dscale.p, pinned, 4, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(dout.p, 0xFF, m * n * 2, stream), cudaSuccess);
    DeviceLinear ln = args();
    ln.s_static_dev = dscale.as<float>();
    const Status st = linear_gpu_device(*w.value(), ln);
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    GpuGemmOutput got;
    fetch(got);
    EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << "device input scale " << s_in;
    if (s_in > 0.0f) {  // the host value's path (0 there means dynamic): the same bits
      DeviceLinear lh = args();
      lh.s_static = s_in;
      ASSERT_TRUE(linear_gpu_device(*w.value(), lh).is_ok());
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      GpuGemmOutput host;
      fetch(host);
      EXPECT_EQ(host.out, got.out) << "host input scale " << s_in;
      EXPECT_EQ(count_diff(host, (*ref)[0]), 0) << "host input scale " << s_in;
    }
  }
  {
    // Nothing waits: the scale's write and the call queue behind a held stream; the call returns
    // while the stream is still held, and once released the result is the oracle's.
    const float s_in = 0.0421875f;
    const Tensor A = quantize(x.data(), m, k, s_in, o).value();
    GemmSpec spec;
    spec.alpha = s_in * W.global_scale;
    spec.bias = bias.data();
    auto ref = gemm_oracle(A, W, spec);
    ASSERT_TRUE(ref.is_ok());
    auto* gate = new StreamGate;  // freed once the stream has passed it (an early failure leaks it)
    ASSERT_EQ(cudaLaunchHostFunc(stream, &StreamGate::hold, gate), cudaSuccess);
    *pinned = s_in;
    ASSERT_EQ(cudaMemsetAsync(dscale.p, 0xFF, 4, stream), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(dscale.p, pinned, 4, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(dout.p, 0xFF, m * n * 2, stream), cudaSuccess);
    DeviceLinear ln = args();
    ln.s_static_dev = dscale.as<float>();
    const Status st = linear_gpu_device(*w.value(), ln);
    const bool held = !gate->done.load();
    gate->open.store(true);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    delete gate;
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_TRUE(held) << "linear_gpu_device returned only after the stream it was given had drained";
    GpuGemmOutput got;
    fetch(got);
    EXPECT_EQ(count_diff(got, (*ref)[0]), 0) << "behind a held stream";
  }
  cudaStreamDestroy(stream);
  cudaFreeHost(pinned);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif
