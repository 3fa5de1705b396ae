// Unigram language-model tokenizer (SentencePiece unigram: T5, ALBERT, XLM-R style): Viterbi over
// all vocabulary pieces that match at each byte offset, maximizing the sum of piece log-probs;
// a character no piece covers costs (min score - 10) as unk; consecutive unks fuse; optional
// byte fallback for unk spans. Mirrors Hugging Face tokenizers' Unigram::encode_optimized.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

class Unigram : public Model {
 public:
  /// pieces[i] = (piece, score) for id i. `matchable` (null: all): the pieces the lattice may use
  /// (llama.cpp's UGM leaves control, unknown and byte pieces out). `min_score` (absent: the
  /// lowest score of all pieces): the base of the unknown-token score (that minus 10).
  Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<int32_t> unk_id,
          bool byte_fallback, const std::string& where, const std::vector<bool>* matchable = nullptr,
          std::optional<double> min_score = std::nullopt);
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  struct Node {
    int32_t first_child = -1, next_sibling = -1;
    int32_t id = -1;
    uint8_t byte = 0;
  };
  std::vector<double> scores_;
  std::vector<Node> trie_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_;
  double min_score_ = 0.0;
  int32_t byte_ids_[256];
};

}  // namespace oxyd::tokenizer
