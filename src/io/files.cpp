// Raw files, .npy arrays and golden manifests.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "input_file.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/limits.hpp"

namespace nvfp4 {

namespace detail {

Result<InputFile> InputFile::open(const std::string& path) {
  // An empty name (an unset variable) is the caller's mistake, not a file that failed to open.
  if (path.empty()) return invalid_argument("cannot read a file with an empty name");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  InputFile f(fd, 0);  // closes fd on every refusal below
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("cannot read '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return io_error("cannot read '" + path + "': it is a directory");
  if (!S_ISREG(st.st_mode)) return io_error("cannot read '" + path + "': not a regular file");
  f.size_ = static_cast<uint64_t>(st.st_size);
  return f;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace detail

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  NVFP4_ASSIGN_OR_RETURN(const detail::InputFile f, detail::InputFile::open(path));
  NVFP4_TRY(check_memory(f.size(), "reading '" + path + "'"));
  std::vector<uint8_t> buf(static_cast<size_t>(f.size()));
  for (size_t done = 0; done < buf.size();) {
    const ssize_t r = ::read(f.fd(), buf.data() + done, buf.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return io_error("cannot read '" + path + "': " + std::strerror(errno));
    if (r == 0) return io_error("cannot read '" + path + "': it shrank while being read");
    done += static_cast<size_t>(r);
  }
  return buf;
}

Result<std::string> read_text(const std::string& path) {
  NVFP4_ASSIGN_OR_RETURN(auto bytes, read_file(path));
  return std::string(bytes.begin(), bytes.end());
}

Status make_dirs(const std::string& path) {
  if (path.empty()) return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return io_error("cannot create directory '" + path + "': " + ec.message());
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Atomic writes
namespace {
std::string parent_dir(const std::string& path) {
  const std::string d = std::filesystem::path(path).parent_path().string();
  return d.empty() ? "." : d;
}
// A name no other writer in this or another process picks: ".<base>.tmp-<pid>-<n>" (hidden, and
// never the target's own name).
std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" +
                             std::to_string(counter.fetch_add(1))))
      .string();
}
}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path) {
  if (path.empty()) return invalid_argument("cannot write a file with an empty name");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return io_error("cannot write '" + path + "': it is a directory");
  AtomicFile f;
  f.path_ = path;
  const std::string dir = parent_dir(path);
#ifdef O_TMPFILE
  // Unnamed until commit: a killed writer leaves nothing at all behind. Linking it in later goes
  // through /proc/self/fd, so only take this road when /proc is there.
  if (access("/proc/self/fd", X_OK) == 0) f.fd_ = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
  if (f.fd_ < 0) {
    f.named_tmp_ = temp_name(path);
    f.fd_ = open(f.named_tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f.fd_ < 0) {
      const int e = errno;
      f.named_tmp_.clear();
      return io_error("cannot write '" + path + "': " + std::strerror(e));
    }
  }
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : fd_(o.fd_), path_(std::move(o.path_)), named_tmp_(std::move(o.named_tmp_)), failed_(o.failed_) {
  o.fd_ = -1;
  o.named_tmp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    discard();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    named_tmp_ = std::move(o.named_tmp_);
    failed_ = o.failed_;
    o.fd_ = -1;
    o.named_tmp_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!named_tmp_.empty()) unlink(named_tmp_.c_str());
  named_tmp_.clear();
}

Status AtomicFile::write(const void* data, size_t n) {
  if (fd_ < 0 || failed_) return io_error("write to '" + path_ + "' after it failed or was committed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      failed_ = true;
      const int e = w < 0 ? errno : EIO;
      discard();
      return io_error("write to '" + path_ + "' failed: " + std::strerror(e));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::ok();
}

Status AtomicFile::commit() {
  if (fd_ < 0 || failed_) return io_error("commit of '" + path_ + "' after it failed or was committed");
  auto fail = [&](const std::string& what) {
    const int e = errno;
    discard();
    return io_error(what + " '" + path_ + "': " + std::strerror(e));
  };
  if (fsync(fd_) != 0) return fail("cannot flush");
  if (named_tmp_.empty()) {
    // Give the unnamed file a temporary name, then move it over the target in one step.
    named_tmp_ = temp_name(path_);
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, named_tmp_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      named_tmp_.clear();
      return fail("cannot name");
    }
  }
  if (std::rename(named_tmp_.c_str(), path_.c_str()) != 0) return fail("cannot move the new file to");
  named_tmp_.clear();
  close(fd_);
  fd_ = -1;
  // The rename itself reaches the disk with the directory.
  const int dfd = open(parent_dir(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return Status::ok();
}

namespace {
// A second name for a target that exists, so that commit_all can put it back: a hard link, which
// costs no copy and keeps the very file (its inode, owner and mode). `backup` stays empty when there
// is no target. A symlink is linked as the link itself (linkat without AT_SYMLINK_FOLLOW), since the
// rename replaces the link, not what it points to.
Status keep_old(const std::string& target, std::string& backup) {
  static std::atomic<uint64_t> counter{0};
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();
    return io_error("cannot look at '" + target + "' before replacing it: " + std::strerror(errno));
  }
  // The commit would fail on it anyway, and a directory has no hard link: say what is in the way.
  if (S_ISDIR(st.st_mode)) return io_error("cannot write '" + target + "': it is a directory");
  const std::filesystem::path p(target);
  for (;;) {
    // ".<name>.bak-<pid>-<n>": hidden, beside the target (a hard link cannot leave its filesystem),
    // and never a name another writer picks; one left by a crashed run of the same pid is skipped.
    const std::string name = (p.parent_path() / ("." + p.filename().string() + ".bak-" + std::to_string(getpid()) + "-" +
                                                  std::to_string(counter.fetch_add(1))))
                                 .string();
    if (::linkat(AT_FDCWD, target.c_str(), AT_FDCWD, name.c_str(), 0) == 0) {
      backup = name;
      return Status::ok();
    }
    // A filesystem without hard links (vfat, exFAT) or a kernel that forbids linking another
    // user's file (fs.protected_hardlinks): the target is replaced without a backup, as before
    // backups existed; an undo then removes it. Any other failure refuses the whole commit.
    if (errno == EPERM || errno == EMLINK || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) return Status::ok();
    if (errno != EEXIST) return io_error("cannot keep the old '" + target + "' while replacing it: " + std::strerror(errno));
  }
}
}  // namespace

Status commit_all(std::vector<AtomicFile>& files) {
  std::vector<std::string> backups(files.size());
  auto drop_backups = [&] {
    for (std::string& b : backups)
      if (!b.empty()) ::unlink(b.c_str());
  };
  for (size_t i = 0; i < files.size(); ++i)
    if (Status st = keep_old(files[i].path(), backups[i]); !st.is_ok()) {
      drop_backups();  // nothing was committed: the targets are as they were
      return st;
    }
  for (size_t i = 0; i < files.size(); ++i) {
    Status st = files[i].commit();
    if (st.is_ok()) continue;
    // Take back the names given, last first (a path named twice ends as it began): the old file
    // returns by a rename over the new one, a name that had no file is removed. A backup that was
    // renamed is unlinked below all the same: renaming one hard link over another of the same file
    // (the second backup of a path named twice) succeeds and leaves both names.
    std::string kept;
    for (size_t j = i; j-- > 0;) {
      const std::string& target = files[j].path();
      if (backups[j].empty()) {
        ::unlink(target.c_str());
      } else if (::rename(backups[j].c_str(), target.c_str()) != 0) {
        // Never drop the only copy of an old file: it stays under its backup name, and the message says where.
        kept += "; the old '" + target + "' is kept as '" + backups[j] + "'";
        backups[j].clear();
      }
    }
    drop_backups();
    return kept.empty() ? st : Status(st.code(), st.message() + kept);
  }
  drop_backups();
  return Status::ok();
}

Status write_file(const std::string& path, const void* data, size_t n) {
  NVFP4_ASSIGN_OR_RETURN(AtomicFile f, AtomicFile::create(path));
  NVFP4_TRY(f.write(data, n));
  return f.commit();
}

Status write_text(const std::string& path, const std::string& text) { return write_file(path, text.data(), text.size()); }

// ---------------------------------------------------------------------------------------------
// .npy
namespace {
// The header is a Python dict literal: {'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }
struct NpyHeaderParser {
  std::string_view h;
  size_t i = 0;
  void ws() { while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i; }
  bool eat(char c) {
    ws();
    if (i < h.size() && h[i] == c) { ++i; return true; }
    return false;
  }
  bool quoted(std::string& out) {
    ws();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return false;
    const char q = h[i++];
    const size_t e = h.find(q, i);
    if (e == std::string_view::npos) return false;
    out = std::string(h.substr(i, e - i));
    i = e + 1;
    return true;
  }
  bool word(std::string_view w) {
    ws();
    if (h.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
};
}  // namespace

Result<NpyArray> parse_npy(const uint8_t* bytes, size_t n, const std::string& name) {
  // Everything refused here is bad input (exit 2), as a bad --shape is; io_error is left to files
  // that cannot be opened or read.
  const std::string where = "'" + name + "'";
  if (n < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) return invalid_argument(where + " is not a .npy file");
  const int major = bytes[6];
  size_t hlen = 0, off = 0;
  if (major == 1) {
    hlen = bytes[8] | (bytes[9] << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) return invalid_argument(where + ": truncated .npy header");
    hlen = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t(bytes[11]) << 24);
    off = 12;
  } else {
    return invalid_argument(where + ": unsupported .npy version " + std::to_string(major));
  }
  if (hlen > n - off) return invalid_argument(where + ": truncated .npy header");
  NpyHeaderParser p{std::string_view(reinterpret_cast<const char*>(bytes) + off, hlen)};
  auto malformed = [&](const std::string& why) { return invalid_argument(where + ": malformed .npy header: " + why); };
  std::string descr;
  bool have_descr = false, have_fortran = false, have_shape = false, fortran = false;
  NpyArray a;
  if (!p.eat('{')) return malformed("expected '{'");
  while (!p.eat('}')) {
    std::string key;
    if (!p.quoted(key)) return malformed("expected a quoted key");
    if (!p.eat(':')) return malformed("expected ':' after '" + printable(key) + "'");
    if (key == "descr") {
      if (!p.quoted(descr)) return malformed("descr must be a quoted dtype string");
      have_descr = true;
    } else if (key == "fortran_order") {
      if (p.word("True")) fortran = true;
      else if (p.word("False")) fortran = false;
      else return malformed("fortran_order must be True or False");
      have_fortran = true;
    } else if (key == "shape") {
      if (!p.eat('(')) return malformed("shape must be a tuple");
      while (!p.eat(')')) {
        p.ws();
        int64_t d = 0;
        const char* b = p.h.data() + p.i;
        const auto r = std::from_chars(b, p.h.data() + p.h.size(), d);
        if (r.ec == std::errc::result_out_of_range)
          return invalid_argument(where + ": dimension " + std::to_string(a.shape.size()) + " of the shape does not fit 64 bits");
        if (r.ec != std::errc() || r.ptr == b) return malformed("shape entries must be integers");
        p.i += static_cast<size_t>(r.ptr - b);
        NVFP4_TRY(check_dim(d, where + ": shape[" + std::to_string(a.shape.size()) + "]", /*allow_zero=*/true));
        if (a.shape.size() == 32) return malformed("more than 32 dimensions");
        a.shape.push_back(d);
        if (!p.eat(',')) {
          if (!p.eat(')')) return malformed("expected ',' or ')' in the shape");
          break;
        }
      }
      have_shape = true;
    } else {
      return malformed("unknown key '" + printable(key) + "'");
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) return malformed("expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_fortran || !have_shape) return malformed("it needs descr, fortran_order and shape");
  if (fortran) return invalid_argument(where + ": Fortran-order arrays are not supported");
  size_t elem;
  if (descr == "<u2" || descr == "<V2" || descr == "|V2" || descr == "bfloat16" || descr == "<i2") { a.dtype = "u2"; elem = 2; }
  else if (descr == "|u1" || descr == "<u1" || descr == "|i1") { a.dtype = "u1"; elem = 1; }
  else if (descr == "<f4") { a.dtype = "f4"; elem = 4; }
  else if (descr == "<i4") { a.dtype = "i4"; elem = 4; }
  else return invalid_argument(where + ": unsupported .npy dtype '" + printable(descr) + "' (use u1, u2/bf16, f4 or i4)");
  int64_t count = 1;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    NVFP4_ASSIGN_OR_RETURN(count, checked_mul(count, a.shape[i], where + ": the shape's element count"));
  }
  NVFP4_ASSIGN_OR_RETURN(const int64_t need, checked_mul(count, static_cast<int64_t>(elem), where + ": the shape's byte count"));
  const size_t have = n - off - hlen;
  if (static_cast<uint64_t>(need) > have)
    return invalid_argument(where + ": data is shorter than its shape says (" + std::to_string(have) + " < " +
                            std::to_string(need) + " bytes)");
  a.bytes.assign(bytes + off + hlen, bytes + off + hlen + need);
  return a;
}

Result<NpyArray> read_npy(const std::string& path) {
  NVFP4_ASSIGN_OR_RETURN(auto bytes, read_file(path));
  return parse_npy(bytes.data(), bytes.size(), path);
}

Status write_npy(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
                 const void* data, size_t nbytes) {
  NVFP4_ASSIGN_OR_RETURN(AtomicFile f, AtomicFile::create(path));
  NVFP4_TRY(write_npy(f, dtype, shape, data, nbytes));
  return f.commit();
}

Status write_npy(AtomicFile& f, const std::string& dtype, const std::vector<int64_t>& shape, const void* data,
                 size_t nbytes) {
  std::string descr = dtype == "u1" ? "|u1" : "<" + dtype;
  std::string shp = "(";
  for (size_t i = 0; i < shape.size(); ++i) shp += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  shp += ")";
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string head = "\x93NUMPY";
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(h.size() & 0xFF);
  head += static_cast<char>(h.size() >> 8);
  head += h;
  NVFP4_TRY(f.write(head.data(), head.size()));
  return f.write(data, nbytes);
}

// ---------------------------------------------------------------------------------------------
// Golden files
int64_t GoldenFile::Array::count() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;  // from_parts checked that the product fits
  return n;
}

namespace {
// A JSON number that is a whole number in [0, 2^53]: sizes and offsets in a manifest.
bool json_size(const Json& j, int64_t& out) {
  if (j.type() != Json::Type::kNumber) return false;
  const double v = j.as_number();
  if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v)) return false;
  out = static_cast<int64_t>(v);
  return true;
}
int64_t golden_dtype_size(const std::string& d) {
  if (d == "u8" || d == "i8") return 1;
  if (d == "u16" || d == "i16" || d == "bf16" || d == "f16") return 2;
  if (d == "u32" || d == "i32" || d == "f32") return 4;
  if (d == "u64" || d == "i64" || d == "f64") return 8;
  return 0;
}
}  // namespace

Result<GoldenFile> GoldenFile::open(const std::string& manifest_path) {
  // What the files say is checked below as bad input; only reading them is an I/O error.
  NVFP4_ASSIGN_OR_RETURN(std::string text, read_text(manifest_path));
  auto m = Json::parse(text);
  if (!m.is_ok()) return invalid_argument("'" + manifest_path + "': " + m.status().message());
  if (m->type() != Json::Type::kObject || (*m)["file"].type() != Json::Type::kString)
    return invalid_argument("'" + manifest_path + "' is not a golden manifest (no \"file\")");
  const std::string& file = (*m)["file"].as_string();
  // The name goes into messages as it is: no control characters, so they stay one line.
  const bool control =
      std::any_of(file.begin(), file.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
  if (file.empty() || file.find('/') != std::string::npos || file == ".." || control)
    return invalid_argument("'" + manifest_path + "': \"file\" must name a file next to the manifest");
  const std::string dir = std::filesystem::path(manifest_path).parent_path().string();
  const std::string bin_path = (dir.empty() ? "" : dir + "/") + file;
  NVFP4_ASSIGN_OR_RETURN(auto bin, read_file(bin_path));
  return from_parts(std::move(m.value()), std::move(bin), bin_path);
}

Result<GoldenFile> GoldenFile::from_parts(Json m, std::vector<uint8_t> bin, const std::string& bin_name) {
  if (m.type() != Json::Type::kObject) return invalid_argument("golden manifest for '" + bin_name + "' is not a JSON object");
  const std::string got = sha256_hex(bin.data(), bin.size());
  if (m["sha256"].type() != Json::Type::kString || got != m["sha256"].as_string())
    return invalid_argument("'" + bin_name + "' sha256 " + got + " differs from the manifest's " + printable(m["sha256"].as_string()));
  const Json& arrays = m["arrays"];
  if (arrays.type() != Json::Type::kArray) return invalid_argument("golden manifest for '" + bin_name + "' has no \"arrays\" list");
  for (const Json& a : arrays.items()) {
    if (a.type() != Json::Type::kObject || a["key"].type() != Json::Type::kString)
      return invalid_argument("golden manifest for '" + bin_name + "': an array entry has no \"key\"");
    const std::string where = "golden array '" + printable(a["key"].as_string()) + "' of '" + bin_name + "'";
    const int64_t esize = golden_dtype_size(a["dtype"].as_string());
    if (esize == 0) return invalid_argument(where + ": unknown dtype '" + printable(a["dtype"].as_string()) + "'");
    if (a["shape"].type() != Json::Type::kArray) return invalid_argument(where + ": no shape");
    int64_t count = 1, off = 0, nbytes = 0;
    for (const Json& d : a["shape"].items()) {
      int64_t v = 0;
      if (!json_size(d, v)) return invalid_argument(where + ": shape entries must be non-negative integers");
      NVFP4_ASSIGN_OR_RETURN(count, checked_mul(count, v, where));
    }
    if (!json_size(a["offset"], off) || !json_size(a["nbytes"], nbytes))
      return invalid_argument(where + ": offset and nbytes must be non-negative integers");
    NVFP4_ASSIGN_OR_RETURN(const int64_t need, checked_mul(count, esize, where));
    if (need != nbytes)
      return invalid_argument(where + ": nbytes " + std::to_string(nbytes) + " differs from its shape's " + std::to_string(need));
    if (off > static_cast<int64_t>(bin.size()) || nbytes > static_cast<int64_t>(bin.size()) - off)
      return invalid_argument(where + " lies past the end of its file");
  }
  GoldenFile g;
  g.manifest_ = std::move(m);
  g.bin_ = std::make_shared<std::vector<uint8_t>>(std::move(bin));
  return g;
}

Result<GoldenFile::Array> GoldenFile::get(const std::string& key) const {
  for (const Json& a : manifest_["arrays"].items()) {
    if (a["key"].as_string() != key) continue;
    Array out;
    out.key = key;
    out.dtype = a["dtype"].as_string();
    out.layout = a["layout"].as_string();
    for (const Json& d : a["shape"].items()) out.shape.push_back(d.as_int());
    const size_t off = static_cast<size_t>(a["offset"].as_int());  // checked in from_parts
    out.nbytes = static_cast<size_t>(a["nbytes"].as_int());
    out.data = bin_->data() + off;
    return out;
  }
  return invalid_argument("golden file has no array '" + key + "'");
}

std::vector<std::string> GoldenFile::keys() const {
  std::vector<std::string> k;
  for (const Json& a : manifest_["arrays"].items()) k.push_back(a["key"].as_string());
  return k;
}

}  // namespace nvfp4
