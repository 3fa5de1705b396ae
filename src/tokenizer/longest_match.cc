// LongestMatch (see longest_match.h).
#include "tokenizer/longest_match.h"

namespace oxyd::tokenizer {

LongestMatch::LongestMatch(std::vector<std::string> tokens, int32_t unk_id) : unk_id_(unk_id) {
  trie_.assign(1, Node{});
  vocab_.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    int32_t node = 0;
    for (char ch : tokens[id]) {
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
    if (node != 0) trie_[node].id = static_cast<int32_t>(id);  // a later duplicate wins, as in llama.cpp
    vocab_.add(std::move(tokens[id]), static_cast<int32_t>(id));
  }
}

int32_t LongestMatch::child(int32_t node, uint8_t b) const {
  int32_t c = trie_[node].first_child;
  while (c >= 0 && trie_[c].byte != b) c = trie_[c].next_sibling;
  return c;
}

void LongestMatch::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  for (size_t pos = 0; pos < text.size();) {
    int32_t node = child(0, static_cast<uint8_t>(text[pos]));
    if (node < 0) {
      if (unk_id_ >= 0) out.push_back(unk_id_);
      ++pos;
      continue;
    }
    int32_t best = -1;
    size_t best_end = pos + 1;
    for (size_t i = pos; node >= 0;) {
      if (trie_[node].id >= 0) best = trie_[node].id, best_end = i + 1;
      if (++i >= text.size()) break;
      node = child(node, static_cast<uint8_t>(text[i]));
    }
    if (best >= 0) out.push_back(best);
    else if (unk_id_ >= 0) out.push_back(unk_id_);
    pos = best_end;
  }
}

std::string unescape_rwkv_token(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  auto hex = [](char c) { return c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0'; };
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c != '\\' || i + 1 >= escaped.size()) {
      out.push_back(c);
      continue;
    }
    const char e = escaped[++i];
    if (e == 't') out.push_back('\t');
    else if (e == 'n') out.push_back('\n');
    else if (e == 'r') out.push_back('\r');
    else if (e == 'x' && i + 2 < escaped.size()) {
      out.push_back(static_cast<char>(hex(escaped[i + 1]) * 16 + hex(escaped[i + 2])));
      i += 2;
    } else {
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace oxyd::tokenizer
