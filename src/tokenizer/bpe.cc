// BPE word merging (Hugging Face tokenizers' Word::merge_all semantics) and merge tables.
#include "tokenizer/bpe.h"

#include <cstdio>
#include <queue>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

void Vocab::add(std::string token, int32_t id) {
  if (id < 0) return;
  if (static_cast<size_t>(id) >= tokens_.size()) tokens_.resize(static_cast<size_t>(id) + 1);
  tokens_[id] = token;
  ids_[std::move(token)] = id;
}

Bpe::Bpe(std::vector<std::pair<std::string, int32_t>> vocab, BpeOptions options)
    : options_(std::move(options)) {
  vocab_.reserve(vocab.size());
  for (auto& [tok, id] : vocab) vocab_.add(std::move(tok), id);
}

Bpe::Bpe(std::vector<std::pair<std::string, int32_t>> vocab,
         const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
         const std::string& where)
    : Bpe(std::move(vocab), std::move(options)) {
  init_tables(where);
  merges_.reserve(merges.size() * 2);
  const size_t prefix_len = options_.continuing_subword_prefix.size();
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    int32_t ia = vocab_.find(a), ib = vocab_.find(b);
    if (ia < 0 || ib < 0) {
      throw_error(ErrorCode::INVALID_ARGUMENT,
                  where + ": model.merges[" + std::to_string(rank) + "] uses a token missing from " +
                      "model.vocab: '" + (ia < 0 ? a : b) + "'");
    }
    std::string merged = a + (b.size() >= prefix_len ? b.substr(prefix_len) : std::string());
    int32_t im = vocab_.find(merged);
    if (im < 0) {
      throw_error(ErrorCode::INVALID_ARGUMENT,
                  where + ": model.merges[" + std::to_string(rank) + "] produces '" + merged +
                      "', which is not in model.vocab");
    }
    add_merge(ia, ib, static_cast<int32_t>(rank), im);
  }
}

void Bpe::init_tables(const std::string& where) {
  if (options_.unk_token) {
    unk_id_ = vocab_.find(*options_.unk_token);
    if (unk_id_ < 0) {
      throw_error(ErrorCode::INVALID_ARGUMENT,
                  where + ": model.unk_token '" + *options_.unk_token + "' is not in model.vocab");
    }
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = vocab_.find(name);
  }
  if (options_.continuing_subword_prefix.empty() && options_.end_of_word_suffix.empty()) {
    bmp_char_id_.assign(0x10000, -1);
    for (size_t id = 0; id < vocab_.size(); ++id) {
      std::string_view t = vocab_.token(static_cast<int32_t>(id));
      if (t.empty()) continue;
      size_t pos = 0;
      char32_t c = next_code_point(t, pos);
      if (pos == t.size() && c < 0x10000 && vocab_.find(t) == static_cast<int32_t>(id)) {
        bmp_char_id_[c] = static_cast<int32_t>(id);
      }
    }
  }
}

void Bpe::add_merge(int32_t a, int32_t b, int32_t rank, int32_t new_id) {
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  merges_[key] = (static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 32) |
                 static_cast<uint32_t>(new_id);
}

void Bpe::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges ||
      (options_.ignore_merges_newline_runs && word.find_first_not_of('\n') == std::string_view::npos)) {
    int32_t id = vocab_.find(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  const bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t first = out.size();
  merge_word(word, out);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_.size() < kCacheCapacity) {
      cache_.emplace(std::string(word), std::vector<int32_t>(out.begin() + first, out.end()));
    }
  }
}

namespace {
struct Symbol {
  int32_t id;
  int32_t prev, next;
  bool removed;
};
struct MergeCand {
  uint32_t rank;
  uint32_t pos;
  int32_t new_id;
  bool operator<(const MergeCand& o) const {  // priority_queue: top = smallest rank, then pos
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};
}  // namespace

void Bpe::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  thread_local std::vector<Symbol> symbols;
  symbols.clear();
  auto push = [&](int32_t id) {
    int32_t n = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, n - 1, n + 1, false});
  };
  int32_t pending_unk = -1;  // fused unk run in progress
  std::string buf;
  for (size_t i = 0; i < word.size();) {
    size_t start = i;
    char32_t c = next_code_point(word, i);
    const bool is_first = start == 0, is_last = i == word.size();
    int32_t id;
    std::string_view s = word.substr(start, i - start);
    if (!bmp_char_id_.empty() && c < 0x10000) {
      id = bmp_char_id_[c];
    } else {
      buf.clear();
      if (!is_first) buf += options_.continuing_subword_prefix;
      buf.append(s);
      if (is_last) buf += options_.end_of_word_suffix;
      id = vocab_.find(buf);
      s = buf;
    }
    if (id >= 0) {
      if (pending_unk >= 0) {
        push(pending_unk);
        pending_unk = -1;
      }
      push(id);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (char b : s) all &= byte_ids_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        // HF does not flush a pending unk here: the unk run keeps going past byte tokens.
        for (char b : s) push(byte_ids_[static_cast<uint8_t>(b)]);
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (pending_unk >= 0 && !options_.fuse_unk) push(pending_unk);
      pending_unk = unk_id_;
    } else if (options_.unknown_splits) {
      push(-1);  // no merge has it (lookup keys are real ids); dropped below
    }
  }
  if (pending_unk >= 0) push(pending_unk);
  if (symbols.empty()) return;
  symbols.back().next = -1;

  thread_local std::vector<MergeCand> heap_store;
  heap_store.clear();
  std::priority_queue<MergeCand, std::vector<MergeCand>> queue(std::less<MergeCand>(),
                                                               std::move(heap_store));
  auto lookup = [&](int32_t a, int32_t b, uint64_t& val) {
    auto it = merges_.find((static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
                           static_cast<uint32_t>(b));
    if (it == merges_.end()) return false;
    val = it->second;
    return true;
  };
  uint64_t val;
  for (size_t k = 0; k + 1 < symbols.size(); ++k) {
    if (lookup(symbols[k].id, symbols[k + 1].id, val)) {
      queue.push({static_cast<uint32_t>(val >> 32), static_cast<uint32_t>(k),
                  static_cast<int32_t>(val & 0xffffffffu)});
    }
  }
  while (!queue.empty()) {
    MergeCand top = queue.top();
    queue.pop();
    Symbol& cur = symbols[top.pos];
    if (cur.removed || cur.next < 0) continue;
    Symbol& right = symbols[cur.next];
    if (!lookup(cur.id, right.id, val) || static_cast<int32_t>(val & 0xffffffffu) != top.new_id) {
      continue;
    }
    cur.id = top.new_id;
    right.removed = true;
    cur.next = right.next;
    if (cur.next >= 0) symbols[cur.next].prev = static_cast<int32_t>(top.pos);
    if (cur.prev >= 0 && lookup(symbols[cur.prev].id, cur.id, val)) {
      queue.push({static_cast<uint32_t>(val >> 32), static_cast<uint32_t>(cur.prev),
                  static_cast<int32_t>(val & 0xffffffffu)});
    }
    if (cur.next >= 0 && lookup(cur.id, symbols[cur.next].id, val)) {
      queue.push({static_cast<uint32_t>(val >> 32), top.pos,
                  static_cast<int32_t>(val & 0xffffffffu)});
    }
  }
  for (const Symbol& s : symbols)
    if (!s.removed && s.id >= 0) out.push_back(s.id);
}

}  // namespace oxyd::tokenizer
