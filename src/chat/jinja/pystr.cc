// Python str semantics on UTF-8 (see pystr.h).
#include "chat/jinja/pystr.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace oxyd::chat::jinja::pystr {

std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      out.push_back(c);
      ++i;
      continue;
    }
    int len = c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (c >= 0xF8) len = 0;
    char32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (ok && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))) ok = false;
    if (!ok) {
      out.push_back(0xDC00 + c);  // surrogateescape
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void encode(char32_t c, std::string& out) {
  if (c >= 0xDC80 && c <= 0xDCFF) {  // surrogateescape back to the raw byte
    out.push_back(static_cast<char>(c - 0xDC00));
  } else if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string out;
  out.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) encode(cps[i], out);
  return out;
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

size_t length(std::string_view s) { return is_ascii(s) ? s.size() : decode(s).size(); }

bool is_space(char32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Simple one-to-one case pairs for the ranges named in the header.
char32_t to_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c == 0xB5) return 0x39C;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x137) return c & ~1u;
  if (c >= 0x139 && c <= 0x148) return (c & 1) ? c : c - 1;
  if (c >= 0x14A && c <= 0x177) return c & ~1u;
  if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c : c - 1;
  if (c == 0x17F) return 'S';
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x137) return c | 1u;
  if (c >= 0x139 && c <= 0x148) return (c & 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return c | 1u;
  if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c + 1 : c;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool is_cased_upper(char32_t c) { return to_lower(c) != c; }
bool is_cased_lower(char32_t c) { return to_upper(c) != c || c == 0xDF; }
bool is_alpha(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return is_cased_upper(c) || is_cased_lower(c) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3040 && c <= 0x30FF) ||
         (c >= 0xAC00 && c <= 0xD7A3);
}
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_alnum(char32_t c) { return is_alpha(c) || is_digit(c); }

static std::string map_chars(std::string_view s, char32_t (*f)(char32_t)) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(f(static_cast<unsigned char>(c)));
    return out;
  }
  std::string out;
  out.reserve(s.size());
  for (char32_t c : decode(s)) encode(f(c), out);
  return out;
}

std::string upper(std::string_view s) {
  if (s.find("\xC3\x9F") == std::string_view::npos) return map_chars(s, to_upper);
  std::string out;  // U+00DF sharp s upper-cases to "SS" in Python
  for (char32_t c : decode(s)) {
    if (c == 0xDF) out += "SS";
    else encode(to_upper(c), out);
  }
  return out;
}
std::string lower(std::string_view s) { return map_chars(s, to_lower); }

std::string title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t c : decode(s)) {
    char32_t m = prev_cased ? to_lower(c) : to_upper(c);
    encode(m, out);
    prev_cased = is_cased_upper(c) || is_cased_lower(c);
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (char32_t c : decode(s)) {
    encode(first ? to_upper(c) : to_lower(c), out);
    first = false;
  }
  return out;
}

std::string strip(std::string_view s, const std::string* chars, bool left, bool right) {
  if (is_ascii(s) && (!chars || is_ascii(*chars))) {
    auto drop = [&](unsigned char c) { return chars ? chars->find(static_cast<char>(c)) != std::string::npos : is_space(c); };
    size_t b = 0, e = s.size();
    if (left)
      while (b < e && drop(s[b])) ++b;
    if (right)
      while (e > b && drop(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
  }
  std::vector<char32_t> cps = decode(s);
  std::vector<char32_t> set;
  if (chars) set = decode(*chars);
  auto drop = [&](char32_t c) {
    if (!chars) return is_space(c);
    for (char32_t x : set)
      if (x == c) return true;
    return false;
  };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && drop(cps[b])) ++b;
  if (right)
    while (e > b && drop(cps[e - 1])) --e;
  return encode(cps, b, e);
}

// Whitespace splitting works on code points; separator splitting is plain byte search (UTF-8 safe).
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t f = s.find(*sep, pos);
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  std::vector<char32_t> cps = decode(s);
  size_t i = 0, n = cps.size();
  while (i < n) {
    while (i < n && is_space(cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      size_t e = n;
      while (e > i && is_space(cps[e - 1])) --e;
      out.push_back(encode(cps, i, e));
      return out;
    }
    size_t j = i;
    while (j < n && !is_space(cps[j])) ++j;
    out.push_back(encode(cps, i, j));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t f = s.rfind(*sep, end - sep->size());
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
      end = f;
    }
    out.emplace_back(s.substr(0, end));
  } else {
    std::vector<char32_t> cps = decode(s);
    size_t e = cps.size();
    while (e > 0) {
      while (e > 0 && is_space(cps[e - 1])) --e;
      if (e == 0) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
        size_t b = 0;
        while (b < e && is_space(cps[b])) ++b;
        out.push_back(encode(cps, b, e));
        break;
      }
      size_t b = e;
      while (b > 0 && !is_space(cps[b - 1])) --b;
      out.push_back(encode(cps, b, e));
      e = b;
    }
  }
  return std::vector<std::string>(out.rbegin(), out.rend());
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  std::vector<char32_t> cps = decode(s);
  size_t i = 0, start = 0, n = cps.size();
  while (i < n) {
    char32_t c = cps[i];
    bool nl = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
              c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!nl) {
      ++i;
      continue;
    }
    size_t eol = i;
    ++i;
    if (c == '\r' && i < n && cps[i] == '\n') ++i;
    out.push_back(encode(cps, start, keepends ? i : eol));
    start = i;
  }
  if (start < n) out.push_back(encode(cps, start, n));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts repl between every code point
    std::vector<char32_t> cps = decode(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i < cps.size()) encode(cps[i], out);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t f = s.find(old, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out.append(repl);
    pos = f + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

static bool printable(char32_t c) {
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  if (c <= 0xA0 || c == 0xAD) return false;
  if (c == 0x1680 || c == 0x180E || c == 0x061C || c == 0x3000 || c == 0xFEFF) return false;
  if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F)) return false;
  if ((c >= 0xD800 && c <= 0xDFFF) || (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFFF9 && c <= 0xFFFB)) return false;
  if (c == 0xFFFE || c == 0xFFFF || c >= 0xF0000) return false;
  return true;
}

void append_repr(std::string& out, std::string_view s) {
  bool has_sq = s.find('\'') != std::string_view::npos, has_dq = s.find('"') != std::string_view::npos;
  char q = (has_sq && !has_dq) ? '"' : '\'';
  out.push_back(q);
  char buf[16];
  auto emit = [&](char32_t c) {
    if (c == static_cast<char32_t>(q) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (printable(c)) {
      encode(c, out);
    } else {
      if (c < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
      out += buf;
    }
  };
  if (is_ascii(s)) {
    for (char c : s) emit(static_cast<unsigned char>(c));
  } else {
    for (char32_t c : decode(s)) emit(c);
  }
  out.push_back(q);
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // like "-1.2345e+02"
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  std::string mant = sci.substr(0, e);
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  std::string out = neg ? "-" : "";
  if (exp >= -5 + 1 && exp < 16) {  // Python 'r' repr: fixed for -4 <= exp < 16
    if (exp >= 0) {
      if (static_cast<int>(digits.size()) <= exp + 1) {
        out += digits + std::string(exp + 1 - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
      }
    } else {
      out += "0." + std::string(-exp - 1, '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out += buf;
  return out;
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out.push_back('"');
  char buf[16];
  auto esc = [&](char32_t c) -> bool {
    switch (c) {
      case '"': out += "\\\""; return true;
      case '\\': out += "\\\\"; return true;
      case '\n': out += "\\n"; return true;
      case '\r': out += "\\r"; return true;
      case '\t': out += "\\t"; return true;
      case '\b': out += "\\b"; return true;
      case '\f': out += "\\f"; return true;
      default: break;
    }
    if (c < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
      return true;
    }
    return false;
  };
  if (is_ascii(s)) {
    size_t run = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      unsigned char c = s[i];
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out.append(s.substr(run, i - run));
      esc(c);
      run = i + 1;
    }
    out.append(s.substr(run));
  } else {
    for (char32_t c : decode(s)) {
      if (esc(c)) continue;
      if (ensure_ascii && c >= 0x80) {
        if (c >= 0x10000) {
          char32_t v = c - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                        static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        } else {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        }
        out += buf;
      } else {
        encode(c, out);
      }
    }
  }
  out.push_back('"');
}

}  // namespace oxyd::chat::jinja::pystr
