// WordPiece (BERT family): greedy longest-match-first over a word, continuation pieces carry a
// prefix ("##"); a word with an unmatched remainder, or longer than max_input_chars_per_word
// characters, becomes the single unk token.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

class WordPiece : public Model {
 public:
  WordPiece(std::vector<std::pair<std::string, int32_t>> vocab, const std::string& unk_token,
            std::string continuing_subword_prefix, size_t max_input_chars_per_word,
            const std::string& where);
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  int32_t unk_id_;
  std::string prefix_;
  size_t max_chars_;
};

}  // namespace oxyd::tokenizer
