// Trie-based leftmost-longest matcher for added tokens (what aho-corasick's LeftmostLongest gives
// Hugging Face tokenizers), plus the strip/single-word adjustments of AddedVocabulary::find_matches.
#include "tokenizer/added_tokens.h"

#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

void AddedTokenMatcher::build(const std::vector<AddedToken>* tokens, std::vector<size_t> token_idx,
                              const std::vector<std::string>& patterns) {
  tokens_ = tokens;
  token_idx_ = std::move(token_idx);
  nodes_.assign(1, Node{});
  for (size_t p = 0; p < patterns.size(); ++p) {
    const std::string& pat = patterns[p];
    if (pat.empty()) continue;
    first_byte_[static_cast<uint8_t>(pat[0])] = true;
    int32_t node = 0;
    for (char ch : pat) {
      uint8_t b = static_cast<uint8_t>(ch);
      int32_t child = nodes_[node].first_child;
      while (child >= 0 && nodes_[child].byte != b) child = nodes_[child].next_sibling;
      if (child < 0) {
        Node n;
        n.byte = b;
        n.next_sibling = nodes_[node].first_child;
        nodes_.push_back(n);
        child = static_cast<int32_t>(nodes_.size() - 1);
        nodes_[node].first_child = child;
      }
      node = child;
    }
    if (nodes_[node].pattern < 0) nodes_[node].pattern = static_cast<int32_t>(p);
  }
}

namespace {
bool is_word_char(char32_t c) { return is_alphanumeric(c) || c == '_'; }

size_t space_leftmost_at_end(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t len = last_char_len(s.substr(0, end));
    if (!len) break;
    size_t i = end - len;
    if (!is_whitespace(next_code_point(s, i))) break;
    end -= len;
  }
  return end;
}

size_t space_rightmost_at_start(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    if (!is_whitespace(next_code_point(s, j))) break;
    i = j;
  }
  return i;
}
}  // namespace

void AddedTokenMatcher::find(const std::string& text, bool parse_special,
                             std::vector<std::pair<int32_t, std::pair<size_t, size_t>>>& out) const {
  size_t start_offset = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    int32_t node = 0, best = -1;
    size_t best_end = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      uint8_t b = static_cast<uint8_t>(text[i]);
      int32_t child = nodes_[node].first_child;
      while (child >= 0 && nodes_[child].byte != b) child = nodes_[child].next_sibling;
      if (child < 0) break;
      node = child;
      if (nodes_[node].pattern >= 0) {
        best = nodes_[node].pattern;
        best_end = i + 1;
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = best_end;
    pos = best_end;
    const AddedToken& tok = (*tokens_)[token_idx_[best]];
    if (!parse_special && tok.special) continue;
    if (tok.single_word) {
      bool start_ok = true, stop_ok = true;
      if (start > 0) {
        size_t len = last_char_len(std::string_view(text).substr(0, start));
        size_t k = start - (len ? len : 1);
        start_ok = !is_word_char(next_code_point(text, k));
      }
      if (stop < text.size()) {
        size_t k = stop;
        stop_ok = !is_word_char(next_code_point(text, k));
      }
      if (!start_ok || !stop_ok) continue;
    }
    if (tok.lstrip) {
      size_t ns = space_leftmost_at_end(std::string_view(text).substr(0, start));
      start = ns > start_offset ? ns : start_offset;
    }
    if (tok.rstrip) stop += space_rightmost_at_start(std::string_view(text).substr(stop));
    if (start_offset < start) out.push_back({-1, {start_offset, start}});
    out.push_back({tok.id, {start, stop}});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({-1, {start_offset, text.size()}});
}

void AddedTokenMatcher::split(std::vector<Piece>& pieces, bool parse_special) const {
  if (empty()) return;
  std::vector<Piece> out;
  out.reserve(pieces.size());
  std::vector<std::pair<int32_t, std::pair<size_t, size_t>>> m;
  for (auto& p : pieces) {
    if (p.added_id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    m.clear();
    find(p.text, parse_special, m);
    for (auto& [id, range] : m) {
      auto [b, e] = range;
      if (b >= e) continue;
      Piece q;
      q.text.assign(p.text, b, e - b);
      q.added_id = id;
      q.at_start = p.at_start && b == 0;
      out.push_back(std::move(q));
    }
  }
  pieces.swap(out);
}

}  // namespace oxyd::tokenizer
