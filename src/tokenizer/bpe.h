// Byte-pair encoding as Hugging Face tokenizers runs it: every character of a word becomes a
// symbol (or byte-fallback <0xXX> tokens, or unk), then the lowest-ranked adjacent pair is merged
// until none applies (ties: leftmost). Covers GPT-2 byte-level vocabularies and SentencePiece BPE
// converted to merges (Llama 2, Gemma). A GGUF's SentencePiece vocabulary (scores, no merges) goes
// through spm.h instead, as llama.cpp runs it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/model.h"

namespace oxyd::tokenizer {

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  bool ignore_merges_newline_runs = false;  // ignore_merges for words made of "\n" only (llama.cpp gemma4)
  // llama.cpp's BPE: a character with no token (no byte token, no unk either) still stands between
  // its neighbours while merging, then writes nothing; HF drops it first, so its neighbours may merge.
  bool unknown_splits = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class Bpe : public Model {
 public:
  /// vocab: (token, id) pairs; merges: (left, right) in rank order. `where` names the file for
  /// errors (a merge whose parts or result are missing from the vocabulary).
  Bpe(std::vector<std::pair<std::string, int32_t>> vocab,
      const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
      const std::string& where);
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  Bpe(std::vector<std::pair<std::string, int32_t>> vocab, BpeOptions options);
  void init_tables(const std::string& where);
  void add_merge(int32_t a, int32_t b, int32_t rank, int32_t new_id);
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  BpeOptions options_;
  int32_t unk_id_ = -1;
  int32_t byte_ids_[256];
  std::vector<int32_t> bmp_char_id_;  // code point < 0x10000 -> id of that single char, or -1
  // (left id << 32 | right id) -> (rank << 32 | merged id)
  std::unordered_map<uint64_t, uint64_t> merges_;

  static constexpr size_t kCacheCapacity = 50000;
  static constexpr size_t kCacheMaxWordBytes = 64;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace oxyd::tokenizer
