// The grammar tests' vocabulary: one token per byte (ids 0-255) and an empty EOS (256), so that
// text is accepted byte by byte whatever a real tokenizer would make of it.
#pragma once

#include <string>

#include "grammar/grammar.h"

namespace oxyd::grammar {

inline Vocabulary byte_vocabulary() {
  Vocabulary v;
  for (int b = 0; b < 256; ++b) v.token_bytes.push_back(std::string(1, char(b)));
  v.token_bytes.push_back("");  // 256: EOS
  v.stop_ids = {256};
  v.vocab_size = 257;
  return v;
}

}  // namespace oxyd::grammar
