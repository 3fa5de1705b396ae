// llama.cpp's pre-tokenizer table and split engine, reimplemented from its documented behaviour
// (src/llama-vocab.cpp: the pre-type per tokenizer.ggml.pre value and the expressions per pre-type;
// src/unicode.cpp: how unicode_regex_split runs them). Per expression, llama.cpp either
//  * runs a hand-written splitter equal to the regex (GPT-2, Llama 3, Qwen2, Qwen3.5 patterns, the
//    newline-run pattern): we run the same regex with Unicode classes (Regex::Syntax::UNICODE);
//  * runs a hand-written splitter with its own rules (Kimi-K2, the AFMoE / Tiny Aya digit groups):
//    KimiK2Matcher and DigitGroupMatcher below, rule for rule;
//  * runs std::regex on a "collapsed" copy of the text when the expression names a Unicode category
//    (\p{L}, \p{N}, \p{P}, \p{M}, \p{S}, \p{Lu}...): every code point >= 128 becomes one byte for its
//    category (0xD1 number, 0xD2 letter, 0xD3 punctuation, 0xD4 mark, 0xD5 symbol, 0x0B whitespace,
//    0xD0 anything else) and \p{X} becomes [<that byte><the ASCII members of X>]: CollapsedMatcher;
//  * runs std::wregex on the code points otherwise, non-ASCII whitespace turned into U+000B first
//    (\s is ASCII there): WideMatcher.
// std::regex's ECMAScript grammar and PCRE2 agree on everything these expressions use, once `$`
// means the end of the text only.
#include "tokenizer/llamacpp_pre.h"

#include <utf8proc.h>

#include <map>
#include <memory>

#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {

// --- expressions (llama.cpp's strings; the first five have hand-written splitters there) ---------
#define OXYD_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* kLlama3 = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kQwen2 = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kQwen35 = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kNewlineRuns = "[^\\n]+|[\\n]+";
const char* kKimiK2 = "\\p{Han}+";
const char* kAfmoeDigits = "\\p{AFMoE_digits}";
const char* kTinyAyaDigits = "\\d{1,3}(?=(?:\\d{3})*\\b)";

const char* kJais2 = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|"
    "\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|"
    "\\s{1,2}(?!\\S)|\\s{1}";
const char* kDeepseekLlmLetters = "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+";
const char* kDeepseekLlmPunct = "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+";
const char* kCjkHangul = "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+";
const char* kCjkKana = "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+";
const char* kDeepseekV3Words =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
    "[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const char* kSparkWords =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
    "|[\r\n]|\\s+(?!\\S)|\\s+";
const char* kYoutuCjk = "[\uAC00-\uD7A3\u3131-\u318E]+|[\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F\uFE30-\uFE4F]+|[\u3105-\u312F]+|[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+";
#define OXYD_CASED_WORDS(UPPER, LOWER, CONTR)                                                    \
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER "*" LOWER "+" CONTR "|[^\\r\\n\\p{L}\\p{N}]?" UPPER "+" LOWER \
  "*" CONTR
#define OXYD_UPPER_CLASS "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define OXYD_LOWER_CLASS "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"
const char* kYoutuWords = OXYD_CASED_WORDS(OXYD_UPPER_CLASS, OXYD_LOWER_CLASS, OXYD_CONTRACTIONS "?")
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kTinyAyaWords = OXYD_CASED_WORDS(OXYD_UPPER_CLASS, OXYD_LOWER_CLASS, OXYD_CONTRACTIONS "?")
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
#define OXYD_LA_UPPER "((?=[\\p{L}])([^a-z]))"
#define OXYD_LA_LOWER "((?=[\\p{L}])([^A-Z]))"
const char* kTekken = OXYD_CASED_WORDS(OXYD_LA_UPPER, OXYD_LA_LOWER, "")
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kGpt4o = OXYD_CASED_WORDS(OXYD_LA_UPPER, OXYD_LA_LOWER, OXYD_CONTRACTIONS "?")
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// gpt-4o's pattern as tokenizer.json has it (gpt-oss, Llama 4): llama.cpp's rewrite above, run on its
// collapsed text, cannot tell upper from lower case beyond ASCII.
const char* kGpt4oOriginal =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kGraniteEmbMulti =
    OXYD_CASED_WORDS("((?=[\\p{L}\\p{M}])([^a-z]))", "((?=[\\p{L}\\p{M}])([^A-Z]))", OXYD_CONTRACTIONS "?")
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kDeepseekCoderLetters = "\\s?\\p{L}+";
const char* kDeepseekCoderPunct = "\\s?\\p{P}+";
const char* kFalconPunct = "[\\p{P}\\$\\+<=>\\^~\\|`]+";
const char* kDefaultPunct = "[\\p{P}\\$\\+<=>\\^~\\|]+";
const char* kThreeDigits = "[0-9][0-9][0-9]";
const char* kBloom = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+";
const char* kBailing =
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char* kSeedCoder = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kUfakzeka =
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* kAfmoeCjk = "[\u4E00-\u9FFF\u3400-\u4DBF\u8C48-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-\u2FDF\u0E40-\u0E7F\u0E80-\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-\uD7AF\u1100-\u11FF]+";
const char* kExaoneMoe = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|"
    "\\s+(?!\\S)|\\s+";
const char* kMinicpm5 = OXYD_CONTRACTIONS
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// --- llama.cpp's character classes ---------------------------------------------------------------
// White_Space, as llama.cpp lists it.
bool ws(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

enum Cat : unsigned char { OTHER = 0xD0, NUMBER = 0xD1, LETTER = 0xD2, PUNCT = 0xD3, MARK = 0xD4, SYMBOL = 0xD5 };

Cat category(char32_t c) {
  if (c > 0x10FFFF) return OTHER;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: return LETTER;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: return NUMBER;
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return PUNCT;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: return MARK;
    case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO: return SYMBOL;
    default: return OTHER;
  }
}
bool is_letter(char32_t c) { return category(c) == LETTER; }
bool is_number(char32_t c) { return category(c) == NUMBER; }

// Code points of `text` with their byte offsets (offs has one more entry: text.size()).
void decode(std::string_view text, std::vector<char32_t>& cps, std::vector<size_t>& offs) {
  cps.clear();
  offs.clear();
  for (size_t i = 0; i < text.size();) {
    offs.push_back(i);
    cps.push_back(next_code_point(text, i));
  }
  offs.push_back(text.size());
}

// --- matchers --------------------------------------------------------------------------------------
class CollapsedMatcher : public Matcher {
 public:
  CollapsedMatcher(const std::string& expr, const std::string& where)
      : re_(collapse_expr(expr), where, Regex::Syntax::BYTES) {}
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const override {
    std::vector<char32_t> cps;
    std::vector<size_t> offs;
    decode(text, cps, offs);
    std::string col(cps.size(), '\0');
    for (size_t k = 0; k < cps.size(); ++k) {
      const char32_t c = cps[k];
      col[k] = static_cast<char>(c < 128 ? c : ws(c) ? 0x0B : category(c));
    }
    std::vector<std::pair<size_t, size_t>> m;
    re_.find_all(col, m);
    for (auto [b, e] : m) out.emplace_back(offs[b], offs[e]);
  }

 private:
  // \p{X} -> [<category byte><ASCII members>], without the brackets inside a class.
  static std::string collapse_expr(const std::string& re) {
    static const std::map<std::string, std::pair<char, const char*>> kClasses = {
        {"N", {char(NUMBER), "0-9"}},
        {"L", {char(LETTER), "A-Za-z"}},
        {"Lu", {char(LETTER), "A-Za-z"}},
        {"Ll", {char(LETTER), "A-Za-z"}},
        {"Lt", {char(LETTER), "A-Za-z"}},
        {"Lm", {char(LETTER), "A-Za-z"}},
        {"Lo", {char(LETTER), "A-Za-z"}},
        {"P", {char(PUNCT), "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"}},
        {"M", {char(MARK), ""}},
        {"S", {char(SYMBOL), "\\$\\+<->\\^`\\|~"}},
    };
    std::string out;
    bool inside = false;
    for (size_t i = 0; i < re.size(); ++i) {
      const char c = re[i];
      if (c == '[' && (i == 0 || re[i - 1] != '\\')) {
        inside = true;
      } else if (inside && c == ']' && re[i - 1] != '\\') {
        inside = false;
      } else if (c == '\\' && i + 3 < re.size() && re[i + 1] == 'p' && re[i + 2] == '{') {
        const size_t close = re.find('}', i + 3);
        auto it = close == std::string::npos ? kClasses.end() : kClasses.find(re.substr(i + 3, close - i - 3));
        if (it != kClasses.end()) {
          if (!inside) out += '[';
          out += it->second.first;
          out += it->second.second;
          if (!inside) out += ']';
          i = close;
          continue;
        }
      }
      out += c;
    }
    return out;
  }
  Regex re_;
};

class WideMatcher : public Matcher {
 public:
  WideMatcher(const std::string& expr, const std::string& where)
      : re_(expr, where, Regex::Syntax::UTF8_ASCII_CLASSES) {}
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const override {
    std::string t;
    t.reserve(text.size());
    std::vector<size_t> orig(text.size() + 1, 0);  // byte offset in t -> byte offset in text
    for (size_t i = 0; i < text.size();) {
      const size_t start = i;
      const char32_t c = next_code_point(text, i);
      orig[t.size()] = start;
      if (c > 0x7F && ws(c)) t.push_back('\x0B');
      else t.append(text.substr(start, i - start));
    }
    orig[t.size()] = text.size();
    std::vector<std::pair<size_t, size_t>> m;
    re_.find_all(t, m);
    for (auto [b, e] : m) out.emplace_back(orig[b], orig[e]);
  }

 private:
  Regex re_;
};

bool is_han(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0x2CEB0 && c <= 0x2EBEF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Kimi-K2: Han runs, then the gpt-4o-like word rules with Han excluded from letters (llama.cpp's
// splitter treats \p{M} as not a letter and case as irrelevant, as here).
class KimiK2Matcher : public Matcher {
 public:
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const override {
    std::vector<char32_t> cp;
    std::vector<size_t> offs;
    decode(text, cp, offs);
    const size_t n = cp.size();
    auto at = [&](size_t p) -> char32_t { return p < n ? cp[p] : 0xFFFFFFFF; };
    auto in = [&](size_t p) { return p < n; };
    auto letter = [&](size_t p) { return in(p) && is_letter(cp[p]) && !is_han(cp[p]); };
    auto lower = [](char32_t c) { return c <= 0x10FFFF ? static_cast<char32_t>(utf8proc_tolower(c)) : c; };
    size_t prev = 0;
    auto emit = [&](size_t end) {
      if (end > prev) out.emplace_back(offs[prev], offs[end]);
      prev = end;
    };
    for (size_t pos = 0; pos < n;) {
      const char32_t c = cp[pos];
      if (is_han(c)) {
        while (in(pos) && is_han(cp[pos])) ++pos;
        emit(pos);
        continue;
      }
      const bool lead_ok = !(c == '\r' || c == '\n' || is_letter(c) || is_number(c));
      if (letter(pos) || (lead_ok && letter(pos + 1))) {
        const size_t save = pos;
        if (lead_ok) ++pos;
        while (letter(pos)) ++pos;
        if (pos > save + (lead_ok ? 1 : 0)) {
          if (at(pos) == '\'' && pos + 1 < n) {
            const char32_t a = lower(at(pos + 1));
            if (a == 's' || a == 't' || a == 'm' || a == 'd') {
              pos += 2;
            } else if (pos + 2 < n) {
              const char32_t b = lower(at(pos + 2));
              if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) pos += 3;
            }
          }
          emit(pos);
          continue;
        }
        pos = save;
      }
      if (is_number(c)) {
        size_t ini = pos;
        while (in(pos) && is_number(cp[pos])) {
          if (++pos - ini >= 3) {
            emit(pos);
            ini = pos;
          }
        }
        emit(pos);
        continue;
      }
      // " ?[^\s\p{L}\p{N}]+[\r\n]*"
      const size_t q = c == ' ' ? pos + 1 : pos;
      auto other = [&](size_t p) { return in(p) && !ws(cp[p]) && !is_letter(cp[p]) && !is_number(cp[p]); };
      if (other(q)) {
        pos = q;
        while (other(pos)) ++pos;
        while (at(pos) == '\r' || at(pos) == '\n') ++pos;
        emit(pos);
        continue;
      }
      size_t nws = 0, last_nl = 0;
      while (in(pos + nws) && ws(cp[pos + nws])) {
        if (cp[pos + nws] == '\r' || cp[pos + nws] == '\n') last_nl = pos + nws + 1;
        ++nws;
      }
      if (last_nl > 0) {
        pos = last_nl;
      } else if (nws > 1 && in(pos + nws)) {
        pos += nws - 1;
      } else if (nws > 0) {
        pos += nws;
      } else {
        ++pos;
      }
      emit(pos);
    }
  }
};

// AFMoE / Tiny Aya digits: a run of numbers is cut into groups of three from the right; the text
// before a run goes with its first group, as llama.cpp's splitter does.
class DigitGroupMatcher : public Matcher {
 public:
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const override {
    std::vector<char32_t> cp;
    std::vector<size_t> offs;
    decode(text, cp, offs);
    const size_t n = cp.size();
    size_t prev = 0;
    auto emit = [&](size_t end) {
      if (end > prev) out.emplace_back(offs[prev], offs[end]);
      prev = end;
    };
    for (size_t pos = 0; pos < n;) {
      if (!is_number(cp[pos])) {
        ++pos;
        continue;
      }
      const size_t start = pos;
      while (pos < n && is_number(cp[pos])) ++pos;
      size_t cur = start + (pos - start) % 3;
      if (cur > start) emit(cur);
      for (; cur < pos; cur += 3) emit(cur + 3);
    }
    emit(n);
  }
};

// --- the table ---------------------------------------------------------------------------------------
struct Entry {
  std::vector<const char*> names;
  LlamaCppPre pre;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = [] {
    auto P = [](std::vector<const char*> exprs) {
      LlamaCppPre p;
      p.exprs = std::move(exprs);
      return p;
    };
    std::vector<Entry> v;
    auto add = [&](std::vector<const char*> names, LlamaCppPre p) { v.push_back({std::move(names), std::move(p)}); };
    LlamaCppPre p;
    add({"default"}, P({kDefaultPunct, kGpt2, "\\p{N}+", kThreeDigits}));
    p = P({kLlama3});
    p.ignore_merges = true;
    p.add_bos = true;
    add({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"}, p);
    add({"jais-2"}, P({kJais2}));
    add({"dbrx", "smaug-bpe"}, P({kLlama3}));
    add({"deepseek-llm"}, P({"[\r\n]", kDeepseekLlmLetters, kDeepseekLlmPunct, "\\s+$", kCjkHangul, "\\p{N}+"}));
    p = P({"\\p{N}{1,3}", kCjkKana, kDeepseekV3Words});
    p.unicode_regex = true;
    add({"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"}, p);
    add({"spark2_5"}, P({"\\p{N}{1,3}", kCjkKana, kSparkWords, "\\p{N}"}));
    p = P({kYoutuCjk, kYoutuWords});
    p.ignore_merges = true;
    add({"youtu"}, p);
    add({"deepseek-coder"}, P({"[\r\n]", kDeepseekCoderLetters, kDeepseekCoderPunct, kCjkHangul, "\\p{N}"}));
    add({"falcon"}, P({kFalconPunct, kGpt2, kThreeDigits}));
    add({"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
        P({"\\p{N}", kGpt2}));
    add({"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
         "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt", "olmo", "jais", "trillion",
         "granite-docling"},
        P({kGpt2}));
    add({"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open", "grok-2"},
        P({kQwen2}));
    add({"qwen35"}, P({kQwen35}));
    add({"poro-chat", "bloom", "gpt3-finnish"}, P({kBloom}));
    add({"chatglm-bpe"}, P({kLlama3}));
    p = P({kLlama3});
    p.ignore_merges = true;
    add({"glm4", "glm5"}, p);
    add({"viking"}, P({kBloom, "\\p{N}"}));
    p = P({kTekken});
    p.ignore_merges = true;
    p.add_bos = true;
    add({"tekken"}, p);
    p = P({"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
           "[\\p{P}!-/:-@\\[-`{-~]", kGpt2});
    p.add_bos = true;
    add({"chameleon"}, p);
    p = P({kGpt4oOriginal});
    p.unicode_regex = true;
    add({"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, p);
    (void)kGpt4o;  // llama.cpp's rewrite, kept for the record
    p = P({kGraniteEmbMulti});
    p.ignore_merges = true;
    add({"granite-embed-multi-97m"}, p);
    add({"tiny_aya", "cohere2moe"}, P({kTinyAyaDigits, kTinyAyaWords}));
    add({"kimi-k2"}, P({kKimiK2}));
    add({"superbpe"}, P({"\\p{N}+", "(?=(\\d{3})+(?!\\d))"}));
    add({"bailingmoe", "bailingmoe2", "llada-moe"}, P({kBailing}));
    add({"seed-coder"}, P({kSeedCoder}));
    add({"ufakzeka"}, P({kUfakzeka}));
    add({"afmoe"}, P({kAfmoeDigits, kAfmoeCjk, kDeepseekV3Words}));
    add({"laguna"}, P({kNewlineRuns, kQwen2}));
    add({"exaone-moe"}, P({kExaoneMoe}));
    p = P({kNewlineRuns});
    p.byte_encode = false;
    p.escape_whitespaces = true;
    add({"sarvam-moe"}, p);
    p.force_add_bos = true;
    p.newline_runs_whole = true;
    add({"gemma4", "granite-embed-multi-311m"}, p);
    p = P({"\\p{N}{1,3}", kMinicpm5});
    p.ignore_merges = true;
    add({"minicpm5"}, p);
    p = P({"\\S+"});
    p.byte_encode = false;
    add({"whitespace"}, p);
    return v;
  }();
  return t;
}

}  // namespace

std::optional<LlamaCppPre> llamacpp_pre(const std::string& pre) {
  for (const Entry& e : table())
    for (const char* n : e.names)
      if (pre == n) return e.pre;
  return std::nullopt;
}

const std::vector<std::string>& llamacpp_pre_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : table()) v.insert(v.end(), e.names.begin(), e.names.end());
    return v;
  }();
  return names;
}

Pattern llamacpp_pattern(const std::string& expr, const std::string& where) {
  if (expr == kGpt2 || expr == kLlama3 || expr == kQwen2 || expr == kQwen35 || expr == kNewlineRuns)
    return Pattern::regex(expr, where);
  if (expr == kKimiK2) return Pattern::custom(std::make_shared<KimiK2Matcher>());
  if (expr == kAfmoeDigits || expr == kTinyAyaDigits) return Pattern::custom(std::make_shared<DigitGroupMatcher>());
  static const char* kCategories[] = {"\\p{N}", "\\p{L}", "\\p{P}", "\\p{M}", "\\p{S}",
                                      "\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}", "\\p{Lo}"};
  for (const char* c : kCategories)
    if (expr.find(c) != std::string::npos) return Pattern::custom(std::make_shared<CollapsedMatcher>(expr, where));
  return Pattern::custom(std::make_shared<WideMatcher>(expr, where));
}

}  // namespace oxyd::tokenizer
