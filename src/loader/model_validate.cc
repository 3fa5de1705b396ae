// validate_model_config / validate_model_tensors (see model_validate.h).
#include "loader/model_validate.h"

#include "core/error.h"

namespace oxyd::loader {
namespace {

// A field by the name its file uses: the config.json key, or the GGUF metadata key.
struct Fields {
  const ModelConfig& c;
  std::string name(const char* hf, const char* gguf_suffix) const {
    if (c.gguf_arch.empty()) return hf;
    return gguf_suffix[0] == '\0' ? std::string(hf) : c.gguf_arch + "." + gguf_suffix;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": " + msg);
  }
  void range(const char* hf, const char* gguf, int64_t v, int64_t lo, int64_t hi) const {
    if (v < lo || v > hi)
      fail(name(hf, gguf) + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
  }
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool is_weight_dtype(DType t) {
  switch (t) {
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::BOOL: return false;
    default: return true;  // F64/F32/F16/BF16, FP8 and every quantized block format
  }
}

bool is_embedding(const std::string& name, bool gguf) {
  if (gguf) return name == "token_embd.weight";
  return name == "embed_tokens.weight" || ends_with(name, ".embed_tokens.weight") ||
         name == "word_embeddings.weight" || ends_with(name, ".word_embeddings.weight");
}

bool is_output(const std::string& name, bool gguf) { return name == (gguf ? "output.weight" : "lm_head.weight"); }

}  // namespace

void validate_model_config(const ModelConfig& c) {
  const Fields f{c};
  f.range("num_hidden_layers", "block_count", c.num_hidden_layers, 1, kMaxLayers);
  f.range("hidden_size", "embedding_length", c.hidden_size, 1, kMaxHiddenSize);
  f.range("vocab_size", "vocab_size", c.vocab_size, 1, kMaxVocabSize);
  f.range("num_attention_heads", "attention.head_count", c.num_attention_heads, 1, kMaxHeads);
  f.range("num_key_value_heads", "attention.head_count_kv", c.num_key_value_heads, 1, c.num_attention_heads);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    f.fail(f.name("num_key_value_heads", "attention.head_count_kv") + " = " + std::to_string(c.num_key_value_heads) +
           " does not divide " + f.name("num_attention_heads", "attention.head_count") + " = " +
           std::to_string(c.num_attention_heads));
  for (size_t l = 0; l < c.num_key_value_heads_per_layer.size(); ++l)
    if (c.num_key_value_heads_per_layer[l] < 0 || c.num_key_value_heads_per_layer[l] > c.num_attention_heads)
      f.fail(f.name("num_key_value_heads", "attention.head_count_kv") + "[" + std::to_string(l) + "] = " +
             std::to_string(c.num_key_value_heads_per_layer[l]) + " is outside [0, " +
             f.name("num_attention_heads", "attention.head_count") + " = " + std::to_string(c.num_attention_heads) +
             "]");
  f.range("head_dim", "attention.key_length", c.head_dim, 1, kMaxHeads);
  if (c.global_head_dim) f.range("global_head_dim", "attention.key_length", c.global_head_dim, 1, kMaxHeads);
  if (c.num_global_key_value_heads)
    f.range("num_global_key_value_heads", "attention.head_count_kv", c.num_global_key_value_heads, 1,
            c.num_attention_heads);
  f.range("intermediate_size", "feed_forward_length", c.intermediate_size, 0, kMaxIntermediateSize);
  for (size_t l = 0; l < c.intermediate_size_per_layer.size(); ++l)
    if (c.intermediate_size_per_layer[l] < 0 || c.intermediate_size_per_layer[l] > kMaxIntermediateSize)
      f.fail(f.name("intermediate_size", "feed_forward_length") + "[" + std::to_string(l) + "] = " +
             std::to_string(c.intermediate_size_per_layer[l]) + " is outside [0, " +
             std::to_string(kMaxIntermediateSize) + "]");
  // GGUF requires context_length; an HF config may omit max_position_embeddings (0 = unknown).
  f.range("max_position_embeddings", "context_length", c.max_position_embeddings, c.gguf_arch.empty() ? 0 : 1,
          kMaxContextLength);
  if (c.sliding_window) f.range("sliding_window", "attention.sliding_window", *c.sliding_window, 0, kMaxContextLength);

  f.range("num_experts", "expert_count", c.num_experts, 0, kMaxExperts);
  // llama.cpp: n_expert_used <= n_expert, and > 0 when there are experts. A dense HF config may
  // carry a leftover num_experts_per_tok; a GGUF one may not.
  if (c.num_experts > 0 || !c.gguf_arch.empty())
    f.range("num_experts_per_tok", "expert_used_count", c.num_experts_per_tok, c.num_experts > 0 ? 1 : 0,
            c.num_experts);
  f.range("moe_intermediate_size", "expert_feed_forward_length", c.moe_intermediate_size, 0, kMaxIntermediateSize);
  f.range("shared_expert_intermediate_size", "expert_shared_feed_forward_length", c.shared_expert_intermediate_size,
          0, kMaxIntermediateSize);

  for (const auto& [type, rp] : c.rope_parameters)
    if (!(rp.partial_rotary_factor > 0.0 && rp.partial_rotary_factor <= 1.0))
      f.fail(f.name("partial_rotary_factor", "rope.dimension_count") + " gives a rotary fraction of " +
             std::to_string(rp.partial_rotary_factor) + " of " + f.name("head_dim", "attention.key_length") +
             " = " + std::to_string(c.head_dim) + " (" + type + " layers), expected (0, 1]");
  const std::pair<const char*, int64_t> linear[] = {
      {"linear_conv_kernel_dim", c.linear_conv_kernel_dim}, {"linear_key_head_dim", c.linear_key_head_dim},
      {"linear_value_head_dim", c.linear_value_head_dim},   {"linear_num_key_heads", c.linear_num_key_heads},
      {"linear_num_value_heads", c.linear_num_value_heads}};
  for (const auto& [k, v] : linear) f.range(k, "", v, 0, kMaxHeads);
  if (c.type_vocab_size) f.range("type_vocab_size", "", c.type_vocab_size, 0, 1 << 16);
}

std::vector<TensorDesc> tensor_descs(const std::vector<GgufTensorInfo>& tensors) {
  std::vector<TensorDesc> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back({t.name, t.shape(), t.dtype});
  return out;
}

std::vector<TensorDesc> tensor_descs(const std::vector<SafetensorsTensorInfo>& tensors) {
  std::vector<TensorDesc> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back({t.name, t.shape, t.dtype});
  return out;
}

int64_t gguf_token_count(const GgufMetadata& md) {
  const GgufValue* toks = md.find("tokenizer.ggml.tokens");
  return toks && toks->is_array() ? static_cast<int64_t>(toks->size()) : -1;
}

void validate_model_tensors(const ModelConfig& c, const std::vector<TensorDesc>& tensors, int64_t num_tokens,
                            const std::string& source) {
  const bool gguf = !c.gguf_arch.empty();
  auto fail = [&](const std::string& msg) { throw Error(ErrorCode::INVALID_ARGUMENT, source + ": " + msg); };
  const std::string vocab_field = gguf ? "vocab_size (" + c.gguf_arch + ".vocab_size or tokenizer.ggml.tokens)"
                                       : std::string("vocab_size");
  for (const TensorDesc& t : tensors) {
    for (int64_t d : t.shape)
      if (d == 0) fail("tensor '" + t.name + "' has a zero dimension: shape " + shape_str(t.shape));
    if ((ends_with(t.name, ".weight") || ends_with(t.name, ".bias")) && !is_weight_dtype(t.dtype))
      fail("tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
           "; weights must be floating-point or a quantized format");
    if (is_embedding(t.name, gguf) || is_output(t.name, gguf)) {
      const int64_t rows = t.shape.empty() ? 1 : t.shape[0];
      if (t.shape.size() != 2 || rows != c.vocab_size)
        fail("tensor '" + t.name + "' has shape " + shape_str(t.shape) + ", expected [" + vocab_field + " = " +
             std::to_string(c.vocab_size) + ", hidden_size]");
      if (is_embedding(t.name, gguf) && num_tokens >= 0 && num_tokens != rows)
        fail("tokenizer.ggml.tokens has " + std::to_string(num_tokens) + " entries but tensor '" + t.name +
             "' has " + std::to_string(rows) + " rows");
    }
  }
}

}  // namespace oxyd::loader
