// The pre-tokenizers llama.cpp runs on byte-level BPE GGUF vocabularies (tokenizer.ggml.model
// "gpt2", "gemma4", "whitespace"), by tokenizer.ggml.pre value: every value llama.cpp's vocabulary
// loader (src/llama-vocab.cpp) recognises, with its list of split expressions and the flags that
// go with it. A GGUF is tokenized as llama.cpp tokenizes it, so the expressions are run the way
// llama.cpp runs them (llamacpp_pattern), which is not always the way the family's tokenizer.json
// would: llama.cpp's regex engine sees every non-ASCII character as one byte standing for its
// Unicode category, so \p{Lu} and \p{Ll} are the same class beyond ASCII.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace oxyd::tokenizer {

struct LlamaCppPre {
  std::vector<const char*> exprs;   // split expressions, applied one after the other (Isolated)
  bool ignore_merges = false;       // a word that is a vocabulary token is that token
  bool byte_encode = true;          // GPT-2 byte-to-char mapping before the merges
  bool escape_whitespaces = false;  // " " -> U+2581 first (SentencePiece-style BPE)
  bool add_bos = false;             // default of tokenizer.ggml.add_bos_token
  bool force_add_bos = false;       // BOS even when the file says add_bos_token = false (gemma4)
  bool newline_runs_whole = false;  // a run of "\n" that is a token is that token (gemma4)
  // Run exprs as tokenizer.json patterns (Unicode classes), not through llama.cpp's engine: for
  // the families whose published pattern we follow where llama.cpp's approximation departs from it
  // (gpt-4o / o200k: combining marks and non-ASCII case; deepseek-v3), checked against HF.
  bool unicode_regex = false;
};

/// The settings for `pre`, or nullopt when llama.cpp does not know the value either.
std::optional<LlamaCppPre> llamacpp_pre(const std::string& pre);

/// Every value llamacpp_pre knows, for messages and tests.
const std::vector<std::string>& llamacpp_pre_names();

/// A pattern whose matches are exactly the pieces llama.cpp's unicode_regex_split cuts with `expr`
/// (one of the expressions above). `where` names the file for errors.
Pattern llamacpp_pattern(const std::string& expr, const std::string& where);

}  // namespace oxyd::tokenizer
