// safetensors reader (mmap, strict header checks) and streaming writer (temp file + rename).
#include "nvfp4/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "input_file.hpp"

namespace nvfp4 {

// Names come from the file: keep messages on one line and bounded whatever the bytes are.
std::string st_printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 200; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c < 0x20 || c == 0x7F) ? '?' : static_cast<char>(c);
  }
  if (s.size() > 200) out += "...";
  return out;
}

namespace {

struct DtypeInfo {
  StDtype d;
  const char* name;
  int size;
};
constexpr DtypeInfo kDtypes[] = {
    {StDtype::kBool, "BOOL", 1},       {StDtype::kU8, "U8", 1},           {StDtype::kI8, "I8", 1},
    {StDtype::kF8E4M3, "F8_E4M3", 1},  {StDtype::kF8E5M2, "F8_E5M2", 1},  {StDtype::kF8E8M0, "F8_E8M0", 1},
    {StDtype::kI16, "I16", 2},         {StDtype::kU16, "U16", 2},         {StDtype::kF16, "F16", 2},
    {StDtype::kBF16, "BF16", 2},       {StDtype::kI32, "I32", 4},         {StDtype::kU32, "U32", 4},
    {StDtype::kF32, "F32", 4},         {StDtype::kI64, "I64", 8},         {StDtype::kU64, "U64", 8},
    {StDtype::kF64, "F64", 8},         {StDtype::kC64, "C64", 8},
};

// A malformed file is bad input (kInvalidArgument), as a malformed .npy is; kIo stays for files that
// cannot be opened, read or mapped.
Status bad(const std::string& label, const std::string& what) { return invalid_argument("'" + label + "': " + what); }
Status bad_tensor(const std::string& label, std::string_view name, const std::string& what) {
  return invalid_argument("'" + label + "': tensor '" + st_printable(name) + "': " + what);
}

bool valid_utf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c < 0x80) { ++i; continue; }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

// JSON numbers are doubles: integers are exact up to 2^53, far beyond any real file.
bool json_uint(const Json& j, uint64_t* out) {
  if (j.type() != Json::Type::kNumber) return false;
  const double v = j.as_number();
  if (!(v >= 0) || v > 9007199254740992.0 || v != std::floor(v)) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

Status check_entry(const std::string& label, const std::string& name, const Json& v, uint64_t buffer, StTensor* t) {
  t->name = name;
  if (v.type() != Json::Type::kObject) return bad_tensor(label, name, "header entry is not a JSON object");
  for (const auto& [k, _] : v.members())
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      return bad_tensor(label, name, "unknown header field '" + st_printable(k) + "'");
  const Json* dt = v.find("dtype");
  if (!dt || dt->type() != Json::Type::kString) return bad_tensor(label, name, "missing or non-string dtype");
  auto d = parse_st_dtype(dt->as_string());
  if (!d.is_ok()) return bad_tensor(label, name, d.status().message());
  t->dtype = d.value();
  const Json* sh = v.find("shape");
  if (!sh || sh->type() != Json::Type::kArray) return bad_tensor(label, name, "missing or non-array shape");
  // Element counts are multiplied in 128 bits and must stay below 2^62: no wrap-around can make a
  // huge shape look small.
  unsigned __int128 count = 1;
  for (const Json& e : sh->items()) {
    uint64_t dim;
    if (!json_uint(e, &dim)) return bad_tensor(label, name, "shape entries must be non-negative integers");
    t->shape.push_back(static_cast<int64_t>(dim));
    count *= dim;
    if (count > (static_cast<unsigned __int128>(1) << 62)) return bad_tensor(label, name, "shape " + shape_str(t->shape) + "... has too many elements");
  }
  const Json* off = v.find("data_offsets");
  uint64_t b = 0, e = 0;
  if (!off || off->type() != Json::Type::kArray || off->size() != 2 || !json_uint(off->items()[0], &b) ||
      !json_uint(off->items()[1], &e))
    return bad_tensor(label, name, "data_offsets must be [begin, end], two non-negative integers");
  if (e < b) return bad_tensor(label, name, "data_offsets end " + std::to_string(e) + " is before begin " + std::to_string(b));
  if (e > buffer)
    return bad_tensor(label, name, "data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                                       "] run past the end of the data buffer (" + std::to_string(buffer) + " bytes)");
  const unsigned __int128 need = count * static_cast<unsigned>(st_dtype_size(t->dtype));
  if (need != e - b)
    return bad_tensor(label, name, std::string(to_string(t->dtype)) + " " + shape_str(t->shape) + " needs " +
                                       std::to_string(static_cast<uint64_t>(need)) + " bytes, data_offsets give " +
                                       std::to_string(e - b));
  t->begin = b;
  t->end = e;
  return Status::ok();
}

}  // namespace

const char* to_string(StDtype d) {
  for (const auto& i : kDtypes)
    if (i.d == d) return i.name;
  return "?";
}

Result<StDtype> parse_st_dtype(std::string_view s) {
  for (const auto& i : kDtypes)
    if (s == i.name) return i.d;
  return invalid_argument("unknown or unsupported dtype '" + st_printable(s) + "'");
}

int st_dtype_size(StDtype d) {
  for (const auto& i : kDtypes)
    if (i.d == d) return i.size;
  return 0;
}

int64_t StTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<StHeader> parse_safetensors(const uint8_t* image, uint64_t size, const std::string& label) {
  if (size < 8) return bad(label, "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | image[i];
  if (n > kSafetensorsMaxHeader)
    return bad(label, "header length " + std::to_string(n) + " exceeds the " + std::to_string(kSafetensorsMaxHeader) +
                          "-byte limit (not a safetensors file, or corrupt)");
  if (n > size - 8)
    return bad(label, "truncated: header length " + std::to_string(n) + " but only " + std::to_string(size - 8) +
                          " bytes follow the length field");
  if (n < 2 || image[8] != '{') return bad(label, "header is not a JSON object (must start with '{')");
  const uint8_t* h = image + 8;
  if (!valid_utf8(h, n)) return bad(label, "header is not valid UTF-8");
  auto j = Json::parse(std::string_view(reinterpret_cast<const char*>(h), n));
  if (!j.is_ok()) return bad(label, "header: " + st_printable(j.status().message()));
  if (j->type() != Json::Type::kObject) return bad(label, "header is not a JSON object");

  StHeader out;
  out.header_len = n;
  const uint64_t buffer = size - 8 - n;
  for (const auto& [name, v] : j->members()) {
    if (name == "__metadata__") {
      if (v.type() != Json::Type::kObject) return bad(label, "__metadata__ is not a JSON object");
      for (const auto& [k, mv] : v.members()) {
        if (mv.type() != Json::Type::kString)
          return bad(label, "__metadata__ value '" + st_printable(k) + "' is not a string");
        out.metadata.emplace_back(k, mv.as_string());
      }
      continue;
    }
    if (name.empty()) return bad(label, "a tensor has an empty name");
    StTensor t;
    NVFP4_TRY(check_entry(label, name, v, buffer, &t));
    out.tensors.push_back(std::move(t));
  }
  // The buffer is exactly the concatenation of the tensors: sorted by offset, each begins where the
  // previous ended, the last ends at the end of the file.
  std::vector<size_t> order(out.tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const StTensor &x = out.tensors[a], &y = out.tensors[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  uint64_t cursor = 0;
  const StTensor* prev = nullptr;
  for (size_t i : order) {
    const StTensor& t = out.tensors[i];
    if (t.begin < cursor)
      return bad_tensor(label, t.name, "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                                           "] overlap tensor '" + st_printable(prev->name) + "' [" + std::to_string(prev->begin) +
                                           ", " + std::to_string(prev->end) + "]");
    if (t.begin > cursor)
      return bad_tensor(label, t.name, "data_offsets begin at " + std::to_string(t.begin) + " leave bytes [" +
                                           std::to_string(cursor) + ", " + std::to_string(t.begin) + ") of the buffer unused");
    cursor = t.end;
    prev = &t;
  }
  if (cursor != buffer)
    return bad(label, "the tensors cover " + std::to_string(cursor) + " bytes of a " + std::to_string(buffer) +
                          "-byte data buffer (trailing bytes belong to no tensor)");
  return out;
}

// ---------------------------------------------------------------------------------------------
Result<SafetensorsFile> SafetensorsFile::view(const uint8_t* image, uint64_t size, const std::string& label) {
  SafetensorsFile f;
  NVFP4_ASSIGN_OR_RETURN(f.header_, parse_safetensors(image, size, label));
  f.base_ = image;
  f.size_ = size;
  f.label_ = label;
  f.index_.reserve(f.header_.tensors.size());
  for (size_t i = 0; i < f.header_.tensors.size(); ++i) f.index_.emplace(f.header_.tensors[i].name, i);
  return f;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  uint64_t size = 0;
  void* p = MAP_FAILED;
  {
    NVFP4_ASSIGN_OR_RETURN(const detail::InputFile in, detail::InputFile::open(path));
    size = in.size();
    // mmap refuses a zero length: an empty file is refused here for what it is.
    if (size < 8) return bad(path, "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
    p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, in.fd(), 0);
    if (p == MAP_FAILED) return io_error("cannot map '" + path + "': " + std::strerror(errno));
  }  // closes the file: the mapping keeps it
  std::shared_ptr<const void> mapping(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
  NVFP4_ASSIGN_OR_RETURN(SafetensorsFile f, view(static_cast<const uint8_t*>(p), size, path));
  f.mapping_ = std::move(mapping);
  return f;
}

const StTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

const std::string* SafetensorsFile::metadata(std::string_view key) const {
  for (const auto& [k, v] : header_.metadata)
    if (k == key) return &v;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
namespace {

// A temporary file beside the target; removed unless commit() renamed it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    const auto p = std::filesystem::path(target);
    tmp_ = (p.parent_path().empty() ? std::string(".") : p.parent_path().string()) + "/." + p.filename().string() + ".XXXXXX";
    fd_ = ::mkstemp(tmp_.data());
    err_ = errno;
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && fd_ != -1) ::unlink(tmp_.c_str());
  }
  Status opened() const {
    return fd_ >= 0 ? Status::ok() : io_error("cannot create a temporary file beside '" + target_ + "': " + std::strerror(err_));
  }
  Status write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min<size_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        return io_error("write to '" + target_ + "' failed: " + std::strerror(errno));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status::ok();
  }
  Status commit() {
    // Same permissions as any new file (mkstemp makes it 0600).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
    if (::fsync(fd_) != 0) return io_error("cannot sync '" + target_ + "': " + std::strerror(errno));
    if (::close(fd_) != 0) {
      fd_ = -2;  // closed: only unlink remains
      return io_error("cannot close '" + target_ + "': " + std::strerror(errno));
    }
    fd_ = -2;
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0)
      return io_error("cannot move '" + tmp_ + "' to '" + target_ + "': " + std::strerror(errno));
    committed_ = true;
    return Status::ok();
  }

 private:
  std::string target_, tmp_;
  int fd_ = -1;
  int err_ = 0;
  bool committed_ = false;
};

}  // namespace

Status write_safetensors(const std::string& path, const std::vector<StEntry>& entries,
                         const std::vector<std::pair<std::string, std::string>>& metadata,
                         const std::function<void(uint64_t, uint64_t)>& progress) {
  // Everything is checked before the first byte is written.
  if (path.empty()) return invalid_argument("cannot write a file with an empty name");
  Json header = Json::object();
  if (!metadata.empty()) {
    Json m = Json::object();
    for (const auto& [k, v] : metadata) {
      if (m.find(k)) return invalid_argument("'" + path + "': metadata key '" + st_printable(k) + "' given twice");
      m.set(k, v);
    }
    header.set("__metadata__", m);
  }
  std::unordered_map<std::string, size_t> seen;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (const StEntry& e : entries) {
    if (e.name.empty() || e.name == "__metadata__")
      return invalid_argument("'" + path + "': invalid tensor name '" + st_printable(e.name) + "'");
    if (!seen.emplace(e.name, sizes.size()).second)
      return invalid_argument("'" + path + "': tensor '" + st_printable(e.name) + "' given twice");
    unsigned __int128 count = 1;
    Json shape = Json::array();
    for (int64_t d : e.shape) {
      if (d < 0) return invalid_argument("'" + path + "': tensor '" + st_printable(e.name) + "' has a negative dimension");
      count *= static_cast<uint64_t>(d);
      if (count > (static_cast<unsigned __int128>(1) << 50))
        return invalid_argument("'" + path + "': tensor '" + st_printable(e.name) + "' is too large");
      shape.push(d);
    }
    const uint64_t nbytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(st_dtype_size(e.dtype));
    if (!e.data && !e.produce && nbytes > 0)
      return invalid_argument("'" + path + "': tensor '" + st_printable(e.name) + "' has no data");
    Json t = Json::object();
    t.set("dtype", to_string(e.dtype)).set("shape", shape);
    t.set("data_offsets", Json::array().push(offset).push(offset + nbytes));
    header.set(e.name, t);
    sizes.push_back(nbytes);
    offset += nbytes;
  }
  std::string h = header.dump(0);
  while ((h.size() % 8) != 0) h += ' ';
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(h.size()) >> (8 * i));

  TempFile tmp(path);
  NVFP4_TRY(tmp.opened());
  NVFP4_TRY(tmp.write(len, 8));
  NVFP4_TRY(tmp.write(h.data(), h.size()));
  uint64_t done = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const StEntry& e = entries[i];
    if (!e.produce) {
      NVFP4_TRY(tmp.write(e.data, sizes[i]));
    } else {
      auto bytes = e.produce();
      if (!bytes.is_ok()) return bytes.status();
      if (bytes->size() != sizes[i])
        return Status(ErrorCode::kInternal, "'" + path + "': tensor '" + st_printable(e.name) + "' produced " +
                                                std::to_string(bytes->size()) + " bytes, its shape needs " + std::to_string(sizes[i]));
      NVFP4_TRY(tmp.write(bytes->data(), bytes->size()));
    }
    done += sizes[i];
    if (progress) progress(done, offset);
  }
  return tmp.commit();
}

}  // namespace nvfp4
