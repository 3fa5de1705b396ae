// The word-level models behind a tokenizer (BPE, WordPiece, Unigram) and the vocabulary they
// share: id <-> token string. A model turns one pre-tokenized word into ids; it never sees added
// tokens. Models are immutable after construction and safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oxyd::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept {
    // FNV-1a, 64-bit: short keys, no allocation.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

/// Token strings by id and ids by string. Ids may have gaps (never in the files we load, but a
/// malformed file may); a gap maps to an empty string.
class Vocab {
 public:
  void add(std::string token, int32_t id);
  int32_t find(std::string_view token) const {
    auto it = ids_.find(token);
    return it == ids_.end() ? -1 : it->second;
  }
  std::string_view token(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < tokens_.size() ? std::string_view(tokens_[id])
                                                               : std::string_view();
  }
  size_t size() const { return tokens_.size(); }
  void reserve(size_t n) {
    ids_.reserve(n);
    tokens_.reserve(n);
  }

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::vector<std::string> tokens_;
};

class Model {
 public:
  virtual ~Model() = default;
  /// Appends the ids of one word.
  virtual void tokenize(std::string_view word, std::vector<int32_t>& out) const = 0;
  const Vocab& vocab() const { return vocab_; }

 protected:
  Vocab vocab_;
};

}  // namespace oxyd::tokenizer
