// The GEMM oracle: D = A · W^T chained through the §3 MMA model under one or more reduction
// contracts (docs/numerics.md §4), multithreaded, with exact integer group sums (AVX2 where present).
#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_set>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "../common/cpu_features.hpp"
#include "../common/parallel.hpp"
#include "chunk.hpp"
#include "mma_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

namespace {

constexpr int kChunk = 64;   // K per MMA (m16n8k64)
constexpr int kGroup = 16;   // elements per UE4M3 scale
constexpr int kGroupsPerChunk = kChunk / kGroup;
static_assert(kGroupsPerChunk == 4, "scale_vec::4X: four scales per k64 MMA");
constexpr int kMaxSplits = 64;

// Rows of an NVFP4 tensor unpacked for the integer kernel, K zero-padded to a multiple of 64.
struct Unpacked {
  int64_t k64 = 0;
  std::vector<int8_t> v;      // [rows][k64]      2 * e2m1 value: exact small integers
  std::vector<uint16_t> nz;   // [rows][k64/16]   bit i: element i of the group is non-zero
  std::vector<uint8_t> sf;    // [rows][k64/16]   ue4m3 bytes, 0 past K
};

void unpack_rows(const Tensor& t, const std::vector<int64_t>& rows, Unpacked& u) {
  const int64_t k64 = roundup(t.geom.cols16, kChunk);
  const int64_t groups = k64 / kGroup;
  u.k64 = k64;
  u.v.assign(rows.size() * k64, 0);
  u.nz.assign(rows.size() * groups, 0);
  u.sf.assign(rows.size() * groups, 0);
  // Byte -> (element 2j, element 2j+1) in the tensor's nibble order.
  std::array<std::array<int8_t, 2>, 256> lut;
  for (int b = 0; b < 256; ++b) {
    const uint8_t byte = static_cast<uint8_t>(b);
    lut[b] = {kE2M1Twice[nibble_get(&byte, 0, t.nibbles)], kE2M1Twice[nibble_get(&byte, 1, t.nibbles)]};
  }
  const int64_t row_bytes = t.geom.row_bytes();
  detail::parallel_for(static_cast<int64_t>(rows.size()), 64, 0, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const uint8_t* src = &t.data[rows[i] * row_bytes];
      int8_t* dst = &u.v[i * k64];
      for (int64_t j = 0; j < row_bytes; ++j) {
        dst[2 * j] = lut[src[j]][0];
        dst[2 * j + 1] = lut[src[j]][1];
      }
      for (int64_t g = 0; g < t.geom.sf_cols; ++g) {
        uint16_t m = 0;
        for (int k = 0; k < kGroup; ++k) m |= static_cast<uint16_t>((dst[g * kGroup + k] != 0) << k);
        u.nz[i * groups + g] = m;
        u.sf[i * groups + g] = t.scale(rows[i], g);
      }
    }
  });
}

// Exact group sums p4[g] = sum 2a * 2b over one k64 chunk.
inline void group_sums_scalar(const int8_t* a, const int8_t* w, int32_t p4[4]) {
  for (int g = 0; g < 4; ++g) {
    int32_t s = 0;
    for (int k = 0; k < kGroup; ++k) s += a[g * kGroup + k] * w[g * kGroup + k];
    p4[g] = s;
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline void group_sums_avx2(const int8_t* a, const int8_t* w, int32_t p4[4]) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32));
  const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
  // |a| * (w * sign(a)): u8 x s8 pairs; |products| <= 144 so int16 pair sums cannot saturate.
  const __m256i m0 = _mm256_maddubs_epi16(_mm256_abs_epi8(a0), _mm256_sign_epi8(w0, a0));
  const __m256i m1 = _mm256_maddubs_epi16(_mm256_abs_epi8(a1), _mm256_sign_epi8(w1, a1));
  const __m256i s0 = _mm256_madd_epi16(m0, ones);  // lanes 0-3: group 0, 4-7: group 1
  const __m256i s1 = _mm256_madd_epi16(m1, ones);  // lanes 0-3: group 2, 4-7: group 3
  const __m256i h = _mm256_hadd_epi32(s0, s1);
  const __m256i h2 = _mm256_hadd_epi32(h, h);      // [g0 g2 g0 g2 | g1 g3 g1 g3]
  p4[0] = _mm256_extract_epi32(h2, 0);
  p4[2] = _mm256_extract_epi32(h2, 1);
  p4[1] = _mm256_extract_epi32(h2, 4);
  p4[3] = _mm256_extract_epi32(h2, 5);
}
#endif

// Every contract's slices, as chains: a chain starts from +0 at one chunk and runs forward; a slice
// (b, e) is the chain from b read at e. Contracts that share slice starts share chains (sequential
// K and split-K 2 share the first half), so extra contracts cost only their new chains.
struct Chain {
  int64_t start = 0, stop = 0;                       // chunks [start, stop)
  std::vector<std::pair<int64_t, int>> records;      // (end chunk, slot), sorted by end
};
struct EvalPlan {
  std::vector<Chain> chains;
  int slots = 0;
  std::vector<std::vector<int>> contract_slots;      // per contract, its slices' slots in K order
};

EvalPlan make_plan(const GemmSpec& spec, int64_t k) {
  EvalPlan plan;
  std::vector<std::pair<int64_t, int64_t>> slot_keys;
  for (const auto& c : spec.contracts) {
    std::vector<int> slots;
    for (auto [b, e] : c.slices(k)) {
      const std::pair<int64_t, int64_t> key{b / kChunk, e / kChunk};
      auto it = std::find(slot_keys.begin(), slot_keys.end(), key);
      if (it == slot_keys.end()) {
        slot_keys.push_back(key);
        it = slot_keys.end() - 1;
      }
      slots.push_back(static_cast<int>(it - slot_keys.begin()));
    }
    plan.contract_slots.push_back(std::move(slots));
  }
  plan.slots = static_cast<int>(slot_keys.size());
  for (int sidx = 0; sidx < plan.slots; ++sidx) {
    // Plain names, not a structured binding: clang before 16 cannot capture those (the fuzz build).
    const int64_t b = slot_keys[sidx].first, e = slot_keys[sidx].second;
    auto it = std::find_if(plan.chains.begin(), plan.chains.end(), [&](const Chain& c) { return c.start == b; });
    if (it == plan.chains.end()) {
      plan.chains.push_back(Chain{b, b, {}});
      it = plan.chains.end() - 1;
    }
    it->stop = std::max(it->stop, e);
    it->records.emplace_back(e, sidx);
  }
  for (auto& c : plan.chains) std::sort(c.records.begin(), c.records.end());
  return plan;
}

// Per-thread scratch for one output: exact group sums of every chunk, computed once.
struct Scratch {
  std::vector<int32_t> p4;    // [chunks][4]
  std::vector<uint8_t> any;   // [chunks][4]
  std::vector<float> slot;    // [slots]
};

template <bool kAvx2>
void eval_output(const Unpacked& A, int64_t ia, const Unpacked& W, int64_t iw, const EvalPlan& plan, Scratch& sc) {
  const int64_t chunks = A.k64 / kChunk;
  const int64_t groups = A.k64 / kGroup;
  const int8_t* a = &A.v[ia * A.k64];
  const int8_t* w = &W.v[iw * W.k64];
  const uint16_t* anz = &A.nz[ia * groups];
  const uint16_t* wnz = &W.nz[iw * groups];
  const uint8_t* asf = &A.sf[ia * groups];
  const uint8_t* wsf = &W.sf[iw * groups];
  for (int64_t q = 0; q < chunks; ++q) {
#if defined(__x86_64__)
    if constexpr (kAvx2) group_sums_avx2(a + q * kChunk, w + q * kChunk, &sc.p4[4 * q]);
    else group_sums_scalar(a + q * kChunk, w + q * kChunk, &sc.p4[4 * q]);
#else
    group_sums_scalar(a + q * kChunk, w + q * kChunk, &sc.p4[4 * q]);
#endif
    for (int g = 0; g < 4; ++g) sc.any[4 * q + g] = (anz[4 * q + g] & wnz[4 * q + g]) != 0;
  }
  for (const Chain& ch : plan.chains) {
    float acc = 0.0f;  // every slice starts from +0
    size_t r = 0;
    for (int64_t q = ch.start; q < ch.stop; ++q) {
      while (r < ch.records.size() && ch.records[r].first == q) sc.slot[ch.records[r++].second] = acc;
      const bool any[4] = {sc.any[4 * q] != 0, sc.any[4 * q + 1] != 0, sc.any[4 * q + 2] != 0, sc.any[4 * q + 3] != 0};
      acc = model::mma_element(&sc.p4[4 * q], any, asf + 4 * q, wsf + 4 * q, acc);
    }
    while (r < ch.records.size()) sc.slot[ch.records[r++].second] = acc;
  }
}


Status check_operands(const Tensor& a, const Tensor& w, const GemmSpec& spec) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols)
    return invalid_argument("K mismatch: activation has K = " + std::to_string(a.geom.cols) + ", weight has K = " +
                            std::to_string(w.geom.cols));
  if (spec.contracts.empty()) return invalid_argument("no reduction contract given");
  for (const auto& c : spec.contracts) {
    if (c.splits > kMaxSplits) return invalid_argument("split-K above 64 slices is not supported");
    if (c.grain <= 0 || c.grain % kChunk != 0) return invalid_argument("contract grain must be a multiple of 64");
  }
  return Status::ok();
}

// Shared driver: evaluates the listed coordinates (grouped by weight row) for every contract.
Result<std::vector<GemmResult>> run(const Tensor& a, const Tensor& w, const GemmSpec& spec,
                                    const std::vector<Coord>* at) {
  NVFP4_TRY(check_operands(a, w, spec));
  const int64_t M = a.geom.rows, N = w.geom.rows, K = a.geom.cols;
  const int64_t count = at ? static_cast<int64_t>(at->size()) : M * N;
  if (at)
    for (const Coord& c : *at)
      if (c.m < 0 || c.m >= M || c.n < 0 || c.n >= N) return invalid_argument("output coordinate out of range");

  if (spec.epilogues.empty()) return invalid_argument("no epilogue given");
  const size_t ne = spec.epilogues.size();
  std::vector<GemmResult> res(spec.contracts.size() * ne);
  for (size_t i = 0; i < res.size(); ++i) {
    res[i].contract = spec.contracts[i / ne];
    res[i].epilogue = spec.epilogues[i % ne];
    res[i].raw.assign(count, 0.0f);
    res[i].out.assign(count, 0);
  }
  const EvalPlan plan = make_plan(spec, K);

  std::vector<int64_t> a_rows(M);
  for (int64_t i = 0; i < M; ++i) a_rows[i] = i;
  Unpacked A;
  unpack_rows(a, a_rows, A);

  // Work items: weight-row tiles; each unpacks its rows and computes every output that needs them.
  constexpr int64_t kTileN = 16;
  std::vector<std::vector<int64_t>> by_n;  // for sampled runs: output indices per weight row
  if (at) {
    by_n.assign(N, {});
    for (int64_t i = 0; i < count; ++i) by_n[(*at)[i].n].push_back(i);
  }
  const bool avx2 = detail::cpu_has_avx2();
  detail::parallel_for(ceil_div(N, kTileN), 1, spec.threads, [&](int64_t t0, int64_t t1, int) {
    Scratch sc;
    sc.p4.resize(A.k64 / kChunk * 4);
    sc.any.resize(A.k64 / kChunk * 4);
    sc.slot.resize(plan.slots);
    float partials[kMaxSplits];
    Unpacked W;
    for (int64_t t = t0; t < t1; ++t) {
      std::vector<int64_t> rows;
      for (int64_t n = t * kTileN; n < std::min(N, (t + 1) * kTileN); ++n)
        if (!at || !by_n[n].empty()) rows.push_back(n);
      if (rows.empty()) continue;
      unpack_rows(w, rows, W);
      for (size_t r = 0; r < rows.size(); ++r) {
        const int64_t n = rows[r];
        const float bias = spec.bias ? bf16_to_f32(spec.bias[n]) : -0.0f;
        auto one = [&](int64_t m, int64_t out_idx) {
          if (avx2) eval_output<true>(A, m, W, static_cast<int64_t>(r), plan, sc);
          else eval_output<false>(A, m, W, static_cast<int64_t>(r), plan, sc);
          for (size_t c = 0; c < plan.contract_slots.size(); ++c) {
            const auto& slots = plan.contract_slots[c];
            for (size_t j = 0; j < slots.size(); ++j) partials[j] = sc.slot[slots[j]];
            for (size_t e = 0; e < ne; ++e) {
              const MergedOutput mo = merge_partials(partials, static_cast<int>(slots.size()), spec.contracts[c].merge,
                                                     spec.epilogues[e], spec.alpha, bias);
              res[c * ne + e].raw[out_idx] = mo.raw;
              res[c * ne + e].out[out_idx] = mo.bf16;
            }
          }
        };
        if (at) {
          for (int64_t idx : by_n[n]) one((*at)[idx].m, idx);
        } else {
          for (int64_t m = 0; m < M; ++m) one(m, m * N + n);
        }
      }
    }
  });
  return res;
}

}  // namespace

Result<std::vector<GemmResult>> gemm_oracle(const Tensor& a, const Tensor& w, const GemmSpec& spec) {
  return run(a, w, spec, nullptr);
}

Result<std::vector<GemmResult>> gemm_oracle_at(const Tensor& a, const Tensor& w, const GemmSpec& spec,
                                                const std::vector<Coord>& at) {
  return run(a, w, spec, &at);
}

Result<std::vector<float>> gemm_reference_at(const Tensor& a, const Tensor& w, const std::vector<Coord>& at) {
  GemmSpec spec;
  NVFP4_TRY(check_operands(a, w, spec));
  const int64_t K = a.geom.cols;
  const int64_t chunks = ceil_div(K, kChunk);
  std::vector<float> out(at.size());
  Status bad = Status::ok();
  for (const Coord& c : at)
    if (c.m < 0 || c.m >= a.geom.rows || c.n < 0 || c.n >= w.geom.rows) bad = invalid_argument("output coordinate out of range");
  NVFP4_TRY(bad);
  detail::parallel_for(static_cast<int64_t>(at.size()), 16, 0, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      float acc = 0.0f;
      uint8_t ac[detail::kChunkK], bc[detail::kChunkK], sa[4], sb[4];
      for (int64_t q = 0; q < chunks; ++q) {
        detail::load_chunk(a, at[i].m, q, ac, sa);
        detail::load_chunk(w, at[i].n, q, bc, sb);
        acc = reference_mma_element(ac, bc, sa, sb, acc);
      }
      out[i] = acc;
    }
  });
  return out;
}

std::vector<Coord> sample_coords(int64_t m, int64_t n, int64_t count, uint64_t seed) {
  std::vector<Coord> out;
  if (m <= 0 || n <= 0 || count <= 0) return out;
  if (count >= m * n) {  // small outputs: every coordinate
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) out.push_back({i, j});
    return out;
  }
  std::unordered_set<int64_t> seen;
  auto add = [&](int64_t i, int64_t j) {
    if (static_cast<int64_t>(out.size()) < count && seen.insert(i * n + j).second) out.push_back({i, j});
  };
  // Corners and edge midpoints first: they catch partial tiles and padded edges.
  const Coord fixed[] = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}, {m / 2, 0}, {m / 2, n - 1}, {0, n / 2}, {m - 1, n / 2}};
  for (const Coord& c : fixed) add(c.m, c.n);
  uint64_t s = seed ^ 0x9E3779B97F4A7C15ull;
  while (static_cast<int64_t>(out.size()) < count) {
    s += 0x9E3779B97F4A7C15ull;  // splitmix64
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    add(static_cast<int64_t>(z % static_cast<uint64_t>(m)), static_cast<int64_t>((z >> 32) % static_cast<uint64_t>(n)));
  }
  return out;
}

}  // namespace nvfp4
