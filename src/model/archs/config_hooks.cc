// Shared config hooks (config_hooks.h). Each mirrors the transformers config class or the
// llama.cpp loader named beside it.
#include "model/archs/config_hooks.h"

#include "core/error.h"

namespace oxyd::model::archs {

using loader::kFullAttention;
using loader::kLinearAttention;
using loader::kSlidingAttention;

void hf_sliding_window_if_used(const Obj& t, ModelConfig& c) {
  if (!t.get_bool("use_sliding_window", false)) c.sliding_window.reset();
}

void hf_layers_after_max_window(const Obj& t, ModelConfig& c) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (c.sliding_window && i >= t.get_int("max_window_layers", 28)) c.layer_types[i] = kSlidingAttention;
}

void hf_layers_all_sliding(const Obj&, ModelConfig& c) {
  if (c.sliding_window) c.layer_types.assign(c.num_hidden_layers, kSlidingAttention);
}

void hf_layers_alternating(const Obj&, ModelConfig& c) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if ((i + 1) % 2) c.layer_types[i] = kSlidingAttention;
}

void hf_layers_every_nth(const Obj& t, ModelConfig& c) {
  const int64_t n = t.get_int("sliding_window_pattern", t.get_int("_sliding_window_pattern", 6));
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (n > 0 && (i + 1) % n) c.layer_types[i] = kSlidingAttention;
}

void hf_layers_linear_interval(const Obj& t, ModelConfig& c) {
  const int64_t iv = t.get_int("full_attention_interval", 4);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (iv > 0 && (i + 1) % iv) c.layer_types[i] = kLinearAttention;
}

void gguf_layers_alternating(const GgufMetadata&, const std::string&, ModelConfig& c) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (c.sliding_window && (i + 1) % 2) c.layer_types[i] = kSlidingAttention;
}

void gguf_layers_every_nth(const GgufMetadata& md, const std::string& p, ModelConfig& c) {
  const std::string key = p + "attention.sliding_window_pattern";
  const int64_t n = md.has(key) ? md.get<int64_t>(key) : 6;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (c.sliding_window && n > 0 && (i + 1) % n) c.layer_types[i] = kSlidingAttention;
}

void gguf_layers_linear_interval(const GgufMetadata& md, const std::string& p, ModelConfig& c) {
  const int64_t iv = md.get<int64_t>(p + "full_attention_interval", 4);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if (iv > 0 && (i + 1) % iv) c.layer_types[i] = kLinearAttention;
}

void gguf_rope_local_plain(const GgufMetadata& md, const std::string& p, ModelConfig&, RopeParameters&,
                           RopeParameters& sliding, int64_t) {
  sliding = RopeParameters{};
  sliding.rope_theta = md.get<double>(p + "rope.freq_base_swa", 10000.0);
}

void gguf_rope_mrope_interleaved(const GgufMetadata&, const std::string&, ModelConfig&, RopeParameters& full,
                                 RopeParameters& sliding, int64_t) {
  full.mrope_interleaved = true;
  sliding = full;
}

void gguf_ssm_keys(const GgufMetadata& md, const std::string& p, ModelConfig& c) {
  c.linear_conv_kernel_dim = md.get<int64_t>(p + "ssm.conv_kernel");
  c.linear_key_head_dim = md.get<int64_t>(p + "ssm.state_size");
  c.linear_num_key_heads = md.get<int64_t>(p + "ssm.group_count");
  const std::string rank_key = p + "ssm.time_step_rank";
  c.linear_num_value_heads = md.get<int64_t>(rank_key);
  if (c.linear_num_value_heads <= 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, md.source() + ": metadata key '" + rank_key + "' = " +
                                                 std::to_string(c.linear_num_value_heads) +
                                                 ", expected a positive integer");
  c.linear_value_head_dim = md.get<int64_t>(p + "ssm.inner_size") / c.linear_num_value_heads;
}

void gguf_query_scale_by_size(ModelConfig& c, int64_t layers_of_27b) {
  c.query_pre_attn_scalar = c.num_hidden_layers == layers_of_27b
                                ? static_cast<double>(c.hidden_size / c.num_attention_heads)
                                : static_cast<double>(c.head_dim);
}

}  // namespace oxyd::model::archs
