// Config hooks shared by several families (loader::ConfigFamily's hook slots): the layer
// patterns of config.json and GGUF, and the keys only some families carry. A hook used by one
// family only lives in that family's file.
#pragma once

#include <cstdint>
#include <string>

#include "loader/config_family.h"

namespace oxyd::model::archs {

using loader::GgufMetadata;
using loader::ModelConfig;
using loader::RopeParameters;
using loader::detail::Obj;

// config.json layer patterns (called on all-full layer_types when the file has none).
/// Qwen2Config: sliding_window = None unless use_sliding_window.
void hf_sliding_window_if_used(const Obj& t, ModelConfig& c);
/// Qwen2Config: sliding only when there is a window and i >= max_window_layers (28).
void hf_layers_after_max_window(const Obj& t, ModelConfig& c);
/// One window on every layer, when there is a window.
void hf_layers_all_sliding(const Obj& t, ModelConfig& c);
/// Sliding on even layers (0, 2, …), full on odd ones.
void hf_layers_alternating(const Obj& t, ModelConfig& c);
/// Full every sliding_window_pattern-th layer (default 6), sliding otherwise.
void hf_layers_every_nth(const Obj& t, ModelConfig& c);
/// Full every full_attention_interval-th layer (default 4), linear attention otherwise.
void hf_layers_linear_interval(const Obj& t, ModelConfig& c);

// GGUF layer patterns (when attention.sliding_window_pattern is no per-layer array).
/// Sliding on even layers when there is a window.
void gguf_layers_alternating(const GgufMetadata& md, const std::string& p, ModelConfig& c);
/// Full every attention.sliding_window_pattern-th layer (default 6) when there is a window.
void gguf_layers_every_nth(const GgufMetadata& md, const std::string& p, ModelConfig& c);
/// Full every full_attention_interval-th layer (default 4), linear attention otherwise.
void gguf_layers_linear_interval(const GgufMetadata& md, const std::string& p, ModelConfig& c);

// GGUF rope and extra keys.
/// Local layers: plain rope with rope.freq_base_swa (10000), no scaling (llama.cpp).
void gguf_rope_local_plain(const GgufMetadata& md, const std::string& p, ModelConfig& c,
                           RopeParameters& full, RopeParameters& sliding, int64_t n_rot);
/// Interleaved M-RoPE on every layer.
void gguf_rope_mrope_interleaved(const GgufMetadata& md, const std::string& p, ModelConfig& c,
                                 RopeParameters& full, RopeParameters& sliding, int64_t n_rot);
/// Gated DeltaNet sizes from ssm.* keys.
void gguf_ssm_keys(const GgufMetadata& md, const std::string& p, ModelConfig& c);
/// GGUF stores no query_pre_attn_scalar: llama.cpp uses n_embd / n_head for the model size with
/// `layers_of_27b` layers, head_dim otherwise.
void gguf_query_scale_by_size(ModelConfig& c, int64_t layers_of_27b);

}  // namespace oxyd::model::archs
