// SentencePiece's precompiled normalization charsmap (a GGUF's tokenizer.ggml.precompiled_charsmap,
// the normalizer_spec.precompiled_charsmap of a .model file) and the whitespace rules llama.cpp's
// UGM tokenizer applies after it. Blob layout: u32 size of the trie, then the trie as packed u32
// nodes (a XOR-compressed double array: BASE in bits 10..30, shifted left by 8 when bit 9 is set,
// LEAF in bit 8, LCHECK (the byte that leads to the node) in bits 0..7 plus bit 31, and in a leaf's
// BASE target the offset of its replacement in bits 0..30), then NUL-terminated replacements.
// A rewrite replaces the longest input prefix the trie holds with its replacement; a prefix it
// does not hold passes one UTF-8 code point through (an invalid byte becomes U+FFFD).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oxyd::tokenizer {

class CharsMap {
 public:
  /// Throws Error(INVALID_ARGUMENT) naming `where` when the blob is malformed.
  CharsMap(std::string_view blob, const std::string& where);
  bool empty() const { return nodes_.empty(); }
  /// Rewrites `in` through the map (SentencePiece's and llama.cpp's way: longest match first).
  std::string apply(std::string_view in) const;
  /// Hugging Face tokenizers' `Precompiled` normalizer (tokenizer.json): per grapheme cluster, one
  /// of under 6 bytes that starts with a key of the map is replaced whole by the replacement of
  /// its shortest such key; otherwise each code point that is a key is replaced. Clusters here:
  /// CR LF, and a code point with the combining marks, ZWJ and ZWNJ after it (UAX #29's rules
  /// that can make a cluster under 6 bytes; Hangul jamo, emoji and flags are 6 bytes or more).
  std::string apply_graphemes(std::string_view in) const;

 private:
  /// The longest (or with `shortest`, the shortest) key that `in` starts with: its length in bytes
  /// (0: none) and its replacement.
  size_t match(std::string_view in, bool shortest, std::string_view& replacement) const;
  std::vector<uint32_t> nodes_;
  std::string replacements_;
  std::string where_;
};

/// llama.cpp's UGM whitespace rules on a charsmap's output: every ' ' becomes U+2581; with
/// `merge_spaces` (remove_extra_whitespaces) leading and trailing spaces go and each run of
/// spaces before a non-space becomes one U+2581; with `prefix` (add_space_prefix) a U+2581 goes
/// before the first non-space (before every non-space run when merging).
std::string ugm_whitespace(std::string_view in, bool prefix, bool merge_spaces);

}  // namespace oxyd::tokenizer
