// Normalizer implementations, mirroring Hugging Face tokenizers' semantics character by character.
#include "tokenizer/normalizers.h"

namespace oxyd::tokenizer {

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

namespace {

void to_lowercase(std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) append_lowercase(out, next_code_point(text, i));
  text.swap(out);
}

template <typename Keep>
void filter_chars(std::string& text, Keep keep) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    char32_t c = next_code_point(text, i);
    if (keep(c)) out.append(text, start, i - start);
  }
  text.swap(out);
}

void replace_pattern(std::string& text, const Pattern& pattern, const std::string& content) {
  std::vector<std::pair<size_t, size_t>> m;
  pattern.find_all(text, m);
  if (m.empty()) return;
  std::string out;
  out.reserve(text.size());
  size_t prev = 0;
  for (auto [b, e] : m) {
    out.append(text, prev, b - prev);
    out.append(content);
    prev = e;
  }
  out.append(text, prev, std::string::npos);
  text.swap(out);
}

void strip_ws(std::string& text, bool left, bool right) {
  size_t b = 0, e = text.size();
  if (left) {
    while (b < e) {
      size_t i = b;
      if (!is_whitespace(next_code_point(text, i))) break;
      b = i;
    }
  }
  if (right) {
    while (e > b) {
      size_t len = last_char_len(std::string_view(text).substr(0, e));
      if (len == 0) break;
      size_t i = e - len;
      if (!is_whitespace(next_code_point(text, i))) break;
      e -= len;
    }
  }
  text = text.substr(b, e - b);
}

void bert_normalize(std::string& text, const Normalizer& n) {
  std::string out;
  out.reserve(text.size() + 16);
  if (n.clean_text || n.handle_chinese_chars) {
    for (size_t i = 0; i < text.size();) {
      size_t start = i;
      char32_t c = next_code_point(text, i);
      if (n.clean_text) {
        bool control = c != '\t' && c != '\n' && c != '\r' && is_other(c);
        if (c == 0 || c == 0xFFFD || control) continue;
        bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' || is_whitespace(c);
        if (ws) {
          out.push_back(' ');
          continue;
        }
      }
      if (n.handle_chinese_chars && is_chinese_char(c)) {
        out.push_back(' ');
        out.append(text, start, i - start);
        out.push_back(' ');
        continue;
      }
      out.append(text, start, i - start);
    }
    text.swap(out);
  }
  if (n.strip_accents) {
    text = normalize_form(text, NormalForm::NFD);
    filter_chars(text, [](char32_t c) { return !is_mark_nonspacing(c); });
  }
  if (n.lowercase) to_lowercase(text);
}

}  // namespace

void Normalizer::apply(std::string& text) const {
  switch (kind) {
    case Kind::NONE: return;
    case Kind::SEQUENCE:
      for (const auto& c : children) c.apply(text);
      return;
    case Kind::NFC: text = normalize_form(text, NormalForm::NFC); return;
    case Kind::NFD: text = normalize_form(text, NormalForm::NFD); return;
    case Kind::NFKC: text = normalize_form(text, NormalForm::NFKC); return;
    case Kind::NFKD: text = normalize_form(text, NormalForm::NFKD); return;
    case Kind::LOWERCASE: to_lowercase(text); return;
    case Kind::STRIP: strip_ws(text, strip_left, strip_right); return;
    case Kind::STRIP_ACCENTS:
      filter_chars(text, [](char32_t c) { return !is_combining_mark(c); });
      return;
    case Kind::REPLACE: replace_pattern(text, pattern, content); return;
    case Kind::PREPEND:
      if (!text.empty()) text.insert(0, content);
      return;
    case Kind::BERT: bert_normalize(text, *this); return;
    case Kind::PRECOMPILED: text = charsmap->apply_graphemes(text); return;
    case Kind::LLAMACPP_UGM:
      text = ugm_whitespace(charsmap ? charsmap->apply(text) : text, ugm_prefix, ugm_merge_spaces);
      return;
  }
}

}  // namespace oxyd::tokenizer
