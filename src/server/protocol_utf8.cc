// UTF-8 well-formedness (Unicode 15, Table 3-7) and U+FFFD substitution of maximal subparts
// (Unicode §3.9 "U+FFFD Substitution of Maximal Subparts", what Python's errors="replace" does).
// Token pieces from byte-level/byte-fallback vocabularies are often partial characters; every
// string we put into a response passes through here so the JSON we send is always valid.
#include "server/protocol_detail.h"

namespace oxyd::server::protocol::detail {
namespace {

// Length of the well-formed sequence starting at s[i] (> 0), or -(length of the maximal ill-formed
// subpart) (< 0) when it is not well formed.
int scan_one(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  int need;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return -1;  // 80..C1, F5..FF never start a sequence
  }
  for (int k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return -k;
    const uint8_t x = b(i + k);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (x < l || x > h) return -k;
  }
  return need + 1;
}

}  // namespace

size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = scan_one(s, i);
    if (n < 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string sanitize_utf8(std::string_view s) {
  if (invalid_utf8_at(s) == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const int n = scan_one(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += -n;
    }
  }
  return out;
}

int64_t utf8_length(std::string_view s) {
  int64_t n = 0;
  for (const char c : s) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace oxyd::server::protocol::detail
