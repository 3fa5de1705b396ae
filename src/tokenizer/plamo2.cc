// Plamo2 (see plamo2.h).
#include "tokenizer/plamo2.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {
constexpr int64_t kUnknownCost = 10000000;
}

Plamo2::Plamo2(std::vector<std::string> tokens, const std::vector<float>& scores, const std::vector<bool>& is_byte,
               const std::string& where) {
  if (scores.size() != tokens.size() || is_byte.size() != tokens.size())
    throw_error(ErrorCode::INVALID_ARGUMENT, where + ": one score and type per token expected");
  for (int32_t& b : bytes_) b = -1;
  trie_.assign(1, Node{});
  vocab_.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string& t = tokens[id];
    if (is_byte[id]) {
      unsigned v = 0;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && std::sscanf(t.c_str() + 3, "%2x", &v) == 1)
        bytes_[v & 0xff] = static_cast<int32_t>(id);
    } else if (!t.empty() && std::isfinite(scores[id])) {
      int32_t node = 0;
      for (char ch : t) {
        const auto b = static_cast<uint8_t>(ch);
        int32_t c = child(node, b);
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
      trie_[node].id = static_cast<int32_t>(id);  // a later duplicate wins, as in llama.cpp
      trie_[node].score = static_cast<int32_t>(std::lround(double(scores[id]) * 1e4));
    }
    vocab_.add(std::move(tokens[id]), static_cast<int32_t>(id));
  }
  for (int b = 0; b < 256; ++b)
    if (bytes_[b] < 0)
      throw_error(ErrorCode::INVALID_ARGUMENT, where + ": byte token <0x" + std::to_string(b) + "> is missing");
}

int32_t Plamo2::child(int32_t node, uint8_t b) const {
  int32_t c = trie_[node].first_child;
  while (c >= 0 && trie_[c].byte != b) c = trie_[c].next_sibling;
  return c;
}

void Plamo2::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<size_t> off;  // byte offset of each code point, then the end
  for (size_t i = 0; i < text.size();) {
    off.push_back(i);
    next_code_point(text, i);
  }
  off.push_back(text.size());
  size_t first = 0;
  if (off.size() > 1) {
    size_t j = 0;
    if (next_code_point(text, j) == 0xFEFF) first = 1;
  }
  const size_t n = off.size() - 1;
  if (n <= first) return;
  // cp_at[byte offset] = code point index, to turn a match's byte end into a length.
  std::vector<int32_t> cp_at(text.size() + 1, -1);
  for (size_t k = 0; k <= n; ++k) cp_at[off[k]] = static_cast<int32_t>(k);
  std::vector<int64_t> cost(n + 1, int64_t(1) << 60);
  std::vector<int32_t> len(n + 1, 0), id(n + 1, -1);
  cost[n] = 0;
  struct Match {
    size_t end;
    int32_t id, score;
  };
  std::vector<Match> matches;
  for (size_t i = n; i-- > first;) {
    matches.clear();
    int32_t node = 0;
    for (size_t b = off[i]; b < text.size(); ++b) {
      node = child(node, static_cast<uint8_t>(text[b]));
      if (node < 0) break;
      if (trie_[node].id >= 0 && cp_at[b + 1] >= 0) matches.push_back({b + 1, trie_[node].id, trie_[node].score});
    }
    for (size_t m = matches.size(); m-- > 0;) {  // longest first
      const size_t e = static_cast<size_t>(cp_at[matches[m].end]);
      const int64_t c = cost[e] - matches[m].score;
      if (c < cost[i]) cost[i] = c, len[i] = static_cast<int32_t>(e - i), id[i] = matches[m].id;
    }
    if (const int64_t c = cost[i + 1] + kUnknownCost; c < cost[i]) cost[i] = c, len[i] = 1, id[i] = -1;
  }
  for (size_t i = first; i < n; i += static_cast<size_t>(len[i])) {
    if (id[i] >= 0) {
      out.push_back(id[i]);
      continue;
    }
    for (size_t b = off[i]; b < off[i + 1]; ++b) out.push_back(bytes_[static_cast<uint8_t>(text[b])]);
  }
}

}  // namespace oxyd::tokenizer
