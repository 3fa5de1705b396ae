// The tokenizer of tokenizer.ggml.model "plamo2" (PLaMo 2), as llama.cpp runs it: a Viterbi
// lattice over code points, right to left, of every non-byte token (control ones included)
// scored round(score · 10⁴) as an integer; at each position the pieces are tried longest first
// and a later one must be strictly better, so ties go to the longer piece. A code point no piece
// covers better costs 10⁷ and is written as its UTF-8 byte tokens <0xXX>. A leading U+FEFF of
// each text piece is dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

class Plamo2 : public Model {
 public:
  /// tokens[i], scores[i], is_byte[i] of id i (byte tokens are spelled <0xXX>).
  Plamo2(std::vector<std::string> tokens, const std::vector<float>& scores, const std::vector<bool>& is_byte,
         const std::string& where);
  void tokenize(std::string_view text, std::vector<int32_t>& out) const override;

 private:
  struct Node {
    int32_t first_child = -1, next_sibling = -1, id = -1;
    int32_t score = 0;
    uint8_t byte = 0;
  };
  int32_t child(int32_t node, uint8_t b) const;
  std::vector<Node> trie_;
  int32_t bytes_[256];
};

}  // namespace oxyd::tokenizer
