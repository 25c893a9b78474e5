// What Hopper's wgmma (f16 and bf16 inputs, fp32 accumulators) keeps: targeted bit patterns on
// m64n8k16 with the A operand in registers (as the sm90 kernel feeds it) and B by a 128-byte
// swizzled shared-memory descriptor. B is all ones, so output row m = c_m + sum_k a_mk: each row is
// one case with chosen "products" and accumulator. Prints a table and writes JSON (--out FILE).
// docs/hopper-exact-path.md records the results; the sm90 exactness argument needs a window of
// at least 23 bits below the largest input and exact results whenever the exact sum fits fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../src/cuda/sm90/sm90_ptx.cuh"
#include "hopper_probe.hpp"

namespace {

struct Case {
  std::string name;
  double c;
  std::vector<double> a;  // up to 16 values (the products, since b = 1)
};

template <bool kBf16>
__global__ void probe(const uint16_t* a_rows, const float* c_in, float* d_out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace nvfp4::cuda::sm90;
  __shared__ __align__(1024) uint16_t b[8 * 64];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const uint16_t one = kBf16 ? 0x3F80 : 0x3C00;
  for (int i = tid; i < 8 * 64; i += 128) b[i] = one;  // every element 1: the swizzle does not matter
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  auto pair = [&](int row, int k) {
    return static_cast<uint32_t>(a_rows[row * 16 + k]) | (static_cast<uint32_t>(a_rows[row * 16 + k + 1]) << 16);
  };
  const int r0 = 16 * warp + g, r1 = r0 + 8;
  uint32_t a[4] = {pair(r0, 2 * t), pair(r1, 2 * t), pair(r0, 2 * t + 8), pair(r1, 2 * t + 8)};
  float d[4] = {c_in[r0 * 8 + 2 * t], c_in[r0 * 8 + 2 * t + 1], c_in[r1 * 8 + 2 * t], c_in[r1 * 8 + 2 * t + 1]};
  const uint64_t desc = desc_k_major_sw128(smem_addr(b));
  wgmma_fence();
  if (kBf16) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1, 1, 1, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
  } else {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1, 1, 1, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
  }
  wgmma_commit();
  wgmma_wait_all();
  fence_regs(d);
  d_out[r0 * 8 + 2 * t] = d[0];
  d_out[r0 * 8 + 2 * t + 1] = d[1];
  d_out[r1 * 8 + 2 * t] = d[2];
  d_out[r1 * 8 + 2 * t + 1] = d[3];
#endif
}

uint16_t to_bits(double v, bool bf16) {
  if (bf16) {
    const __nv_bfloat16 h = __double2bfloat16(v);
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
  }
  const __half h = __double2half(v);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
double from_bits(uint16_t u, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h;
    std::memcpy(&h, &u, 2);
    return static_cast<double>(__bfloat162float(h));
  }
  __half h;
  std::memcpy(&h, &u, 2);
  return static_cast<double>(__half2float(h));
}
// Round toward zero / to nearest-even of an exact double to fp32.
float rz(double v) {
  float f = static_cast<float>(v);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = nvfp4::bench::probe_out_path(argc, argv);
  cudaDeviceProp prop{};
  if (!nvfp4::bench::probe_require_hopper("wgmma probe", prop)) return 3;
  FILE* js = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (js) std::fprintf(js, "{\"device\": \"%s\", \"cases\": [\n", prop.name);
  bool first_json = true;
  int bad_premise = 0;
  for (int type = 0; type < 2; ++type) {
    const bool bf16 = type == 1;
    const double big = bf16 ? 1.0 : 32768.0;  // f16's subnormals reach 2^-24: keep cases inside
    std::vector<Case> cases;
    // Window: big - big + small: the exact sum is `small`, representable; lost if the hardware
    // aligns to big's exponent with fewer fractional bits than the distance.
    for (int k = 20; k <= 30; ++k) cases.push_back({"window_products_2^-" + std::to_string(k), 0.0, {big, -big, std::ldexp(big, -k)}});
    for (int k = 20; k <= 30; ++k) cases.push_back({"window_acc_2^-" + std::to_string(k), big, {-big, std::ldexp(big, -k)}});
    // Final rounding of a sum that needs more than 24 bits.
    cases.push_back({"round_+0.75ulp", 0.0, {big, std::ldexp(big, -24) * 1.5}});
    cases.push_back({"round_-0.75ulp", 0.0, {-big, -std::ldexp(big, -24) * 1.5}});
    cases.push_back({"round_+0.5ulp_tie", 0.0, {big, std::ldexp(big, -24)}});
    cases.push_back({"round_acc_+0.75ulp", big, {std::ldexp(big, -24) * 1.5}});
    // Exact sums of 16 scaled products (the sm90 fast path's case): spread 16 bits, fits.
    {
      Case c{"exact_16_terms_spread16", 0.0, {}};
      for (int i = 0; i < 16; ++i) c.a.push_back(std::ldexp((i % 2 ? -1.0 : 1.0) * (1 + (i % 7) / 8.0), (i * 16) / 15 - 8));
      cases.push_back(c);
    }
    cases.push_back({"zero_products_plus_acc_zero", 0.0, {0.0, -0.0}});
    cases.push_back({"cancel_to_zero_sign", 0.0, {big, -big}});
    cases.push_back({"neg_zero_acc_plus_neg_zero", -0.0, {-0.0}});
    if (cases.size() > 64) return 4;
    std::vector<uint16_t> a(64 * 16, 0);
    std::vector<float> c(64 * 8, 0.0f), d(64 * 8, 0.0f);
    std::vector<double> exact(64, 0.0);
    for (size_t m = 0; m < cases.size(); ++m) {
      double sum = cases[m].c;
      for (size_t k = 0; k < cases[m].a.size(); ++k) {
        a[m * 16 + k] = to_bits(cases[m].a[k], bf16);
        sum += from_bits(a[m * 16 + k], bf16);  // exact in double for these cases
      }
      for (int n = 0; n < 8; ++n) c[m * 8 + n] = static_cast<float>(cases[m].c);
      exact[m] = sum;
    }
    uint16_t* da;
    float *dc, *dd;
    cudaMalloc(&da, a.size() * 2);
    cudaMalloc(&dc, c.size() * 4);
    cudaMalloc(&dd, d.size() * 4);
    cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice);
    if (bf16) probe<true><<<1, 128>>>(da, dc, dd);
    else probe<false><<<1, 128>>>(da, dc, dd);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "wgmma probe: %s\n", cudaGetErrorString(e));
      return 4;
    }
    cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(dc);
    cudaFree(dd);
    std::printf("\n%-5s | %-32s | %-16s | %-16s | %-16s | %s\n", bf16 ? "bf16" : "f16", "case", "exact", "RZ(exact)", "wgmma",
                "verdict");
    int window_products = 0, window_acc = 0;
    for (size_t m = 0; m < cases.size(); ++m) {
      const float got = d[m * 8];
      uint32_t gb;
      std::memcpy(&gb, &got, 4);
      const bool same = static_cast<double>(got) == exact[m] && std::signbit(got) == std::signbit(exact[m]);
      const bool is_rz = got == rz(exact[m]) && std::signbit(got) == std::signbit(exact[m]);
      const char* verdict = same ? "exact" : (is_rz ? "RZ of exact" : (got == exact[m] ? "zero of the other sign" : "lost bits"));
      std::printf("%-5s | %-32s | %-16.9g | %-16.9g | %-16.9g | %s (0x%08x)\n", bf16 ? "bf16" : "f16", cases[m].name.c_str(),
                  exact[m], static_cast<double>(rz(exact[m])), static_cast<double>(got), verdict, gb);
      const std::string& nm = cases[m].name;
      const int k = nm.rfind("window_", 0) == 0 ? std::stoi(nm.substr(nm.rfind('-') + 1)) : 0;
      if (same && nm.rfind("window_products", 0) == 0) window_products = std::max(window_products, k);
      if (same && nm.rfind("window_acc", 0) == 0) window_acc = std::max(window_acc, k);
      if (nm == "exact_16_terms_spread16" && !same) ++bad_premise;
      if (js) {
        std::fprintf(js, "%s {\"type\": \"%s\", \"case\": \"%s\", \"exact\": %.17g, \"wgmma\": %.17g, \"bits\": \"0x%08x\", \"verdict\": \"%s\"}",
                     first_json ? "" : ",\n", bf16 ? "bf16" : "f16", nm.c_str(), exact[m], static_cast<double>(got), gb, verdict);
        first_json = false;
      }
    }
    std::printf("%s: a product 2^-k below the largest survives up to k = %d; below the accumulator up to k = %d\n",
                bf16 ? "bf16" : "f16", window_products, window_acc);
    if (window_products < 23 || window_acc < 23) ++bad_premise;
  }
  if (js) {
    std::fprintf(js, "\n], \"premise_holds\": %s}\n", bad_premise ? "false" : "true");
    std::fclose(js);
  }
  std::printf("premise of the sm90 exactness argument (window >= 23 bits, exact sums exact): %s\n", bad_premise ? "FAILS" : "holds");
  return bad_premise ? 1 : 0;
}
