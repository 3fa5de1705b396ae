// SentencePiece BPE merging by piece score, in llama.cpp's order (llm_tokenizer_spm_session).
#include "tokenizer/spm.h"

#include <cstdio>
#include <queue>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

Spm::Spm(std::vector<std::pair<std::string, int32_t>> vocab, std::vector<float> scores, int32_t unk_id,
         const std::string& where)
    : scores_(std::move(scores)), unk_id_(unk_id), where_(where) {
  vocab_.reserve(vocab.size());
  for (auto& [tok, id] : vocab) vocab_.add(std::move(tok), id);
  if (scores_.size() < vocab_.size()) scores_.resize(vocab_.size(), 0.0f);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = vocab_.find(name);
    if (byte_ids_[b] < 0) byte_ids_[b] = vocab_.find(std::string(1, static_cast<char>(b)));
  }
}

namespace {
struct Symbol {
  uint32_t start, len;  // bytes of the word; len 0 = merged away
  int32_t prev, next;
};
struct Bigram {
  float score;
  int32_t left, right;
  uint32_t len;  // bytes of left + right when queued: a stale entry no longer matches
};
struct BigramOrder {  // priority_queue top: highest score, then leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};
}  // namespace

void Spm::push_bytes(std::string_view s, std::vector<int32_t>& out) const {
  for (char c : s) {
    int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) id = unk_id_;
    if (id < 0) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(c)));
      throw_error(ErrorCode::INVALID_ARGUMENT, where_ + ": byte " + hex +
                                                   " has no piece (no <0xXX> token, no unk token)");
    }
    out.push_back(id);
  }
}

void Spm::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  thread_local std::vector<Symbol> symbols;
  symbols.clear();
  for (size_t pos = 0; pos < word.size();) {
    size_t start = pos;
    next_code_point(word, pos);
    int32_t n = static_cast<int32_t>(symbols.size());
    symbols.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(pos - start), n - 1,
                       pos == word.size() ? -1 : n + 1});
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const uint32_t len = symbols[l].len + symbols[r].len;
    int32_t id = vocab_.find(word.substr(symbols[l].start, len));
    if (id < 0) return;
    queue.push({scores_[id], l, r, len});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol& left = symbols[b.left];
    Symbol& right = symbols[b.right];
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    std::string_view s = word.substr(symbols[i].start, symbols[i].len);
    int32_t id = vocab_.find(s);
    if (id >= 0) out.push_back(id);
    else push_bytes(s, out);
  }
}

}  // namespace oxyd::tokenizer
