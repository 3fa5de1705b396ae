// Pre-tokenizers as tokenizer.json declares them: Split (regex or string, five delimiter
// behaviours, invert), ByteLevel, Metaspace, Digits, BertPreTokenizer, Whitespace,
// WhitespaceSplit, Punctuation, Sequence. They cut normalized pieces into words for the model;
// pieces that are already added tokens pass through untouched.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace oxyd::tokenizer {

/// One piece of the text on its way to the model. added_id >= 0: an added token, final.
struct Piece {
  std::string text;
  int32_t added_id = -1;
  bool at_start = false;  // begins at offset 0 of the original text (Metaspace "first")
};

enum class SplitBehavior { REMOVED, ISOLATED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS };

struct PreTokenizer {
  enum class Kind { NONE, SEQUENCE, SPLIT, BYTE_LEVEL, METASPACE, DIGITS, BERT, WHITESPACE,
                    WHITESPACE_SPLIT, PUNCTUATION };
  Kind kind = Kind::NONE;
  std::vector<PreTokenizer> children;  // SEQUENCE
  Pattern pattern;                     // SPLIT
  SplitBehavior behavior = SplitBehavior::ISOLATED;
  bool invert = false;
  bool add_prefix_space = false, use_regex = true;   // BYTE_LEVEL
  std::string replacement = "\xE2\x96\x81";          // METASPACE
  enum class Prepend { ALWAYS, FIRST, NEVER } prepend_scheme = Prepend::ALWAYS;
  bool split = true;                                 // METASPACE
  bool individual_digits = false;                    // DIGITS

  /// Splits every non-added piece of `pieces` in place.
  void apply(std::vector<Piece>& pieces) const;
};

/// The GPT-2 pattern ByteLevel uses when use_regex is true.
const Pattern& gpt2_pattern();

}  // namespace oxyd::tokenizer
