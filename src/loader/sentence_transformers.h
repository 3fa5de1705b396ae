// The sentence-transformers side of a Hugging Face model directory: modules.json names the
// pipeline (Transformer → Pooling → [Normalize]); 1_Pooling/config.json says how token states
// become one vector (mean / CLS / last token); config_sentence_transformers.json holds the
// prompts (Qwen3-Embedding's "Instruct: ...\nQuery:"). Read into ModelConfig's pooling fields.
// A pipeline step this engine does not run (a Dense projection, max pooling) is
// Error(UNSUPPORTED) naming the module, never silently skipped.
#pragma once

#include <string>

#include "loader/model_config.h"

namespace oxyd::loader {

/// llama.cpp's pooling enum (llama.h), also GGUF's <arch>.pooling_type.
enum PoolingType : int { POOLING_UNSET = -1, POOLING_NONE = 0, POOLING_MEAN = 1, POOLING_CLS = 2,
                         POOLING_LAST = 3, POOLING_RANK = 4 };

/// Reads `dir`'s modules.json (absent: nothing changes) and sets c.pooling_type,
/// c.embedding_normalize, c.embedding_prompts and c.max_seq_length (sentence_bert_config.json).
void read_sentence_transformers(const std::string& dir, ModelConfig& c);

/// "mean", "cls", "last", "rank", "none" or "" for unset.
const char* pooling_name(int pooling_type);

}  // namespace oxyd::loader
