// Unigram Viterbi decoding over a byte trie of the pieces.
#include "tokenizer/unigram.h"

#include <cstdio>
#include <limits>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

Unigram::Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<int32_t> unk_id,
                 bool byte_fallback, const std::string& where, const std::vector<bool>* matchable,
                 std::optional<double> min_score)
    : unk_id_(unk_id), byte_fallback_(byte_fallback) {
  if (matchable && matchable->size() != pieces.size())
    throw_error(ErrorCode::INVALID_ARGUMENT, where + ": one matchable flag per piece expected");
  if (unk_id_ && (*unk_id_ < 0 || static_cast<size_t>(*unk_id_) >= pieces.size())) {
    throw_error(ErrorCode::INVALID_ARGUMENT, where + ": field 'model.unk_id': " +
                                                 std::to_string(*unk_id_) + " is outside the vocabulary");
  }
  vocab_.reserve(pieces.size());
  trie_.assign(1, Node{});
  min_score_ = std::numeric_limits<double>::infinity();
  for (size_t id = 0; id < pieces.size(); ++id) {
    const std::string& p = pieces[id].first;
    scores_.push_back(pieces[id].second);
    min_score_ = std::min(min_score_, pieces[id].second);
    int32_t node = 0;
    for (char ch : p) {
      uint8_t b = static_cast<uint8_t>(ch);
      int32_t c = trie_[node].first_child;
      while (c >= 0 && trie_[c].byte != b) c = trie_[c].next_sibling;
      if (c < 0) {
        Node n;
        n.byte = b;
        n.next_sibling = trie_[node].first_child;
        trie_.push_back(n);
        c = static_cast<int32_t>(trie_.size() - 1);
        trie_[node].first_child = c;
      }
      node = c;
    }
    if (!p.empty() && vocab_.find(p) < 0 && (!matchable || (*matchable)[id])) trie_[node].id = static_cast<int32_t>(id);
    vocab_.add(p, static_cast<int32_t>(id));
  }
  if (pieces.empty()) min_score_ = 0.0;
  if (min_score) min_score_ = *min_score;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = vocab_.find(name);
  }
}

void Unigram::tokenize(std::string_view s, std::vector<int32_t>& out) const {
  if (s.empty()) return;
  const size_t n = s.size();
  const double unk_score = min_score_ - 10.0;
  struct Best {
    double score = 0.0;
    int64_t start = -1;
    int32_t id = -1;
  };
  std::vector<Best> best(n + 1);
  best[0].start = 0;
  for (size_t start = 0; start < n;) {
    const double base = best[start].score;
    size_t mblen = valid_utf8_len(s, start);
    if (mblen == 0) mblen = 1;
    bool has_single = false;
    int32_t node = 0;
    for (size_t i = start; i < n; ++i) {
      uint8_t b = static_cast<uint8_t>(s[i]);
      int32_t c = trie_[node].first_child;
      while (c >= 0 && trie_[c].byte != b) c = trie_[c].next_sibling;
      if (c < 0) break;
      node = c;
      if (trie_[node].id >= 0) {
        const size_t end = i + 1;
        const double cand = base + scores_[trie_[node].id];
        if (best[end].start < 0 || cand > best[end].score) best[end] = {cand, static_cast<int64_t>(start), trie_[node].id};
        if (end - start == mblen) has_single = true;
      }
    }
    if (!has_single) {
      const size_t end = start + mblen;
      const double cand = base + unk_score;
      if (best[end].start < 0 || cand > best[end].score)
        best[end] = {cand, static_cast<int64_t>(start), unk_id_ ? *unk_id_ : -1};
    }
    start += mblen;
  }
  // Back-track into (begin, end, id) pieces, fusing consecutive unks.
  struct Span {
    size_t b, e;
    int32_t id;
  };
  std::vector<Span> spans;
  for (size_t end = n; end > 0;) {
    const Best& node = best[end];
    const size_t start = static_cast<size_t>(node.start);
    const bool is_unk = unk_id_ && node.id == *unk_id_;
    if (is_unk && !spans.empty() && spans.back().id == *unk_id_ && spans.back().b == end) {
      spans.back().b = start;  // fuse_unk
    } else {
      spans.push_back({start, end, node.id});
    }
    end = start;
  }
  for (size_t k = spans.size(); k-- > 0;) {
    const Span& sp = spans[k];
    std::string_view piece = s.substr(sp.b, sp.e - sp.b);
    int32_t id = vocab_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (char c : piece) all &= byte_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        for (char c : piece) out.push_back(byte_ids_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (unk_id_) out.push_back(*unk_id_);
  }
}

}  // namespace oxyd::tokenizer
