// Normalizers as tokenizer.json declares them (NFC/NFD/NFKC/NFKD, Lowercase, Strip, StripAccents,
// Replace, Prepend, BertNormalizer, Precompiled, Sequence), and llama.cpp's UGM normalization of a GGUF (a
// precompiled charsmap, then its whitespace rules: charsmap.h). Each rewrites one text piece in
// place; they see only the pieces between added tokens, as in Hugging Face tokenizers and llama.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/charsmap.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

struct Normalizer {
  enum class Kind { NONE, SEQUENCE, NFC, NFD, NFKC, NFKD, LOWERCASE, STRIP, STRIP_ACCENTS, REPLACE,
                    PREPEND, BERT, LLAMACPP_UGM, PRECOMPILED };
  Kind kind = Kind::NONE;
  std::vector<Normalizer> children;  // SEQUENCE
  Pattern pattern;                   // REPLACE
  std::string content;               // REPLACE content, PREPEND text
  bool strip_left = false, strip_right = false;  // STRIP
  // BERT
  bool clean_text = true, handle_chinese_chars = true, strip_accents = false, lowercase = true;
  // LLAMACPP_UGM: the charsmap (null: none) and ugm_whitespace's flags; PRECOMPILED: the charsmap
  // of tokenizer.json's Precompiled normalizer (CharsMap::apply_graphemes)
  std::shared_ptr<const CharsMap> charsmap;
  bool ugm_prefix = true, ugm_merge_spaces = false;

  void apply(std::string& text) const;
};

/// The CJK ideograph ranges BERT pads with spaces.
bool is_chinese_char(char32_t c);

}  // namespace oxyd::tokenizer
