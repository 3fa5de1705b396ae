// Added tokens (special and not): found in the text before the model runs, leftmost-longest, with
// the lstrip / rstrip / single_word rules of Hugging Face tokenizers. Tokens flagged `normalized`
// are matched in normalized text, the others in the raw text. With parse_special == false the
// special ones are not matched (a user message containing "<|im_end|>" stays plain text); they
// still consume their span in the leftmost-longest scan, exactly as tokenizers'
// encode_special_tokens does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/pre_tokenizers.h"

namespace oxyd::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool normalized = false;
  bool lstrip = false, rstrip = false, single_word = false;
};

class AddedTokenMatcher {
 public:
  /// Builds the trie over `patterns[i]` for tokens[i] (patterns may be normalized contents).
  void build(const std::vector<AddedToken>* tokens, std::vector<size_t> token_idx,
             const std::vector<std::string>& patterns);
  bool empty() const { return token_idx_.empty(); }
  /// Splits every non-added piece at the matched tokens.
  void split(std::vector<Piece>& pieces, bool parse_special) const;

 private:
  struct Node {
    int32_t first_child = -1, next_sibling = -1;
    uint8_t byte = 0;
    int32_t pattern = -1;  // index into token_idx_ of the first pattern ending here
  };
  void find(const std::string& text, bool parse_special,
            std::vector<std::pair<int32_t, std::pair<size_t, size_t>>>& out) const;
  const std::vector<AddedToken>* tokens_ = nullptr;
  std::vector<size_t> token_idx_;
  std::vector<Node> nodes_;
  bool first_byte_[256] = {};
};

}  // namespace oxyd::tokenizer
