// Model validation in one place: every count and shape of a model checked against the others
// before anything is sized from it. The config builders (parse_hf_config, model_config_from_gguf)
// run validate_model_config on every ModelConfig they return; whoever has the tensor table
// (`show`/`estimate` via hub::read_local_meta, `run` and the server via model::Weights::load)
// runs validate_model_tensors. Errors are Error(INVALID_ARGUMENT) naming the file, the field
// (the config.json key or the GGUF metadata key) and both numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "loader/safetensors.h"

namespace oxyd::loader {

// Documented caps: several times the largest released models, far below what would overflow
// the sizes computed from them (KV cache, RoPE tables, activations).
inline constexpr int64_t kMaxContextLength = int64_t{1} << 24;  // 16,777,216 positions
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
inline constexpr int64_t kMaxHiddenSize = int64_t{1} << 20;
inline constexpr int64_t kMaxIntermediateSize = int64_t{1} << 22;
inline constexpr int64_t kMaxHeads = int64_t{1} << 14;  // attention heads, kv heads, head_dim
inline constexpr int64_t kMaxExperts = int64_t{1} << 14;

/// Checks the counts of `c` against each other and the caps above.
void validate_model_config(const ModelConfig& c);

/// One tensor header: name, shape in HF/PyTorch order (rows first), dtype.
struct TensorDesc {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
};
std::vector<TensorDesc> tensor_descs(const std::vector<GgufTensorInfo>& tensors);
std::vector<TensorDesc> tensor_descs(const std::vector<SafetensorsTensorInfo>& tensors);

/// Checks tensor headers against the config: no zero dimension, weights (`*.weight`, `*.bias`)
/// of a floating-point or quantized dtype, embedding and output rows = vocab_size, and
/// `num_tokens` (a GGUF tokenizer.ggml.tokens length, -1 when there is none) = embedding rows.
/// `source` names the file in errors.
void validate_model_tensors(const ModelConfig& c, const std::vector<TensorDesc>& tensors, int64_t num_tokens,
                            const std::string& source);

/// The length of tokenizer.ggml.tokens, or -1 when the file has none.
int64_t gguf_token_count(const GgufMetadata& md);

}  // namespace oxyd::loader
