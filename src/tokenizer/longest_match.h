// Greedy longest-match tokenization over a byte trie of the vocabulary (llama.cpp's tokenizer for
// tokenizer.ggml.model "rwkv", the RWKV "world" vocabulary): from the current byte, the longest
// token whose bytes follow; a byte that starts no token becomes the unknown id (none: skipped, as
// no such byte exists in the RWKV vocabulary). Tokens are raw bytes, not necessarily UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

class LongestMatch : public Model {
 public:
  /// tokens[i] = bytes of id i. unk_id < 0: none.
  LongestMatch(std::vector<std::string> tokens, int32_t unk_id);
  void tokenize(std::string_view text, std::vector<int32_t>& out) const override;

 private:
  struct Node {
    int32_t first_child = -1, next_sibling = -1, id = -1;
    uint8_t byte = 0;
  };
  int32_t child(int32_t node, uint8_t b) const;
  std::vector<Node> trie_;
  int32_t unk_id_;
};

/// The text of an RWKV GGUF token: Python's bytes repr without b'' (\\t \\n \\r \\xNN and \\c for
/// a literal c), as llama.cpp's converter writes them, back to the bytes.
std::string unescape_rwkv_token(std::string_view escaped);

}  // namespace oxyd::tokenizer
