// SentencePiece BPE as llama.cpp runs it on a GGUF vocabulary (tokenizer.ggml.model "llama"):
// every code point of the word is a symbol; the adjacent pair whose concatenation is a vocabulary
// piece with the highest score is merged first (ties: leftmost), until no pair is a piece; a symbol
// that is not a piece becomes its bytes (<0xXX>, else the one-byte piece, else unk). No merge list:
// GGUF files written from tokenizer.json carry none and often equal scores (-1000 for every piece),
// where this greedy leftmost order is what every llama.cpp user gets.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

class Spm : public Model {
 public:
  /// vocab: (piece, id) pairs; scores[id] is the piece score (higher merges first); unk_id -1 if
  /// none. `where` names the file for errors.
  Spm(std::vector<std::pair<std::string, int32_t>> vocab, std::vector<float> scores, int32_t unk_id,
      const std::string& where);
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  void push_bytes(std::string_view s, std::vector<int32_t>& out) const;

  std::vector<float> scores_;
  int32_t unk_id_;
  int32_t byte_ids_[256];
  std::string where_;
};

}  // namespace oxyd::tokenizer
