// CharsMap (see charsmap.h): longest-prefix walk of the packed trie.
#include "tokenizer/charsmap.h"

#include <cstring>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {

const char* kSpace = "\xE2\x96\x81";  // ▁

uint32_t base_of(uint32_t node) { return (node >> 10) << ((node & (1u << 9)) >> 6); }
uint32_t lcheck_of(uint32_t node) { return node & ((1u << 31) | 0xffu); }
bool leaf_of(uint32_t node) { return (node >> 8) & 1u; }
uint32_t value_of(uint32_t node) { return node & ((1u << 31) - 1); }

}  // namespace

CharsMap::CharsMap(std::string_view blob, const std::string& where) : where_(where) {
  auto bad = [&](const std::string& what) { throw_error(ErrorCode::INVALID_ARGUMENT, where + ": " + what); };
  if (blob.empty()) return;
  if (blob.size() < 4) bad("precompiled charsmap shorter than its 4-byte header");
  uint32_t trie_bytes = 0;
  std::memcpy(&trie_bytes, blob.data(), 4);  // little-endian, as GGUF and SentencePiece write it
  if (trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4)
    bad("precompiled charsmap trie of " + std::to_string(trie_bytes) + " bytes does not fit the blob of " +
        std::to_string(blob.size()));
  nodes_.resize(trie_bytes / 4);
  std::memcpy(nodes_.data(), blob.data() + 4, trie_bytes);
  replacements_.assign(blob.substr(4 + trie_bytes));
  if (nodes_.empty()) bad("precompiled charsmap with an empty trie");
}

size_t CharsMap::match(std::string_view in, bool shortest, std::string_view& replacement) const {
  size_t best_len = 0;
  uint32_t best_value = 0;
  auto node = [&](uint32_t i) -> uint32_t {
    if (i >= nodes_.size()) throw_error(ErrorCode::INVALID_ARGUMENT, where_ + ": precompiled charsmap index out of range");
    return nodes_[i];
  };
  uint32_t idx = base_of(node(0));
  for (size_t k = 0; k < in.size(); ++k) {
    const auto c = static_cast<unsigned char>(in[k]);
    if (c == 0) break;
    idx ^= c;
    const uint32_t n = node(idx);
    if (lcheck_of(n) != c) break;
    const bool leaf = leaf_of(n);
    idx ^= base_of(n);
    if (leaf) {
      best_len = k + 1;
      best_value = value_of(node(idx));
      if (shortest) break;
    }
  }
  if (best_len == 0) return 0;
  if (best_value >= replacements_.size())
    throw_error(ErrorCode::INVALID_ARGUMENT, where_ + ": precompiled charsmap replacement offset out of range");
  const size_t end = replacements_.find('\0', best_value);
  if (end == std::string::npos)
    throw_error(ErrorCode::INVALID_ARGUMENT, where_ + ": unterminated precompiled charsmap replacement");
  replacement = std::string_view(replacements_).substr(best_value, end - best_value);
  return best_len;
}

std::string CharsMap::apply(std::string_view in) const {
  std::string out;
  out.reserve(in.size() + in.size() / 4);
  for (size_t i = 0; i < in.size();) {
    std::string_view rep;
    if (!nodes_.empty()) {
      if (const size_t n = match(in.substr(i), false, rep); n > 0) {
        out.append(rep);
        i += n;
        continue;
      }
    }
    const size_t start = i;
    const char32_t c = next_code_point(in, i);
    if (c == 0xFFFD && !(i - start == 3 && in.substr(start, 3) == "\xEF\xBF\xBD")) out.append("\xEF\xBF\xBD");
    else out.append(in.substr(start, i - start));
  }
  return out;
}

namespace {
// The end of the grapheme cluster starting at `pos` (see apply_graphemes).
size_t cluster_end(std::string_view in, size_t pos) {
  size_t i = pos;
  const char32_t first = next_code_point(in, i);
  if (first == '\r') return i < in.size() && in[i] == '\n' ? i + 1 : i;
  // Controls (Cc, Cf but ZWNJ and ZWJ, line and paragraph separators) take no marks.
  const bool private_use = (first >= 0xE000 && first <= 0xF8FF) || first >= 0xF0000;
  if ((is_other(first) && !private_use && first != 0x200C && first != 0x200D) || first == 0x2028 || first == 0x2029)
    return i;
  for (size_t j = i; j < in.size(); i = j) {
    const char32_t c = next_code_point(in, j);
    if (!is_combining_mark(c) && c != 0x200C && c != 0x200D) break;
  }
  return i;
}
}  // namespace

std::string CharsMap::apply_graphemes(std::string_view in) const {
  if (nodes_.empty()) return std::string(in);
  std::string out;
  out.reserve(in.size() + in.size() / 4);
  std::string_view rep;
  for (size_t g = 0; g < in.size();) {
    const size_t end = cluster_end(in, g);
    const std::string_view cluster = in.substr(g, end - g);
    if (cluster.size() < 6 && match(cluster, true, rep) > 0) {
      out.append(rep);
    } else {
      for (size_t i = 0; i < cluster.size();) {
        const size_t start = i;
        next_code_point(cluster, i);
        const std::string_view cp = cluster.substr(start, i - start);
        // a key that is exactly this code point (a shorter key would be a partial UTF-8 sequence)
        if (match(cp, true, rep) > 0) out.append(rep);
        else out.append(cp);
      }
    }
    g = end;
  }
  return out;
}

std::string ugm_whitespace(std::string_view in, bool prefix, bool merge_spaces) {
  std::string out;
  out.reserve(in.size() + in.size() / 2 + 3);
  bool prepended = false, in_word = false;
  for (char c : in) {
    if (c != ' ') {
      if (!in_word) {
        in_word = true;
        if ((prefix && !prepended) || merge_spaces) {
          out.append(kSpace);
          prepended = true;
        }
      }
      out.push_back(c);
    } else {
      in_word = false;
      if (!merge_spaces) out.append(kSpace);
    }
  }
  return out;
}

}  // namespace oxyd::tokenizer
