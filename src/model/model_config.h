// The config entry points: ModelConfig from a Hugging Face config.json or GGUF metadata, read
// with the family registry (model/archs/registry.h) by loader/config_family.h's readers.
// Errors as loader/model_config.h says; an unknown family is Error(UNSUPPORTED).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/gguf.h"
#include "loader/model_config.h"

namespace oxyd::model {

/// Reads config.json at `path`, and the sentence-transformers files beside it
/// (loader/sentence_transformers.h).
loader::ModelConfig load_hf_config(const std::string& path);
/// Parses an HF config object; `source` names it in errors.
loader::ModelConfig parse_hf_config(const nlohmann::json& config, const std::string& source);
/// From GGUF metadata. `tensors`, when given, decides tie_word_embeddings (no output.weight).
loader::ModelConfig model_config_from_gguf(const loader::GgufMetadata& md,
                                           const std::vector<loader::GgufTensorInfo>* tensors = nullptr);
inline loader::ModelConfig model_config_from_gguf(const loader::GgufFile& f) {
  return model_config_from_gguf(f, &f.tensors());
}

/// What a model of `c` serves: "rank" (a classification head: cross-encoder scores), "embed" (an
/// encoder, or a decoder with a pooling: sentence-transformers Pooling / GGUF pooling_type mean,
/// cls or last) or "generate". A model serves one of them.
const char* model_task(const loader::ModelConfig& c);

}  // namespace oxyd::model
