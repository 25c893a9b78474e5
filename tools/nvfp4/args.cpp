#include "args.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace nvfp4::cli {

Result<Args> Args::parse(int argc, char** argv, int first, const std::set<std::string>& flags,
                         const std::set<std::string>& options, size_t max_positional) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-h" && flags.count("help")) s = "--help";
    if (s.rfind("--", 0) != 0) {
      if (a.positional_.size() == max_positional)
        return invalid_argument("unexpected argument '" + printable(s) + "' (see --help)");
      a.positional_.push_back(s);
      continue;
    }
    std::string name = s.substr(2), value;
    const auto eq = name.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      if (has_value) return invalid_argument("option --" + printable(name) + " takes no value");
      a.values_.insert_or_assign(name, std::string("1"));  // not operator=(const char*): GCC 12's -Wrestrict misfires on it at -O3
    } else if (options.count(name)) {
      if (!has_value) {
        if (i + 1 >= argc) return invalid_argument("option --" + printable(name) + " needs a value");
        value = argv[++i];
      }
      a.values_[name] = value;
    } else {
      return invalid_argument("unknown option --" + printable(name) + " (see --help)");
    }
  }
  return a;
}

Result<int64_t> Args::get_int(const std::string& k, int64_t dflt, int64_t lo, int64_t hi, const std::string& note) const {
  if (!has(k)) return dflt;
  // Decimal only: "010" is ten, not octal eight, and "0x10" is refused rather than read as 16.
  const std::string s = get(k);
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  // Beyond int64 (out of range for from_chars) is out of the option's range too, said the same way.
  const bool overflow = r.ec == std::errc::result_out_of_range && r.ptr == s.data() + s.size();
  if (s.empty() || (r.ec != std::errc() && !overflow) || r.ptr != s.data() + s.size())
    return invalid_argument("--" + k + " expects a decimal integer, got '" + printable(s) + "'");
  if (overflow || v < lo || v > hi)
    return invalid_argument("--" + k + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                            (note.empty() ? "" : " (" + note + ")") + ", got " + printable(s));
  return v;
}

Result<std::string> Args::get_path(const std::string& k, const std::string& dflt) const {
  if (has(k) && get(k).empty()) return invalid_argument("--" + k + " needs a non-empty path");
  return get(k, dflt);
}

Result<std::string> Args::positional_path(size_t i, const std::string& name) const {
  if (positional_.at(i).empty()) return invalid_argument(name + " needs a non-empty path");
  return positional_[i];
}

Result<float> Args::get_f32(const std::string& k, float dflt, const std::string& expects) const {
  if (!has(k)) return dflt;
  const std::string s = get(k);
  const Status refused =
      invalid_argument("--" + k + " expects " + expects + " (decimal, or a hex float such as 0x1p-3), got '" + printable(s) + "'");
  // from_chars reads straight into fp32 (a double in between would round twice), but it takes no
  // "0x" and reads "inf" and "nan": the prefix and the sign are taken here, and what follows them
  // must start with a digit or '.'.
  std::string_view t = s;
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  const bool hex = t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  if (hex) t.remove_prefix(2);
  const auto digit = [&](char c) {
    return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  if (t.empty() || !(digit(t[0]) || t[0] == '.')) return refused;
  float v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, hex ? std::chars_format::hex : std::chars_format::general);
  if (r.ptr != t.data() + t.size()) return refused;
  if (r.ec == std::errc::result_out_of_range)
    return invalid_argument("--" + k + " '" + printable(s) + "' is outside the fp32 range (it overflows, or rounds to zero)");
  if (r.ec != std::errc()) return refused;
  return negative ? -v : v;
}

Result<std::vector<int>> parse_int_list(const std::string& s, int lo, int hi, const std::string& what) {
  std::vector<int> out;
  size_t pos = 0;
  for (;;) {
    const size_t comma = s.find(',', pos);
    const std::string t = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() || v < lo || v > hi)
      return invalid_argument(what + " expects integers in " + std::to_string(lo) + ".." + std::to_string(hi) +
                              " separated by commas, got '" + printable(s) + "'");
    if (out.size() == 1024) return invalid_argument(what + ": more than 1024 entries");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int fail(const std::string& cmd, const Status& st) {
  std::fprintf(stderr, "nvfp4 %s: error: %s\n", cmd.c_str(), st.message().c_str());
  switch (st.code()) {
    case ErrorCode::kInvalidArgument: return 2;
    case ErrorCode::kUnsupported: return 3;
    case ErrorCode::kMismatch: return 1;
    default: return 4;
  }
}

}  // namespace nvfp4::cli
