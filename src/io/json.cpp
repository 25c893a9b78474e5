// JSON value, parser and writer (RFC 8259 subset that covers manifests and reports).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <charconv>
#include <string_view>

#include "nvfp4/io.hpp"

namespace nvfp4 {

namespace {
// Objects up to this many members are searched linearly; past it they keep a key index.
constexpr size_t kIndexFrom = 16;
}  // namespace

Json& Json::set(const std::string& k, Json v) {
  type_ = Type::kObject;
  if (const Json* old = find(k)) { *const_cast<Json*>(old) = std::move(v); return *this; }
  append(k, std::move(v));
  return *this;
}

void Json::append(std::string k, Json v) {
  if (index_.map) index_.map->emplace(k, obj_.size());
  obj_.emplace_back(std::move(k), std::move(v));
  if (!index_.map && obj_.size() > kIndexFrom) {
    index_.map = std::make_unique<std::unordered_map<std::string, size_t>>();
    index_.map->reserve(obj_.size() * 2);
    for (size_t i = 0; i < obj_.size(); ++i) index_.map->emplace(obj_[i].first, i);
  }
}

const Json* Json::find(std::string_view k) const {
  if (index_.map) {
    auto it = index_.map->find(std::string(k));
    return it == index_.map->end() ? nullptr : &obj_[it->second].second;
  }
  for (auto& kv : obj_)
    if (kv.first == k) return &kv.second;
  return nullptr;
}

const Json& Json::operator[](std::string_view k) const {
  static const Json kNull;
  const Json* j = find(k);
  return j ? *j : kNull;
}

namespace {
void escape(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void number(std::string& out, double v) {
  if (!std::isfinite(v)) { out += "null"; return; }
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    out += buf;
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips every double
  out += buf;
}
}  // namespace

void Json::dump_to(std::string& out, int indent, int depth) const {
  // A newline and the indentation of a level (built by append: GCC 12's -Wrestrict misfires on
  // "literal" + std::string at -O3).
  auto line = [&](int level) {
    return indent > 0 ? std::string(1, '\n').append(static_cast<size_t>(indent * level), ' ') : std::string();
  };
  const std::string nl = line(depth + 1), nl_end = line(depth);
  switch (type_) {
    case Type::kNull: out += "null"; break;
    case Type::kBool: out += b_ ? "true" : "false"; break;
    case Type::kNumber:
      if (int_ == Int::kSigned) out += std::to_string(static_cast<int64_t>(bits_));
      else if (int_ == Int::kUnsigned) out += std::to_string(bits_);
      else number(out, n_);
      break;
    case Type::kString: escape(out, s_); break;
    case Type::kArray: {
      // Arrays of scalars stay on one line: shapes and coordinates read better that way.
      bool flat = true;
      for (auto& v : arr_) flat = flat && v.type_ != Type::kArray && v.type_ != Type::kObject;
      out += '[';
      for (size_t i = 0; i < arr_.size(); ++i) {
        if (i) out += flat ? ", " : ",";
        if (!flat) out += nl;
        arr_[i].dump_to(out, indent, depth + 1);
      }
      if (!flat && !arr_.empty()) out += nl_end;
      out += ']';
      break;
    }
    case Type::kObject: {
      out += '{';
      for (size_t i = 0; i < obj_.size(); ++i) {
        if (i) out += ',';
        out += nl;
        escape(out, obj_[i].first);
        out += indent > 0 ? ": " : ":";
        obj_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!obj_.empty()) out += nl_end;
      out += '}';
      break;
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

namespace detail {
struct JsonParser {
  std::string_view s;
  size_t i = 0;
  std::string err;

  void ws() { while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i; }
  bool fail(const std::string& m) { if (err.empty()) err = m + " at offset " + std::to_string(i); return false; }

  // Four hex digits at i (consumed) into v.
  bool hex4(unsigned& v) {
    if (i + 4 > s.size()) return false;
    v = 0;
    for (int d = 0; d < 4; ++d) {
      const char h = s[i + d];
      if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
      v = v * 16 + static_cast<unsigned>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    i += 4;
    return true;
  }
  static std::string hex(unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", v);
    return b;
  }

  bool str(std::string& out) {
    if (i >= s.size() || s[i] != '"') return fail("expected string");
    ++i;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c == '\\') {
        if (i >= s.size()) return fail("bad escape");
        char e = s[i++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            unsigned cp = 0;
            if (!hex4(cp)) return fail("bad \\u escape");
            // Characters past U+FFFF come as a UTF-16 pair (what Python's json.dumps writes for an
            // emoji): one code point, four UTF-8 bytes. Half a pair encodes nothing.
            if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("unpaired low surrogate \\u" + hex(cp));
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              unsigned lo = 0;
              if (s.substr(i, 2) != "\\u") return fail("unpaired high surrogate \\u" + hex(cp));
              i += 2;
              if (!hex4(lo)) return fail("bad \\u escape");
              if (lo < 0xDC00 || lo > 0xDFFF) return fail("high surrogate \\u" + hex(cp) + " followed by \\u" + hex(lo));
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp < 0x80) out += static_cast<char>(cp);
            else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
            else {
              out += static_cast<char>(0xF0 | (cp >> 18));
              out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            }
            break;
          }
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    if (i >= s.size()) return fail("unterminated string");
    ++i;
    return true;
  }

  bool value(Json& out, int depth) {
    if (depth > 64) return fail("nesting too deep");
    ws();
    if (i >= s.size()) return fail("unexpected end");
    char c = s[i];
    if (c == '{') {
      ++i;
      out = Json::object();
      ws();
      if (i < s.size() && s[i] == '}') { ++i; return true; }
      for (;;) {
        ws();
        std::string k;
        if (!str(k)) return false;
        if (out.find(k)) return fail("duplicate key '" + printable(k) + "'");
        ws();
        if (i >= s.size() || s[i] != ':') return fail("expected ':'");
        ++i;
        Json v;
        if (!value(v, depth + 1)) return false;
        out.append(std::move(k), std::move(v));
        ws();
        if (i < s.size() && s[i] == ',') { ++i; continue; }
        if (i < s.size() && s[i] == '}') { ++i; return true; }
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++i;
      out = Json::array();
      ws();
      if (i < s.size() && s[i] == ']') { ++i; return true; }
      for (;;) {
        Json v;
        if (!value(v, depth + 1)) return false;
        out.push(std::move(v));
        ws();
        if (i < s.size() && s[i] == ',') { ++i; continue; }
        if (i < s.size() && s[i] == ']') { ++i; return true; }
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      std::string v;
      if (!str(v)) return false;
      out = Json(std::move(v));
      return true;
    }
    if (s.substr(i, 4) == "true") { i += 4; out = Json(true); return true; }
    if (s.substr(i, 5) == "false") { i += 5; out = Json(false); return true; }
    if (s.substr(i, 4) == "null") { i += 4; out = Json(); return true; }
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == '+' ||
                            s[j] == '.' || s[j] == 'e' || s[j] == 'E'))
      ++j;
    if (j == i) return fail("unexpected character");
    std::string num(s.substr(i, j - i));
    char* end = nullptr;
    double v = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size()) return fail("bad number");
    i = j;
    out = Json(v);
    // Digits alone (a seed, a byte count) keep their exact value when it fits 64 bits; -0 stays
    // the double it prints as.
    if (num.find_first_of(".eE+") == std::string::npos) {
      const char *b = num.data(), *e = num.data() + num.size();
      int64_t si = 0;
      uint64_t ui = 0;
      if (num[0] == '-') {
        const auto r = std::from_chars(b, e, si);
        if (r.ec == std::errc() && r.ptr == e && si != 0) out = Json(si);
      } else {
        const auto r = std::from_chars(b, e, ui);
        if (r.ec == std::errc() && r.ptr == e) out = Json(ui);
      }
    }
    return true;
  }
};
}  // namespace detail

Result<Json> Json::parse(std::string_view text) {
  detail::JsonParser p{text, 0, {}};
  Json out;
  if (!p.value(out, 0)) return invalid_argument("invalid JSON: " + p.err);
  p.ws();
  if (p.i != text.size()) return invalid_argument("invalid JSON: trailing characters at offset " + std::to_string(p.i));
  return out;
}

}  // namespace nvfp4
