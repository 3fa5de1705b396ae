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

size_t CharsMap::longest(std::string_view in, std::string_view& replacement) const {
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
      if (const size_t n = longest(in.substr(i), rep); n > 0) {
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
