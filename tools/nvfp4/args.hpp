// Command-line parsing for the nvfp4 tool: --name value / --name=value / --flag, nothing implicit.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nvfp4/error.hpp"

namespace nvfp4::cli {

class Args {
 public:
  // Parses argv[first..]; `flags` take no value, `options` take one. Unknown names are errors, and
  // so is any word beyond the first `max_positional` that is not an option (a stray word is a typo,
  // not something to ignore). -h is --help where the command has --help.
  static Result<Args> parse(int argc, char** argv, int first, const std::set<std::string>& flags,
                            const std::set<std::string>& options, size_t max_positional = 0);
  bool has(const std::string& k) const { return values_.count(k) > 0; }
  std::string get(const std::string& k, const std::string& dflt = "") const {
    auto it = values_.find(k);
    return it == values_.end() ? dflt : it->second;
  }
  // A decimal integer option in lo..hi, or `dflt` when it is absent. Every integer option has a
  // range: counts end up in ints, sizes in allocations, and a typo must not wrap into either.
  // `note` (e.g. "0: all cores") follows the range in the one-line refusal.
  Result<int64_t> get_int(const std::string& k, int64_t dflt, int64_t lo, int64_t hi, const std::string& note = "") const;
  // An fp32 written in full, rounded to the nearest fp32: decimal (0.125, 1.25e-1) or a hex float
  // (0x1p-3), which spells an fp32 exactly. A sign only in front; no blanks, "inf" or "nan", nothing
  // left over; a value beyond the fp32 range, or one that would round to zero, is refused.
  // `expects` says what the option takes, in the message.
  Result<float> get_f32(const std::string& k, float dflt, const std::string& expects = "an fp32 number") const;
  // A path option: given, it must not be empty (an unset shell variable would name "/" or ".x").
  Result<std::string> get_path(const std::string& k, const std::string& dflt) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // The i-th word as a path, refused when empty as get_path refuses an option; `name` is the word
  // in the usage line (MODEL.safetensors). i must be below positional().size().
  Result<std::string> positional_path(size_t i, const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// Seeds are uint64 and recorded as int64 in the reports: the range where the two agree.
inline constexpr int64_t kMaxSeed = INT64_MAX;

// "2,3,4": whole integers in [lo, hi], at least one; `what` names the option in messages.
Result<std::vector<int>> parse_int_list(const std::string& s, int lo, int hi, const std::string& what);

// Prints "nvfp4 <cmd>: error: <message>" to stderr and returns the exit code for the status.
int fail(const std::string& cmd, const Status& st);

}  // namespace nvfp4::cli
