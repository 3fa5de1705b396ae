// Jinja lexer (see lexer.h). Mirrors jinja2.lexer's rules for the root, comment, block, variable
// and raw states with trim_blocks=True and lstrip_blocks=True.
#include "chat/jinja/lexer.h"

#include <cstring>

#include "chat/jinja/error.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {
namespace {

// jinja2's tokeniter: split on \r\n, \r or \n, rejoin with "\n", and drop one trailing line break
// (keep_trailing_newline=False).
std::string normalize_source(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(c);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : s_(std::move(src)) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < s_.size()) {
      size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit(Tok::DATA, s_.substr(pos_), pos_);
        pos_ = s_.size();
        break;
      }
      std::string text = s_.substr(pos_, tag - pos_);
      size_t text_pos = pos_;
      char kind = s_[tag + 1];  // '{', '%', '#'
      size_t p = tag + 2;
      char sign = (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) ? s_[p] : 0;
      size_t raw_body = kind == '%' ? match_raw_begin(tag) : std::string::npos;
      apply_lstrip(text, sign, kind != '{', line_starting);
      if (!text.empty()) emit(Tok::DATA, std::move(text), text_pos);
      if (raw_body != std::string::npos) {
        pos_ = raw_body;
        line_starting = lex_raw();
        continue;
      }
      pos_ = sign ? p + 1 : p;
      if (kind == '#') {
        line_starting = lex_comment(tag);
      } else {
        line_starting = lex_tag(kind == '%', tag);
      }
    }
    emit(Tok::END, "", s_.size());
    return std::move(toks_);
  }

 private:
  std::string s_;
  size_t pos_ = 0;
  std::vector<Token> toks_;

  [[noreturn]] void error(const std::string& msg, size_t at) {
    auto [line, col] = line_col(at);
    throw TemplateError(ErrorKind::SYNTAX,
                        msg + " (line " + std::to_string(line) + ", column " + std::to_string(col) + ")", line);
  }
  std::pair<int, int> line_col(size_t at) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return {line, col};
  }
  void emit(Tok t, std::string v, size_t at) {
    Token tok{t, std::move(v), 0, 0};
    // Line numbers are computed incrementally from the previous token.
    if (toks_.empty()) {
      last_at_ = 0;
      last_line_ = 1;
      last_col_ = 1;
    }
    for (size_t i = last_at_; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++last_line_;
        last_col_ = 1;
      } else {
        ++last_col_;
      }
    }
    last_at_ = at > last_at_ ? at : last_at_;
    tok.line = last_line_;
    tok.col = last_col_;
    toks_.push_back(std::move(tok));
  }
  size_t last_at_ = 0;
  int last_line_ = 1, last_col_ = 1;

  size_t find_tag(size_t from) const {
    size_t i = from;
    while (true) {
      i = s_.find('{', i);
      if (i == std::string::npos || i + 1 >= s_.size()) return std::string::npos;
      char c = s_[i + 1];
      if (c == '{' || c == '%' || c == '#') return i;
      ++i;
    }
  }
  static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

  // Python's str.rstrip() (Unicode whitespace).
  static void rstrip(std::string& t) { t = pystr::strip(t, nullptr, false, true); }

  void apply_lstrip(std::string& text, char sign, bool lstrip_kind, bool line_starting) {
    if (sign == '-') {
      rstrip(text);
    } else if (sign != '+' && lstrip_kind) {
      size_t nl = text.rfind('\n');
      size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting) && l_pos < text.size()) {
        std::string tail = text.substr(l_pos);
        if (pystr::strip(tail, nullptr, true, true).empty()) text.resize(l_pos);
      }
    }
  }

  // `{%[-+]?\s*raw\s*(-%}\s*|%})` at tag; returns the position after it, or npos.
  size_t match_raw_begin(size_t tag) const {
    size_t p = tag + 2;
    if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) ++p;
    while (p < s_.size() && is_ws(s_[p])) ++p;
    if (s_.compare(p, 3, "raw") != 0) return std::string::npos;
    p += 3;
    while (p < s_.size() && is_ws(s_[p])) ++p;
    if (s_.compare(p, 3, "-%}") == 0) {
      p += 3;
      while (p < s_.size() && is_ws(s_[p])) ++p;
      return p;
    }
    if (s_.compare(p, 2, "%}") == 0) return p + 2;
    return std::string::npos;
  }

  // Block end: `+%}` | `-%}\s*` | `%}\n?` at pos_; returns true and advances when matched.
  bool match_block_end(bool& ends_newline) {
    size_t p = pos_;
    if (s_.compare(p, 3, "+%}") == 0) {
      pos_ = p + 3;
      ends_newline = false;
      return true;
    }
    if (s_.compare(p, 3, "-%}") == 0) {
      p += 3;
      size_t q = p;
      skip_unicode_ws(q);
      pos_ = q;
      ends_newline = q > p && s_[q - 1] == '\n';
      return true;
    }
    if (s_.compare(p, 2, "%}") == 0) {
      pos_ = p + 2;
      ends_newline = false;
      if (pos_ < s_.size() && s_[pos_] == '\n') {
        ++pos_;
        ends_newline = true;
      }
      return true;
    }
    return false;
  }
  void skip_unicode_ws(size_t& q) const {
    while (q < s_.size()) {
      unsigned char c = s_[q];
      if (c < 0x80) {
        if (!pystr::is_space(c)) return;
        ++q;
        continue;
      }
      size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      std::vector<char32_t> cp = pystr::decode(std::string_view(s_).substr(q, len));
      if (cp.size() != 1 || !pystr::is_space(cp[0])) return;
      q += len;
    }
  }

  bool lex_comment(size_t tag) {
    size_t p = pos_;
    while (true) {
      size_t e = s_.find("#}", p);
      if (e == std::string::npos) error("Missing end of comment tag", tag);
      if (e > pos_ && (s_[e - 1] == '-' || s_[e - 1] == '+') && e - 1 >= pos_) {
        if (s_[e - 1] == '+') {
          pos_ = e + 2;
          return false;
        }
        size_t q = e + 2;
        skip_unicode_ws(q);
        bool nl = q > e + 2 && s_[q - 1] == '\n';
        pos_ = q;
        return nl;
      }
      pos_ = e + 2;
      if (pos_ < s_.size() && s_[pos_] == '\n') {
        ++pos_;
        return true;
      }
      return false;
    }
  }

  bool lex_raw() {
    // (.*?)({%(-|+|)\s*endraw\s*(+%}|-%}\s*|%}\n?))
    size_t p = pos_;
    while (true) {
      size_t t = s_.find("{%", p);
      if (t == std::string::npos) error("Missing end of raw directive", pos_);
      size_t q = t + 2;
      char sign = (q < s_.size() && (s_[q] == '-' || s_[q] == '+')) ? s_[q] : 0;
      if (sign) ++q;
      while (q < s_.size() && is_ws(s_[q])) ++q;
      if (s_.compare(q, 6, "endraw") != 0) {
        p = t + 2;
        continue;
      }
      q += 6;
      while (q < s_.size() && is_ws(s_[q])) ++q;
      size_t save = pos_;
      pos_ = q;
      bool nl = false;
      if (!match_block_end(nl)) {
        pos_ = save;
        p = t + 2;
        continue;
      }
      std::string text = s_.substr(save, t - save);
      bool line_starting = save == 0 || s_[save - 1] == '\n';
      apply_lstrip(text, sign, true, line_starting);
      if (!text.empty()) emit(Tok::DATA, std::move(text), save);
      return nl;
    }
  }

  bool lex_tag(bool block, size_t tag) {
    emit(block ? Tok::BLOCK_BEGIN : Tok::VAR_BEGIN, "", tag);
    int depth = 0;
    while (true) {
      if (pos_ >= s_.size()) error(block ? "Unexpected end of template, expected '%}'." : "Unexpected end of template, expected '}}'.", tag);
      if (depth == 0) {
        if (block) {
          size_t at = pos_;
          bool nl = false;
          if (match_block_end(nl)) {
            emit(Tok::BLOCK_END, "", at);
            return nl;
          }
        } else {
          size_t at = pos_;
          if (s_.compare(pos_, 3, "-}}") == 0) {
            size_t q = pos_ + 3;
            skip_unicode_ws(q);
            bool nl = q > pos_ + 3 && s_[q - 1] == '\n';
            pos_ = q;
            emit(Tok::VAR_END, "", at);
            return nl;
          }
          if (s_.compare(pos_, 2, "}}") == 0) {
            pos_ += 2;
            emit(Tok::VAR_END, "", at);
            return false;
          }
        }
      }
      char c = s_[pos_];
      if (is_ws(c)) {
        ++pos_;
        continue;
      }
      size_t start = pos_;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
        emit(Tok::NAME, s_.substr(start, pos_ - start), start);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(start);
      } else if (c == '\'' || c == '"') {
        lex_string(start);
      } else {
        static const char* kOps2[] = {"//", "**", "==", "!=", ">=", "<="};
        std::string op;
        for (const char* o : kOps2)
          if (s_.compare(pos_, 2, o) == 0) op = o;
        if (op.empty()) {
          if (!std::strchr("+-/*%~[](){}><=.:|,;", c)) error(std::string("unexpected char '") + c + "'", start);
          op = std::string(1, c);
        }
        if (op == "(" || op == "[" || op == "{") ++depth;
        if (op == ")" || op == "]" || op == "}") {
          if (depth == 0) error("unexpected '" + op + "'", start);
          --depth;
        }
        pos_ += op.size();
        emit(Tok::OP, op, start);
      }
    }
  }

  void lex_number(size_t start) {
    auto digits = [&](size_t& p) {
      size_t b = p;
      while (p < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[p])) ||
                               (s_[p] == '_' && p > b && p + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p + 1])))))
        ++p;
      return p > b;
    };
    size_t p = pos_;
    bool after_dot = start > 0 && s_[start - 1] == '.';
    if (s_[p] == '0' && p + 1 < s_.size() && std::strchr("bBoOxX", s_[p + 1])) {
      int base = std::tolower(s_[p + 1]) == 'b' ? 2 : std::tolower(s_[p + 1]) == 'o' ? 8 : 16;
      p += 2;
      size_t b = p;
      while (p < s_.size() && (std::isxdigit(static_cast<unsigned char>(s_[p])) || s_[p] == '_')) ++p;
      std::string txt;
      for (size_t k = b; k < p; ++k)
        if (s_[k] != '_') txt.push_back(s_[k]);
      if (txt.empty()) error("invalid integer literal", start);
      unsigned long long v = 0;
      for (char ch : txt) {
        int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : std::tolower(ch) - 'a' + 10;
        if (d >= base) error("invalid integer literal", start);
        if (v > (~0ULL >> 5)) error("integer literal too large", start);
        v = v * base + d;
      }
      pos_ = p;
      emit(Tok::INT, std::to_string(v), start);
      return;
    }
    size_t int_end = p;
    digits(p);
    bool is_float = false;
    if (!after_dot && p + 1 < s_.size() && s_[p] == '.' && std::isdigit(static_cast<unsigned char>(s_[p + 1]))) {
      ++p;
      digits(p);
      is_float = true;
    }
    if (!after_dot && p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
      size_t q = p + 1;
      if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
      if (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q]))) {
        digits(q);
        p = q;
        is_float = true;
      }
    }
    if (!is_float && s_[int_end] == '0') {  // jinja2's integer rule 0(_?0)*: "05" lexes as 0 then 5
      p = int_end + 1;
      while (p < s_.size() && (s_[p] == '0' || (s_[p] == '_' && p + 1 < s_.size() && s_[p + 1] == '0'))) ++p;
    }
    std::string txt;
    for (size_t k = pos_; k < p; ++k)
      if (s_[k] != '_') txt.push_back(s_[k]);
    pos_ = p;
    emit(is_float ? Tok::FLOAT : Tok::INT, txt, start);
  }

  void lex_string(size_t start) {
    char q = s_[pos_];
    size_t p = pos_ + 1;
    while (p < s_.size() && s_[p] != q) {
      if (s_[p] == '\\') ++p;
      ++p;
    }
    if (p >= s_.size()) error("unexpected char '" + std::string(1, q) + "'", start);
    std::string_view body(s_.data() + pos_ + 1, p - pos_ - 1);
    pos_ = p + 1;
    emit(Tok::STRING, unescape(body, start), start);
  }

  // Python's "unicode-escape" codec, which jinja2 applies to string literals.
  std::string unescape(std::string_view b, size_t at) {
    std::string out;
    out.reserve(b.size());
    for (size_t i = 0; i < b.size(); ++i) {
      char c = b[i];
      if (c != '\\' || i + 1 >= b.size()) {
        out.push_back(c);
        continue;
      }
      char e = b[++i];
      auto hex = [&](int n) -> char32_t {
        char32_t v = 0;
        for (int k = 0; k < n; ++k) {
          if (i + 1 >= b.size() || !std::isxdigit(static_cast<unsigned char>(b[i + 1])))
            error(std::string("'unicodeescape' codec can't decode bytes: truncated \\") + e + " escape", at);
          char h = b[++i];
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
        }
        return v;
      };
      switch (e) {
        case '\n': break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case 'x': pystr::encode(hex(2), out); break;
        case 'u': pystr::encode(hex(4), out); break;
        case 'U': {
          char32_t v = hex(8);
          if (v > 0x10FFFF) error("'unicodeescape' codec can't decode bytes: illegal Unicode character", at);
          pystr::encode(v, out);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int k = 0; k < 2 && i + 1 < b.size() && b[i + 1] >= '0' && b[i + 1] <= '7'; ++k) v = v * 8 + (b[++i] - '0');
            pystr::encode(static_cast<char32_t>(v), out);
          } else {
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    return out;
  }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize_source(source)).run(); }

}  // namespace oxyd::chat::jinja
