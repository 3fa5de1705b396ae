// The bridge from a model's tokenizer to the grammar layer: the bytes each token id adds to the
// text (Tokenizer::token_bytes), its end-of-generation ids and the logits row size.
#pragma once

#include <cstdint>

#include "grammar/grammar.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::engine {

/// `vocab_size`: the model's logits row (ids past the tokenizer are padding, never allowed).
/// special_text: special tokens other than the stop ids are their text (else they have no bytes:
/// never allowed inside a grammar).
grammar::Vocabulary grammar_vocabulary(const tokenizer::Tokenizer& tok, int32_t vocab_size, bool special_text = false);

}  // namespace oxyd::engine
