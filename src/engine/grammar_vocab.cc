// grammar_vocabulary (see grammar_vocab.h).
#include "engine/grammar_vocab.h"

#include <algorithm>

namespace oxyd::engine {

grammar::Vocabulary grammar_vocabulary(const tokenizer::Tokenizer& tok, int32_t vocab_size, bool special_text) {
  grammar::Vocabulary v;
  const int32_t n = std::min<int32_t>(int32_t(tok.vocab_size()), vocab_size);
  v.token_bytes.reserve(size_t(n));
  for (int32_t id = 0; id < n; ++id) {
    if (tok.is_end_of_generation(id)) v.token_bytes.emplace_back();
    else if (special_text && tok.is_special(id)) v.token_bytes.push_back(tok.id_to_token(id));
    else v.token_bytes.push_back(tok.token_bytes(id));
  }
  for (int32_t id : tok.end_of_generation_ids())
    if (id >= 0 && id < n) v.stop_ids.push_back(id);
  v.vocab_size = vocab_size;
  return v;
}

}  // namespace oxyd::engine
