// WordPiece greedy longest-match, as Hugging Face tokenizers' WordPiece::tokenize.
#include "tokenizer/wordpiece.h"

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

WordPiece::WordPiece(std::vector<std::pair<std::string, int32_t>> vocab,
                     const std::string& unk_token, std::string continuing_subword_prefix,
                     size_t max_input_chars_per_word, const std::string& where)
    : prefix_(std::move(continuing_subword_prefix)), max_chars_(max_input_chars_per_word) {
  vocab_.reserve(vocab.size());
  for (auto& [tok, id] : vocab) vocab_.add(std::move(tok), id);
  unk_id_ = vocab_.find(unk_token);
  if (unk_id_ < 0) {
    throw_error(ErrorCode::INVALID_ARGUMENT,
                where + ": model.unk_token '" + unk_token + "' is not in model.vocab");
  }
}

void WordPiece::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  size_t num_chars = 0;
  for (size_t i = 0; i < word.size();) {
    next_code_point(word, i);
    ++num_chars;
  }
  if (num_chars > max_chars_) {
    out.push_back(unk_id_);
    return;
  }
  size_t first = out.size();
  std::string buf;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::string_view sub = word.substr(start, end - start);
      int32_t id;
      if (start > 0) {
        buf.assign(prefix_);
        buf.append(sub);
        id = vocab_.find(buf);
      } else {
        id = vocab_.find(sub);
      }
      if (id >= 0) {
        found = id;
        break;
      }
      size_t len = last_char_len(sub);
      end -= len ? len : 1;
    }
    if (found < 0) {
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

}  // namespace oxyd::tokenizer
