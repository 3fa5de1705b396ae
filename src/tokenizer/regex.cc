// PCRE2 (8-bit, UTF + UCP + JIT) behind a small find_all interface.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>
#include <utf8proc.h>

#include <array>
#include <mutex>

#include <cstdio>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
};

namespace {
// Per-thread match data and JIT stack, large enough for lookahead over very long whitespace runs.
struct ThreadScratch {
  pcre2_match_data* md = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* ctx = nullptr;
  ThreadScratch() {
    md = pcre2_match_data_create(16, nullptr);
    stack = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr);
    ctx = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(ctx, nullptr, stack);
  }
  ~ThreadScratch() {
    pcre2_match_context_free(ctx);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(md);
  }
};
ThreadScratch& scratch() {
  thread_local ThreadScratch s;
  return s;
}
}  // namespace

namespace {

// \p{..} classes are expanded into explicit ranges from utf8proc's Unicode 15 tables: the system
// PCRE2 may carry older tables than the Oniguruma inside Hugging Face tokenizers, and a newly
// assigned emoji would then split differently.
const char* kCategoryNames[] = {"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk",
                                "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};

// Bit i set: category i (utf8proc numbering) belongs to the class `name`; 0 if unknown.
uint32_t category_mask(const std::string& name) {
  uint32_t mask = 0;
  for (uint32_t i = 0; i < 30; ++i) {
    std::string cat = kCategoryNames[i];
    if (name == cat || (name.size() == 1 && cat[0] == name[0])) mask |= 1u << i;
  }
  return mask;
}

const std::string& ranges_for(uint32_t mask) {
  static std::mutex mu;
  static std::unordered_map<uint32_t, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(mask);
  if (it != cache.end()) return it->second;
  std::string out;
  auto emit = [&](int32_t a, int32_t b) {
    char buf[48];
    if (a == b) std::snprintf(buf, sizeof(buf), "\\x{%X}", a);
    else std::snprintf(buf, sizeof(buf), "\\x{%X}-\\x{%X}", a, b);
    out += buf;
  };
  int32_t start = -1, last = -1;  // surrogates never start or end a range
  for (int32_t c = 0; c <= 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    bool in = c < 0x110000 && ((mask >> utf8proc_category(c)) & 1u);
    if (in) {
      if (start < 0) start = c;
      last = c;
    } else if (start >= 0) {
      emit(start, last);
      start = -1;
    }
  }
  return cache.emplace(mask, out).first->second;
}

std::string expand_unicode_classes(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char ch = p[i];
    if (ch == '\\' && i + 1 < p.size()) {
      char nx = p[i + 1];
      if ((nx == 'p' || nx == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
        size_t close = p.find('}', i + 3);
        if (close != std::string::npos) {
          std::string name = p.substr(i + 3, close - i - 3);
          uint32_t mask = category_mask(name);
          bool negated = nx == 'P';
          if (mask && !(negated && in_class)) {
            const std::string& r = ranges_for(mask);
            out += in_class ? r : (negated ? "[^" : "[") + r + "]";
            i = close;
            continue;
          }
        }
      }
      out += ch;
      out += nx;
      ++i;
      continue;
    }
    if (!in_class && ch == '[') {
      in_class = true;
      out += ch;
      // A ']' or '^]' right after '[' is literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && ch == ']') in_class = false;
    out += ch;
  }
  return out;
}

}  // namespace

Regex::Regex(const std::string& pattern_in, const std::string& where, Syntax syntax)
    : impl_(std::make_unique<Impl>()), pattern_(pattern_in), syntax_(syntax) {
  int err = 0;
  PCRE2_SIZE err_off = 0;
  const std::string pattern = syntax == Syntax::UNICODE ? expand_unicode_classes(pattern_in) : pattern_in;
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK;
  if (syntax == Syntax::UTF8_ASCII_CLASSES) options = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY;
  if (syntax == Syntax::BYTES) options = PCRE2_DOLLAR_ENDONLY;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                              &err, &err_off, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    throw_error(ErrorCode::INVALID_ARGUMENT,
                where + ": regex does not compile at offset " + std::to_string(err_off) + ": " +
                    reinterpret_cast<char*>(buf) + " (pattern: " + pattern_in + ")");
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() {
  if (impl_ && impl_->code) pcre2_code_free(impl_->code);
}

void Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  ThreadScratch& s = scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos <= text.size()) {
    int rc = impl_->jit ? pcre2_jit_match(impl_->code, subject, text.size(), pos, 0, s.md, s.ctx)
                        : pcre2_match(impl_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK,
                                      s.md, s.ctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(rc, buf, sizeof(buf));
      throw_error(ErrorCode::INTERNAL, std::string("tokenizer regex match failed: ") +
                                           reinterpret_cast<char*>(buf) + " (pattern: " +
                                           pattern_ + ")");
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.md);
    size_t b = ov[0], e = ov[1];
    out.emplace_back(b, e);
    if (e == b) {
      if (e >= text.size()) break;
      size_t step = syntax_ == Syntax::BYTES ? 1 : valid_utf8_len(text, e);
      pos = e + (step ? step : 1);
    } else {
      pos = e;
    }
  }
}

Pattern Pattern::literal(std::string s) {
  Pattern p;
  p.literal_ = std::move(s);
  return p;
}

Pattern Pattern::custom(std::shared_ptr<const Matcher> m) {
  Pattern p;
  p.custom_ = std::move(m);
  return p;
}

Pattern Pattern::regex(const std::string& re, const std::string& where) {
  Pattern p;
  p.regex_ = std::make_shared<Regex>(re, where);
  return p;
}

void Pattern::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  if (regex_) {
    regex_->find_all(text, out);
    return;
  }
  if (custom_) {
    custom_->find_all(text, out);
    return;
  }
  if (literal_.empty()) return;
  for (size_t pos = text.find(literal_); pos != std::string_view::npos;
       pos = text.find(literal_, pos + literal_.size())) {
    out.emplace_back(pos, pos + literal_.size());
  }
}

}  // namespace oxyd::tokenizer
