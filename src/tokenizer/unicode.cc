// UTF-8 decoding with maximal-subpart replacement, and utf8proc-backed classes/normalization.
#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <cstdlib>

#include "core/error.h"

namespace oxyd::tokenizer {

size_t valid_utf8_len(std::string_view s, size_t pos) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const size_t n = s.size();
  uint8_t b = at(pos);
  if (b < 0x80) return 1;
  auto cont = [&](size_t i, uint8_t lo, uint8_t hi) { return i < n && at(i) >= lo && at(i) <= hi; };
  if (b >= 0xC2 && b <= 0xDF) return cont(pos + 1, 0x80, 0xBF) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    uint8_t lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    return cont(pos + 1, lo, hi) && cont(pos + 2, 0x80, 0xBF) ? 3 : 0;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    uint8_t lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    return cont(pos + 1, lo, hi) && cont(pos + 2, 0x80, 0xBF) && cont(pos + 3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// Length of the maximal valid prefix of an invalid sequence at pos (>= 1): the bytes replaced by
// one U+FFFD.
static size_t invalid_subpart_len(std::string_view s, size_t pos) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  uint8_t b = at(pos);
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) need = 1;
  else if (b >= 0xE0 && b <= 0xEF) need = 2, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) need = 3, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  else return 1;
  size_t i = pos + 1;
  for (size_t k = 0; k < need; ++k, ++i) {
    if (i >= s.size()) break;
    uint8_t c = at(i);
    uint8_t l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
    if (c < l || c > h) break;
  }
  return i - pos;
}

char32_t next_code_point(std::string_view s, size_t& pos) {
  size_t len = valid_utf8_len(s, pos);
  const auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  char32_t cp;
  switch (len) {
    case 1: cp = at(pos); break;
    case 2: cp = ((at(pos) & 0x1Fu) << 6) | (at(pos + 1) & 0x3Fu); break;
    case 3: cp = ((at(pos) & 0x0Fu) << 12) | ((at(pos + 1) & 0x3Fu) << 6) | (at(pos + 2) & 0x3Fu); break;
    case 4:
      cp = ((at(pos) & 0x07u) << 18) | ((at(pos + 1) & 0x3Fu) << 12) | ((at(pos + 2) & 0x3Fu) << 6) |
           (at(pos + 3) & 0x3Fu);
      break;
    default: pos += 1; return 0xFFFD;
  }
  pos += len;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) { ++i; continue; }
    size_t len = valid_utf8_len(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t len = valid_utf8_len(s, i);
    if (len) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      i += invalid_subpart_len(s, i);
    }
  }
  return out;
}

size_t last_char_len(std::string_view s) {
  for (size_t back = 1; back <= 4 && back <= s.size(); ++back) {
    size_t pos = s.size() - back;
    if ((static_cast<uint8_t>(s[pos]) & 0xC0) != 0x80) {
      return valid_utf8_len(s, pos) == back ? back : 0;
    }
  }
  return 0;
}

std::string normalize_form(std::string_view s, NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::NFC: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::NFD: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::NFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::NFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  // Pure ASCII is invariant under every form.
  bool ascii = true;
  for (char c : s) ascii &= static_cast<uint8_t>(c) < 0x80;
  if (ascii) return std::string(s);
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                    static_cast<utf8proc_ssize_t>(s.size()), &out,
                                    static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    throw_error(ErrorCode::INVALID_ARGUMENT,
                std::string("tokenizer: unicode normalization failed: ") + utf8proc_errmsg(n));
  }
  std::string result(reinterpret_cast<char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

static utf8proc_category_t cat(char32_t c) {
  return static_cast<utf8proc_category_t>(utf8proc_category(static_cast<utf8proc_int32_t>(c)));
}

bool is_whitespace(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_alphanumeric(char32_t c) {
  auto k = cat(c);
  return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) ||
         (k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO);
}
bool is_numeric(char32_t c) {
  auto k = cat(c);
  return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}
bool is_punctuation(char32_t c) {
  auto k = cat(c);
  return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}
bool is_mark_nonspacing(char32_t c) { return cat(c) == UTF8PROC_CATEGORY_MN; }
bool is_combining_mark(char32_t c) {
  auto k = cat(c);
  return k >= UTF8PROC_CATEGORY_MN && k <= UTF8PROC_CATEGORY_ME;
}
bool is_other(char32_t c) {
  auto k = cat(c);
  // Unassigned (Cn) code points do not count: the Rust tables tokenizers uses list none.
  return k >= UTF8PROC_CATEGORY_CC && k <= UTF8PROC_CATEGORY_CO;
}

void append_lowercase(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    return;
  }
  if (c == 0x130) {  // the one unconditional multi-char lowercase mapping
    out.append("i\xCC\x87");
    return;
  }
  append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

}  // namespace oxyd::tokenizer
