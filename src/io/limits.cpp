// Input-derived size checks (include/nvfp4/limits.hpp).
#include "nvfp4/limits.hpp"

#include <unistd.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

namespace nvfp4 {

Status check_dim(int64_t v, std::string_view what, bool allow_zero) {
  if (v < 0) return invalid_argument(std::string(what) + " is negative (" + std::to_string(v) + ")");
  if (v == 0 && !allow_zero) return invalid_argument(std::string(what) + " must be positive, got 0");
  if (v > kMaxDim)
    return invalid_argument(std::string(what) + " = " + std::to_string(v) + " is larger than the supported maximum " +
                            std::to_string(kMaxDim));
  return Status::ok();
}

Result<int64_t> checked_mul(int64_t a, int64_t b, std::string_view what) {
  if (a < 0 || b < 0) return invalid_argument(std::string(what) + ": negative size in a product");
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return invalid_argument(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                            " overflows a 64-bit size");
  return r;
}

Result<int64_t> checked_product(std::initializer_list<int64_t> factors, std::string_view what) {
  int64_t p = 1;
  for (int64_t f : factors) {
    NVFP4_ASSIGN_OR_RETURN(p, checked_mul(p, f, what));
  }
  return p;
}

Result<std::vector<int64_t>> parse_dims(std::string_view s, std::string_view what, size_t count) {
  const std::string w(what);
  auto bad = [&] {
    return invalid_argument(w + " must be " + (count == 2 ? std::string("R,C") : std::string("a comma list of dimensions")) +
                            ", got '" + printable(s) + "'");
  };
  std::vector<int64_t> dims;
  size_t pos = 0;
  for (;;) {
    const size_t comma = s.find(',', pos);
    const std::string_view tok = s.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    int64_t v = 0;
    const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (r.ec == std::errc::result_out_of_range) return invalid_argument(w + ": '" + printable(tok) + "' does not fit 64 bits");
    if (tok.empty() || r.ec != std::errc() || r.ptr != tok.data() + tok.size()) return bad();
    NVFP4_TRY(check_dim(v, w + "[" + std::to_string(dims.size()) + "]"));
    if (dims.size() == 32) return bad();
    dims.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (count > 0 && dims.size() != count) return bad();
  return dims;
}

Status check_raw_size(uint64_t have, const std::vector<int64_t>& dims, int64_t elem, std::string_view name) {
  // By append, not "'" + std::string: GCC 12's -Wrestrict misfires on that at -O3.
  const std::string w = std::string(1, '\'').append(name).append(1, '\'');
  int64_t need = elem;
  std::string shape;
  for (int64_t d : dims) {
    NVFP4_ASSIGN_OR_RETURN(need, checked_mul(need, d, w + ": the shape's byte count"));
    if (!shape.empty()) shape += ',';
    shape += std::to_string(d);
  }
  if (have != static_cast<uint64_t>(need))
    return invalid_argument(w + " has " + std::to_string(have) + " bytes; shape " + shape + " of " + std::to_string(elem) +
                            "-byte elements needs " + std::to_string(need));
  return Status::ok();
}

namespace {
// NVFP4_MEMORY_LIMIT as it is at this call (tests change it at run time, so it is never cached):
// unset, or "123", "64M", "2G" (binary multiples: digits only, then at most one suffix), or why not.
Result<std::optional<uint64_t>> memory_limit_env() {
  const char* env = std::getenv("NVFP4_MEMORY_LIMIT");
  if (!env) return std::optional<uint64_t>();
  const std::string_view s(env);
  const auto bad = [&] {
    return invalid_argument("NVFP4_MEMORY_LIMIT='" + printable(s) +
                            "' is not a memory size: expected <bytes|NK|NM|NG>, a positive integer with an optional K, "
                            "M or G suffix (binary multiples), e.g. 512M or 2G");
  };
  uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr == s.data()) return bad();
  uint64_t mult = 1;
  const std::string_view rest(r.ptr, static_cast<size_t>(s.data() + s.size() - r.ptr));
  if (rest == "k" || rest == "K") mult = uint64_t{1} << 10;
  else if (rest == "m" || rest == "M") mult = uint64_t{1} << 20;
  else if (rest == "g" || rest == "G") mult = uint64_t{1} << 30;
  else if (!rest.empty()) return bad();
  uint64_t out = 0;
  if (__builtin_mul_overflow(v, mult, &out) || out == 0) return bad();
  return std::optional<uint64_t>(out);
}
}  // namespace

Status check_memory_limit_env() { return memory_limit_env().status(); }

uint64_t memory_budget_bytes() {
  uint64_t phys = std::numeric_limits<uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) phys = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  // A malformed limit leaves the physical memory here: check_memory_limit_env() is what refuses it.
  const auto lim = memory_limit_env();
  if (lim.is_ok() && lim.value() && *lim.value() < phys) phys = *lim.value();
  return phys;
}

std::string format_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

Status check_memory(uint64_t bytes, std::string_view what) {
  NVFP4_TRY(check_memory_limit_env());
  const uint64_t budget = memory_budget_bytes();
  if (bytes <= budget) return Status::ok();
  return unsupported(std::string(what) + " needs " + format_bytes(bytes) + " of memory; this machine has " +
                     format_bytes(budget));
}

Result<int64_t> gemm_problem_bytes(int64_t m, int64_t n, int64_t k, int outputs, std::string_view what) {
  const std::string w(what);
  NVFP4_TRY(check_dim(m, w + ": M (rows)"));
  NVFP4_TRY(check_dim(n, w + ": N"));
  NVFP4_TRY(check_dim(k, w + ": K"));
  // Per element of the activation and weight: bf16 input (2 bytes) and its NVFP4 form (1/2 + 1/16,
  // rounded up to 1 with padding); per output: fp32 accumulator + bf16 result, `outputs` times.
  NVFP4_ASSIGN_OR_RETURN(const int64_t mk, checked_mul(m, k, w));
  NVFP4_ASSIGN_OR_RETURN(const int64_t nk, checked_mul(n, k, w));
  NVFP4_ASSIGN_OR_RETURN(const int64_t mn, checked_mul(m, n, w));
  NVFP4_ASSIGN_OR_RETURN(const int64_t in_bytes, checked_mul(mk / 2 + nk / 2 + 1, 6, w));  // (mk + nk) * 3, no overflow
  NVFP4_ASSIGN_OR_RETURN(const int64_t out_bytes, checked_product({mn, 6, outputs < 1 ? 1 : outputs}, w));
  int64_t total = 0;
  if (__builtin_add_overflow(in_bytes, out_bytes, &total))
    return invalid_argument(w + ": the problem's size overflows a 64-bit byte count");
  return total;
}

Status check_gemm_problem(int64_t m, int64_t n, int64_t k, int outputs, std::string_view what) {
  NVFP4_ASSIGN_OR_RETURN(const int64_t bytes, gemm_problem_bytes(m, n, k, outputs, what));
  return check_memory(static_cast<uint64_t>(bytes), std::string(what) + " (" + std::to_string(m) + "x" + std::to_string(n) +
                                                        "x" + std::to_string(k) + ")");
}

}  // namespace nvfp4
