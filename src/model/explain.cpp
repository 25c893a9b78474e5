// `nvfp4 explain`: which reduction contract reproduces a reference output bit for bit
// (docs/numerics.md §4). Every candidate is screened on a sample of outputs in one oracle pass (the
// oracle shares group sums and common slices between contracts); the survivors are then checked
// on every output.
#include <algorithm>

#include "nvfp4/validate.hpp"

namespace nvfp4 {

Json ExplainResult::to_json() const {
  auto row = [](const ExplainCandidate& c) {
    Json j = Json::object();
    j.set("contract", c.contract.to_string()).set("epilogue", to_string(c.epilogue));
    j.set("sample_differing", c.sample_diffs);
    if (c.full_diffs >= 0) j.set("full_differing", c.full_diffs);
    return j;
  };
  Json j = Json::object();
  j.set("dump", bf16_dump ? "bf16 (layer output)" : "fp32 (raw accumulators)");
  j.set("candidates_searched", candidates);
  Json ex = Json::array(), cl = Json::array();
  for (const auto& c : exact) ex.push(row(c));
  for (const auto& c : closest) cl.push(row(c));
  j.set("exact", ex).set("closest", cl);
  j.set("verdict", exact.empty() ? "no contract in the search space reproduces the dump bit for bit"
                                 : "reproduced bit for bit by " + exact.front().contract.to_string() + " with " +
                                       to_string(exact.front().epilogue));
  return j;
}

namespace {
bool same(uint32_t dump, const GemmResult& r, size_t i, bool bf16) {
  if (bf16) return r.out[i] == static_cast<uint16_t>(dump);
  const uint32_t got = f32_bits(r.raw[i]);
  const bool nan_got = (got & 0x7FFFFFFFu) > 0x7F800000u, nan_dump = (dump & 0x7FFFFFFFu) > 0x7F800000u;
  return got == dump || (nan_got && nan_dump);
}
}  // namespace

Result<ExplainResult> explain_contract(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias,
                                       const std::vector<uint32_t>& dump, bool bf16_dump, const ExplainOptions& opt) {
  const int64_t M = a.geom.rows, N = w.geom.rows, K = a.geom.cols;
  if (static_cast<int64_t>(dump.size()) != M * N)
    return invalid_argument("reference dump has " + std::to_string(dump.size()) + " values, the GEMM has M*N = " +
                            std::to_string(M * N));
  // The search space, deduplicated: contracts with the same slices and merge give the same bits.
  std::vector<ReductionContract> contracts = {ReductionContract::sequential()};
  for (int s : opt.splits)
    for (int g : opt.grains)
      for (PartitionRule rule : {PartitionRule::kCublas, PartitionRule::kCutlass})
        for (MergeMode merge : {MergeMode::kFp32, MergeMode::kBf16Partials, MergeMode::kBf16Serial}) {
          if (s < 2 || s > 64 || g < 64 || g % 64 != 0)
            return invalid_argument("explain: splits must be in 2..64 and grains positive multiples of 64");
          const ReductionContract c = ReductionContract::split_k(s, g, rule, merge);
          const auto sl = c.slices(K);
          const bool dup = std::any_of(contracts.begin(), contracts.end(), [&](const ReductionContract& o) {
            return o.merge == c.merge && o.slices(K) == sl;
          });
          if (!dup) contracts.push_back(c);
        }
  GemmSpec spec;
  spec.alpha = alpha;
  spec.bias = bias;
  spec.contracts = contracts;
  spec.epilogues = bf16_dump ? std::vector<Epilogue>{Epilogue::kAlphaBeforeBf16, Epilogue::kAlphaAfterBf16}
                             : std::vector<Epilogue>{Epilogue::kAlphaBeforeBf16};

  const auto at = sample_coords(M, N, opt.sample, opt.seed);
  NVFP4_ASSIGN_OR_RETURN(auto screen, gemm_oracle_at(a, w, spec, at));
  ExplainResult res;
  res.bf16_dump = bf16_dump;
  res.candidates = static_cast<int64_t>(screen.size());
  std::vector<ExplainCandidate> cands;
  for (size_t i = 0; i < screen.size(); ++i) {
    ExplainCandidate c{screen[i].contract, screen[i].epilogue, 0, -1};
    for (size_t j = 0; j < at.size(); ++j)
      c.sample_diffs += !same(dump[at[j].m * N + at[j].n], screen[i], j, bf16_dump);
    cands.push_back(c);
  }
  std::stable_sort(cands.begin(), cands.end(),
                   [](const ExplainCandidate& x, const ExplainCandidate& y) { return x.sample_diffs < y.sample_diffs; });

  // Every output for the sample-exact candidates (at most 16) and the closest few.
  std::vector<size_t> verify;
  for (size_t i = 0; i < cands.size() && verify.size() < 16; ++i)
    if (cands[i].sample_diffs == 0 || i < 2) verify.push_back(i);
  GemmSpec full = spec;
  full.contracts.clear();
  for (size_t i : verify)
    if (std::none_of(full.contracts.begin(), full.contracts.end(),
                     [&](const ReductionContract& c) { return c.to_string() == cands[i].contract.to_string(); }))
      full.contracts.push_back(cands[i].contract);
  NVFP4_ASSIGN_OR_RETURN(auto all, gemm_oracle(a, w, full));
  for (size_t i : verify) {
    for (size_t r = 0; r < all.size(); ++r) {
      if (all[r].contract.to_string() != cands[i].contract.to_string() || all[r].epilogue != cands[i].epilogue) continue;
      int64_t d = 0;
      for (int64_t j = 0; j < M * N; ++j) d += !same(dump[j], all[r], static_cast<size_t>(j), bf16_dump);
      cands[i].full_diffs = d;
    }
  }
  for (const auto& c : cands)
    if (c.full_diffs == 0) res.exact.push_back(c);
  std::stable_sort(cands.begin(), cands.end(), [](const ExplainCandidate& x, const ExplainCandidate& y) {
    const int64_t kx = x.full_diffs >= 0 ? x.full_diffs : INT64_MAX, ky = y.full_diffs >= 0 ? y.full_diffs : INT64_MAX;
    return kx != ky ? kx < ky : x.sample_diffs < y.sample_diffs;
  });
  for (size_t i = 0; i < cands.size() && static_cast<int>(i) < opt.top; ++i) res.closest.push_back(cands[i]);
  return res;
}

}  // namespace nvfp4
