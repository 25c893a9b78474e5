// Files and data formats the tools read and write: JSON, raw binaries, .npy, golden manifests,
// and SHA-256 (golden files are checked against their recorded hash before use).
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nvfp4/error.hpp"

namespace nvfp4 {

namespace detail { struct JsonParser; }

// ---------------------------------------------------------------------------------------------
// JSON: a small value type with an exact parser and a deterministic writer (keys keep insertion
// order so reports diff cleanly).
class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), b_(b) {}
  Json(int v) : Json(static_cast<int64_t>(v)) {}
  Json(int64_t v) : type_(Type::kNumber), int_(Int::kSigned), n_(static_cast<double>(v)), bits_(static_cast<uint64_t>(v)) {}
  Json(uint64_t v) : type_(Type::kNumber), int_(Int::kUnsigned), n_(static_cast<double>(v)), bits_(v) {}
  Json(double v) : type_(Type::kNumber), n_(v) {}
  Json(const char* s) : type_(Type::kString), s_(s) {}
  Json(std::string s) : type_(Type::kString), s_(std::move(s)) {}
  static Json array() { Json j; j.type_ = Type::kArray; return j; }
  static Json object() { Json j; j.type_ = Type::kObject; return j; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool as_bool() const { return b_; }
  double as_number() const { return n_; }
  // A whole number within 64 bits, from an integer constructor or written without '.' or exponent:
  // as_int() gives it exactly and dump() writes it digit for digit (a double keeps only 53 bits).
  bool is_int() const { return int_ != Int::kNone; }
  // Truncates toward zero; NaN gives 0 and values outside int64 saturate (a cast would be undefined).
  int64_t as_int() const {
    if (int_ == Int::kSigned) return static_cast<int64_t>(bits_);
    if (int_ == Int::kUnsigned) return bits_ > uint64_t{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(bits_);
    if (!(n_ == n_)) return 0;
    if (n_ >= 9223372036854775807.0) return INT64_MAX;
    if (n_ <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(n_);
  }
  const std::string& as_string() const { return s_; }
  const std::vector<Json>& items() const { return arr_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return obj_; }

  Json& push(Json v) { type_ = Type::kArray; arr_.push_back(std::move(v)); return *this; }
  Json& set(const std::string& k, Json v);
  const Json* find(std::string_view k) const;
  const Json& operator[](std::string_view k) const;  // null if absent
  size_t size() const { return type_ == Type::kArray ? arr_.size() : obj_.size(); }

  std::string dump(int indent = 1) const;
  // Strict about what files can smuggle in: a key repeated in one object is an error (a safetensors
  // header naming one tensor twice must not silently keep the last entry). Text that is not JSON is
  // kInvalidArgument, as is every malformed file below.
  static Result<Json> parse(std::string_view text);

 private:
  friend struct detail::JsonParser;
  void dump_to(std::string& out, int indent, int depth) const;
  void append(std::string k, Json v);  // a new key: the caller has checked it is not there
  enum class Int : uint8_t { kNone, kSigned, kUnsigned };
  Type type_ = Type::kNull;
  bool b_ = false;
  Int int_ = Int::kNone;
  double n_ = 0;
  uint64_t bits_ = 0;  // the exact value when int_ says so (two's complement for kSigned)
  std::string s_;
  std::vector<Json> arr_;
  std::vector<std::pair<std::string, Json>> obj_;
  // Key -> position in obj_, built once an object outgrows a linear search: safetensors headers
  // hold hundreds of thousands of keys, while the many small objects (one per tensor) carry none.
  // No index is always consistent (find() searches, the next append() rebuilds it), so a self-move,
  // which may empty obj_, drops it.
  struct KeyIndex {
    std::unique_ptr<std::unordered_map<std::string, size_t>> map;
    KeyIndex() = default;
    KeyIndex(const KeyIndex& o) : map(o.map ? std::make_unique<std::unordered_map<std::string, size_t>>(*o.map) : nullptr) {}
    KeyIndex& operator=(const KeyIndex& o) {
      map = o.map ? std::make_unique<std::unordered_map<std::string, size_t>>(*o.map) : nullptr;
      return *this;
    }
    KeyIndex(KeyIndex&&) noexcept = default;
    KeyIndex& operator=(KeyIndex&& o) noexcept {
      if (this != &o) map = std::move(o.map);
      else map.reset();
      return *this;
    }
  };
  KeyIndex index_;
};

// ---------------------------------------------------------------------------------------------
// Files
// Refuses (one line, before allocating) a file larger than memory_budget_bytes().
Result<std::vector<uint8_t>> read_file(const std::string& path);
Result<std::string> read_text(const std::string& path);

// Every file the library and the tools write goes through AtomicFile: the bytes go to an unnamed
// temporary file in the target's directory (O_TMPFILE; a hidden ".<name>.tmp-*" file where the
// filesystem lacks it), are flushed to disk, and only commit() gives them the target's name, by an
// atomic rename. A crash, a kill or an error at any point leaves the old file (or none), never a
// partial one. Dropping an uncommitted AtomicFile discards what was written.
class AtomicFile {
 public:
  static Result<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&& o) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  Status write(const void* data, size_t n);
  Status commit();
  const std::string& path() const { return path_; }

 private:
  AtomicFile() = default;
  void discard();
  int fd_ = -1;
  std::string path_, named_tmp_;  // named_tmp_: the fallback's visible temporary name, else empty
  bool failed_ = false;
};
// Commits `files` in order, all or none: when one cannot be committed, the names this call already
// gave are taken back, so outputs that belong together never appear in part. A file a target
// replaced comes back: every existing target first gets a second name, a hard link beside it
// (".<name>.bak-*"), renamed back over the new file on failure and removed on success; a target that
// did not exist is removed. A symlink target is kept and replaced as the link itself. Where the
// filesystem has no hard links (vfat, exFAT) or forbids the link (fs.protected_hardlinks), that
// target is replaced without a backup and an undo removes it; any other failure to make a backup (a
// directory in the way) commits nothing. Only a crash between two of the renames can still leave the first ones, and the
// backups with them.
Status commit_all(std::vector<AtomicFile>& files);
// One-shot forms of AtomicFile.
Status write_file(const std::string& path, const void* data, size_t n);
Status write_text(const std::string& path, const std::string& text);
Status make_dirs(const std::string& path);

// .npy (version 1/2, little-endian, C order): dtype strings '<u2' (bf16 patterns), '|u1', '<f4',
// '<i4'. bfloat16 arrays saved by ml_dtypes ('<V2' / 'bfloat16') read as u2 too.
struct NpyArray {
  std::string dtype;  // normalised: "u1", "u2", "f4", "i4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
Result<NpyArray> read_npy(const std::string& path);
// The parser behind read_npy, on bytes in memory; `name` is used in messages. Negative, absurd or
// overflowing dimensions and data shorter than the shape are refused as such; every refusal of the
// bytes is kInvalidArgument (read_npy's kIo means the file could not be read).
Result<NpyArray> parse_npy(const uint8_t* bytes, size_t n, const std::string& name);
Status write_npy(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
                 const void* data, size_t nbytes);
// The same bytes into `f`, left uncommitted: for outputs that must appear together or not at all.
Status write_npy(AtomicFile& f, const std::string& dtype, const std::vector<int64_t>& shape, const void* data,
                 size_t nbytes);

// ---------------------------------------------------------------------------------------------
// SHA-256
std::string sha256_hex(const void* data, size_t n);

// ---------------------------------------------------------------------------------------------
// Golden-vector files: a .bin of little-endian arrays described by a .json manifest.
class GoldenFile {
 public:
  // Reads manifest + bin and checks the recorded sha256 of the bin before anything is used. A file
  // that cannot be read is kIo; a manifest or bin that fails a check is kInvalidArgument.
  static Result<GoldenFile> open(const std::string& manifest_path);
  // The checks behind open() on a parsed manifest and the bin's bytes: the sha256, then every
  // array's dtype, shape, offset and size (shape x dtype size == nbytes, inside the bin), so get()
  // never hands out a range it has not checked.
  static Result<GoldenFile> from_parts(Json manifest, std::vector<uint8_t> bin, const std::string& bin_name);
  struct Array {
    std::string key, dtype, layout;
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t count() const;
    // A copy: manifest offsets need not be aligned for T.
    template <typename T> std::vector<T> to_vector() const {
      std::vector<T> v(nbytes / sizeof(T));
      std::memcpy(v.data(), data, v.size() * sizeof(T));
      return v;
    }
  };
  Result<Array> get(const std::string& key) const;
  std::vector<std::string> keys() const;
  const Json& manifest() const { return manifest_; }

 private:
  Json manifest_;
  std::shared_ptr<std::vector<uint8_t>> bin_;
};

}  // namespace nvfp4
