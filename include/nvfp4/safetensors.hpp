// safetensors files (the container of ComfyUI checkpoints, docs/numerics.md §7): a strict reader
// that memory-maps the file and checks every header rule before any tensor is touched, and a writer
// that streams tensors into a temporary file beside the target and renames it only on success.
//
// Layout: u64 little-endian header length N, N bytes of UTF-8 JSON
// {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {str: str}}
// (optionally padded with spaces), then the data buffer; offsets are relative to the buffer start.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/io.hpp"

namespace nvfp4 {

enum class StDtype : uint8_t {
  kBool, kU8, kI8, kF8E4M3, kF8E5M2, kF8E8M0,
  kI16, kU16, kF16, kBF16,
  kI32, kU32, kF32,
  kI64, kU64, kF64, kC64,
};
const char* to_string(StDtype d);                  // the header spelling: "BF16", "F8_E4M3", ...
Result<StDtype> parse_st_dtype(std::string_view s);  // exact spelling only
int st_dtype_size(StDtype d);                        // bytes per element
// A name from a file, fit for a one-line message: control characters as '?', cut at 200 bytes.
std::string st_printable(std::string_view s);

// The header never holds more than this (the reference implementation's limit): a larger length
// field is a corrupt or hostile file, refused before anything is allocated.
constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::kU8;
  std::vector<int64_t> shape;  // [] is a scalar (one element)
  uint64_t begin = 0, end = 0;  // relative to the data buffer
  int64_t numel() const;
  uint64_t nbytes() const { return end - begin; }
};

struct StHeader {
  uint64_t header_len = 0;                 // N
  std::vector<StTensor> tensors;           // in header order
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, in header order
  uint64_t data_start() const { return 8 + header_len; }
};

// Checks a whole file image of `size` bytes: header length within the file and below the limit,
// UTF-8 JSON object, known dtypes, shapes with overflow-safe element counts, offsets inside the
// buffer with end - begin == elements * dtype size, no overlap, no gap, the buffer fully covered,
// __metadata__ string to string. `label` (the file name) starts every error message.
Result<StHeader> parse_safetensors(const uint8_t* image, uint64_t size, const std::string& label);

class SafetensorsFile {
 public:
  // Memory-maps `path` read-only (the data is never read whole) and checks it as above.
  static Result<SafetensorsFile> open(const std::string& path);
  // Checks an image held by the caller, who keeps it alive and unchanged while this object lives.
  static Result<SafetensorsFile> view(const uint8_t* image, uint64_t size, const std::string& label);

  const std::string& path() const { return label_; }
  uint64_t file_size() const { return size_; }
  const StHeader& header() const { return header_; }
  const std::vector<StTensor>& tensors() const { return header_.tensors; }
  const StTensor* find(std::string_view name) const;
  const uint8_t* data(const StTensor& t) const { return base_ + header_.data_start() + t.begin; }
  const std::string* metadata(std::string_view key) const;

 private:
  std::shared_ptr<const void> mapping_;  // unmaps when the last copy goes
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  std::string label_;
  StHeader header_;
  std::unordered_map<std::string, size_t> index_;
};

// One tensor to write: its bytes either borrowed (valid until write_safetensors returns) or made
// by `produce` when the writer reaches it, so a checkpoint is converted one layer at a time.
struct StEntry {
  std::string name;
  StDtype dtype = StDtype::kU8;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  std::function<Result<std::vector<uint8_t>>()> produce;
};

// Writes entries in the given order (header first, padded with spaces to 8 bytes so the buffer is
// aligned) into a temporary file in the target's directory, syncs it and renames it over `path`.
// Every error removes the temporary file: `path` is either the complete new file or untouched.
// progress(bytes_written, bytes_total) is called after each tensor.
Status write_safetensors(const std::string& path, const std::vector<StEntry>& entries,
                         const std::vector<std::pair<std::string, std::string>>& metadata,
                         const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace nvfp4
