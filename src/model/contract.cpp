// Reduction contracts and epilogues (docs/numerics.md §4).
#include <charconv>
#include <cmath>

#include "merge_step.hpp"
#include "nvfp4/model.hpp"

namespace nvfp4 {

namespace {
const char* rule_name(PartitionRule r) { return r == PartitionRule::kCublas ? "cublas" : "cutlass"; }
const char* merge_name(MergeMode m) {
  switch (m) {
    case MergeMode::kFp32: return "fp32";
    case MergeMode::kBf16Partials: return "bf16_partials";
    case MergeMode::kBf16Serial: return "bf16_serial";
  }
  return "?";
}
bool parse_int(std::string_view s, int& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

std::string ReductionContract::to_string() const {
  if (splits == 1) return "sequential";
  return "split_k:" + std::to_string(splits) + ":grain=" + std::to_string(grain) + ":" + rule_name(rule) + ":" +
         merge_name(merge);
}

Result<ReductionContract> ReductionContract::parse(std::string_view s) {
  const std::string text = printable(s);
  auto bad = [&](const std::string& why) {
    return invalid_argument("bad reduction contract '" + text + "': " + why +
                            " (expected 'sequential' or 'split_k:S[:grain=G][:cublas|cutlass][:fp32|bf16_partials|bf16_serial]')");
  };
  if (s == "sequential" || s == "seq") return ReductionContract::sequential();
  if (s.substr(0, 8) != "split_k:") return bad("unknown form");
  ReductionContract c;
  c.splits = 0;
  c.grain = 64;
  std::string_view rest = s.substr(8);
  int field = 0;
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view tok = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (field++ == 0) {
      if (!parse_int(tok, c.splits) || c.splits < 1 || c.splits > 64) return bad("S must be an integer in 1..64");
    } else if (tok.substr(0, 6) == "grain=") {
      if (!parse_int(tok.substr(6), c.grain) || c.grain < 64 || c.grain % 64 != 0)
        return bad("grain must be a positive multiple of 64");
    } else if (tok == "cublas") c.rule = PartitionRule::kCublas;
    else if (tok == "cutlass") c.rule = PartitionRule::kCutlass;
    else if (tok == "fp32") c.merge = MergeMode::kFp32;
    else if (tok == "bf16_partials") c.merge = MergeMode::kBf16Partials;
    else if (tok == "bf16_serial") c.merge = MergeMode::kBf16Serial;
    else return bad("unknown field '" + printable(tok) + "'");
  }
  if (c.splits == 0) return bad("missing S");
  if (c.splits == 1) return ReductionContract::sequential();
  return c;
}

std::vector<std::pair<int64_t, int64_t>> ReductionContract::slices(int64_t k) const {
  const int64_t kp = roundup(k, 64);
  std::vector<std::pair<int64_t, int64_t>> out;
  if (splits == 1) {
    out.emplace_back(0, kp);
    return out;
  }
  const int64_t tiles = ceil_div(kp, grain);
  if (rule == PartitionRule::kCublas) {
    const int64_t chunk = ceil_div(tiles, splits) * grain;
    for (int j = 0; j < splits; ++j) {
      const int64_t b = std::min(kp, j * chunk);
      const int64_t e = j == splits - 1 ? kp : std::min(kp, (j + 1) * chunk);
      out.emplace_back(b, e);
    }
  } else {
    const int64_t base = tiles / splits, rem = tiles % splits;
    int64_t t = 0;
    for (int j = 0; j < splits; ++j) {
      const int64_t n = base + (j < rem ? 1 : 0);
      out.emplace_back(std::min(kp, t * grain), std::min(kp, (t + n) * grain));
      t += n;
    }
  }
  return out;
}

const char* to_string(Epilogue e) {
  return e == Epilogue::kAlphaBeforeBf16 ? "alpha_before_bf16" : "alpha_after_bf16";
}
Result<Epilogue> parse_epilogue(std::string_view s) {
  if (s == "alpha_before_bf16" || s == "fused") return Epilogue::kAlphaBeforeBf16;
  if (s == "alpha_after_bf16" || s == "unfused") return Epilogue::kAlphaAfterBf16;
  return invalid_argument("unknown epilogue '" + std::string(s) + "' (expected alpha_before_bf16 or alpha_after_bf16)");
}

MergedOutput merge_partials(const float* partials, int n, MergeMode m, Epilogue e, float alpha, float bias) {
  static_assert(static_cast<int>(MergeMode::kBf16Serial) == static_cast<int>(model::Merge::kBf16Serial) &&
                    static_cast<int>(Epilogue::kAlphaAfterBf16) == static_cast<int>(model::Epi::kAlphaAfterBf16),
                "merge_step.hpp mirrors model.hpp's enums");
  const model::Merged r = model::merge_step([&](int j) { return partials[j]; }, n, static_cast<model::Merge>(m),
                                            static_cast<model::Epi>(e), alpha, bias);
  return {r.raw, r.bf16};
}

}  // namespace nvfp4
