// Errors are values: every fallible call returns Status or Result<T> with a one-line message.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nvfp4 {

enum class ErrorCode {
  kOk = 0,
  // Bad input: a shape, name or value from the command line or the caller, or a file whose contents
  // are malformed (a user fixes the input either way).
  kInvalidArgument,
  // A file that cannot be opened, read, mapped or written, or a path that is not a regular file: the
  // input itself was never seen, so nothing can be said about it.
  kIo,
  kUnsupported,      // feature or device not available here
  kCuda,             // a CUDA runtime / driver call failed
  kMismatch,         // a check found different bits
  kInternal,
};

const char* error_code_name(ErrorCode c);

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return msg_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string msg_;
};

// Text from an input file or a command line, fit for a one-line message: control characters and
// bytes outside ASCII as \xNN, cut at max_len characters with "...".
inline std::string printable(std::string_view s, size_t max_len = 64) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == max_len) return out + "...";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

inline Status invalid_argument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status io_error(std::string m) { return {ErrorCode::kIo, std::move(m)}; }
inline Status unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status cuda_error(std::string m) { return {ErrorCode::kCuda, std::move(m)}; }

template <typename T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}          // NOLINT: implicit by design
  Result(Status s) : v_(std::move(s)) {}     // NOLINT
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace nvfp4

#define NVFP4_TRY(expr)                 \
  do {                                  \
    ::nvfp4::Status _st = (expr);       \
    if (!_st.is_ok()) return _st;       \
  } while (0)

#define NVFP4_CONCAT_INNER(a, b) a##b
#define NVFP4_CONCAT(a, b) NVFP4_CONCAT_INNER(a, b)
#define NVFP4_ASSIGN_OR_RETURN(lhs, expr)                          \
  auto NVFP4_CONCAT(_res_, __LINE__) = (expr);                     \
  if (!NVFP4_CONCAT(_res_, __LINE__).is_ok())                      \
    return NVFP4_CONCAT(_res_, __LINE__).status();                 \
  lhs = std::move(NVFP4_CONCAT(_res_, __LINE__)).value()
