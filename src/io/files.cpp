// Raw files, .npy arrays and golden manifests.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nvfp4/io.hpp"

namespace nvfp4 {

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return io_error("cannot read '" + path + "': it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0, std::ios::beg);
  if (size < 0) return io_error("cannot read '" + path + "': not a regular file");
  std::vector<uint8_t> buf(static_cast<size_t>(size));
  if (size > 0 && !f.read(reinterpret_cast<char*>(buf.data()), size)) return io_error("cannot read '" + path + "'");
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

Status write_file(const std::string& path, const void* data, size_t n) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return io_error("cannot write '" + path + "': " + std::strerror(errno));
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!f) {
      std::remove(tmp.c_str());
      return io_error("write to '" + path + "' failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return io_error("cannot move '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  }
  return Status::ok();
}

Status write_text(const std::string& path, const std::string& text) { return write_file(path, text.data(), text.size()); }

// ---------------------------------------------------------------------------------------------
// .npy
namespace {
Result<std::string> header_field(const std::string& h, const std::string& key) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return io_error("npy header has no '" + key + "'");
  size_t p = h.find(':', k);
  if (p == std::string::npos) return io_error("npy header is malformed");
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (h[p] == '\'') {
    const size_t e = h.find('\'', p + 1);
    return h.substr(p + 1, e - p - 1);
  }
  if (h[p] == '(') {
    const size_t e = h.find(')', p);
    return h.substr(p + 1, e - p - 1);
  }
  size_t e = p;
  while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  return h.substr(p, e - p);
}
}  // namespace

Result<NpyArray> read_npy(const std::string& path) {
  NVFP4_ASSIGN_OR_RETURN(auto bytes, read_file(path));
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return io_error("'" + path + "' is not a .npy file");
  const int major = bytes[6];
  size_t hlen, off;
  if (major == 1) { hlen = bytes[8] | (bytes[9] << 8); off = 10; }
  else if (bytes.size() >= 12) { hlen = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t(bytes[11]) << 24); off = 12; }
  else return io_error("'" + path + "': truncated .npy header");
  if (off + hlen > bytes.size()) return io_error("'" + path + "': truncated .npy header");
  const std::string h(bytes.begin() + off, bytes.begin() + off + hlen);
  NVFP4_ASSIGN_OR_RETURN(std::string descr, header_field(h, "descr"));
  NVFP4_ASSIGN_OR_RETURN(std::string fortran, header_field(h, "fortran_order"));
  NVFP4_ASSIGN_OR_RETURN(std::string shape_s, header_field(h, "shape"));
  if (fortran.find("True") != std::string::npos) return io_error("'" + path + "': Fortran-order arrays are not supported");
  NpyArray a;
  size_t elem;
  if (descr == "<u2" || descr == "<V2" || descr == "|V2" || descr == "bfloat16" || descr == "<i2") { a.dtype = "u2"; elem = 2; }
  else if (descr == "|u1" || descr == "<u1" || descr == "|i1") { a.dtype = "u1"; elem = 1; }
  else if (descr == "<f4") { a.dtype = "f4"; elem = 4; }
  else if (descr == "<i4") { a.dtype = "i4"; elem = 4; }
  else return io_error("'" + path + "': unsupported .npy dtype '" + descr + "' (use u1, u2/bf16, f4 or i4)");
  std::stringstream ss(shape_s);
  std::string tok;
  int64_t count = 1;
  while (std::getline(ss, tok, ',')) {
    if (tok.find_first_not_of(" ") == std::string::npos) continue;
    a.shape.push_back(std::stoll(tok));
    count *= a.shape.back();
  }
  const size_t need = static_cast<size_t>(count) * elem;
  if (bytes.size() - off - hlen < need)
    return io_error("'" + path + "': data is shorter than its shape says (" + std::to_string(bytes.size() - off - hlen) +
                    " < " + std::to_string(need) + " bytes)");
  a.bytes.assign(bytes.begin() + off + hlen, bytes.begin() + off + hlen + need);
  return a;
}

Status write_npy(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
                 const void* data, size_t nbytes) {
  std::string descr = dtype == "u1" ? "|u1" : "<" + dtype;
  std::string shp = "(";
  for (size_t i = 0; i < shape.size(); ++i) shp += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  shp += ")";
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  out.append(static_cast<const char*>(data), nbytes);
  return write_file(path, out.data(), out.size());
}

// ---------------------------------------------------------------------------------------------
// Golden files
int64_t GoldenFile::Array::count() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Result<GoldenFile> GoldenFile::open(const std::string& manifest_path) {
  NVFP4_ASSIGN_OR_RETURN(std::string text, read_text(manifest_path));
  NVFP4_ASSIGN_OR_RETURN(Json m, Json::parse(text));
  const std::string dir = std::filesystem::path(manifest_path).parent_path().string();
  const std::string bin_path = (dir.empty() ? "" : dir + "/") + m["file"].as_string();
  NVFP4_ASSIGN_OR_RETURN(auto bin, read_file(bin_path));
  const std::string got = sha256_hex(bin.data(), bin.size());
  if (got != m["sha256"].as_string())
    return io_error("'" + bin_path + "' sha256 " + got + " differs from the manifest's " + m["sha256"].as_string());
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
    const size_t off = static_cast<size_t>(a["offset"].as_int());
    out.nbytes = static_cast<size_t>(a["nbytes"].as_int());
    if (off + out.nbytes > bin_->size()) return io_error("golden array '" + key + "' lies past the end of its file");
    out.data = bin_->data() + off;
    return out;
  }
  return io_error("golden file has no array '" + key + "'");
}

std::vector<std::string> GoldenFile::keys() const {
  std::vector<std::string> k;
  for (const Json& a : manifest_["arrays"].items()) k.push_back(a["key"].as_string());
  return k;
}

}  // namespace nvfp4
