// ModelConfig: the normalized hyperparameters the model layer builds a transformer from, read
// either from a Hugging Face config.json (text_config of *ForConditionalGeneration wrappers,
// rope_scaling / rope_parameters in v4 and v5 style, per-layer-type rope) or from GGUF metadata
// (<arch>.* keys with llama.cpp's defaults, llama-arch.cpp). Field names are the Hugging
// Face ones. Every optional HF key has its transformers default here; a missing required key is
// Error(INVALID_ARGUMENT) naming the file and key; an unknown family is Error(UNSUPPORTED).
// The readers are loader/config_family.h; the entry points with the family registry are
// model/model_config.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/gguf.h"

namespace oxyd::loader {

/// One RoPE configuration (HF modeling_rope_utils vocabulary).
struct RopeParameters {
  std::string rope_type = "default";  // default|linear|dynamic|llama3|yarn|longrope|proportional
  double rope_theta = 10000.0;
  double factor = 1.0;
  double partial_rotary_factor = 1.0;  // rotary dims = int(head_dim * partial_rotary_factor)
  std::optional<int64_t> original_max_position_embeddings;
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  std::optional<double> attention_factor;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  bool truncate = true;
  // longrope
  std::vector<double> short_factor;
  std::vector<double> long_factor;
  // M-RoPE (Qwen3.5; text-only reduces to 1-D RoPE)
  std::vector<int64_t> mrope_section;
  bool mrope_interleaved = false;
  // Ministral 3 query temperature: q *= 1 + beta * ln(1 + floor(pos / original_max_pos))
  std::optional<double> llama_4_scaling_beta;

  bool operator==(const RopeParameters&) const = default;
};

/// HF quantization_config (block FP8 checkpoints, docs/architecture.md §9; mxfp4 for gpt-oss;
/// AutoAWQ / GPTQ int4, loader/quant_checkpoint.h).
struct QuantizationConfig {
  std::string quant_method;                     // "fp8", "mxfp4", "awq", "gptq", …
  std::string fmt;                              // "e4m3"
  std::string activation_scheme;                // "dynamic"
  std::vector<int64_t> weight_block_size;       // [128, 128]
  std::vector<std::string> modules_to_not_convert;
  int64_t bits = 0;                             // awq / gptq: 4
  int64_t group_size = 0;                       // awq / gptq: 128 (-1: one group per row)
  bool desc_act = false;                        // gptq: act-order (g_idx permutes the groups)
  std::string version;                          // awq: "gemm" (the only layout read)
  std::string checkpoint_format;                // gptq: "gptq" (v1: zeros stored − 1) or "gptq_v2"
};

/// Sanity bound on num_hidden_layers (per-layer vectors are sized from it); real models have < 200.
inline constexpr int64_t kMaxLayers = 65536;

inline constexpr const char* kFullAttention = "full_attention";
inline constexpr const char* kSlidingAttention = "sliding_attention";
inline constexpr const char* kLinearAttention = "linear_attention";

struct ModelConfig {
  std::string source;        // config.json or GGUF path, for messages
  std::string architecture;  // HF class, as config.json names it (GGUF: the class llama.cpp maps)
  std::string model_type;    // HF model_type of the text model (a wrapper: its text_config's)
  /// Normalized family: the name of a model/archs/ registry entry (e.g. the file name there).
  std::string family;
  std::string gguf_arch;     // general.architecture when read from GGUF, else empty

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;   // dense MLP width (0 for all-MoE models without a dense MLP)
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;            // absent → hidden_size / num_attention_heads
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double layer_norm_eps = 1e-12;   // BERT LayerNorm
  std::string hidden_act = "silu"; // hidden_act or hidden_activation
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  bool is_causal = true;           // false for encoders (BERT)
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_id;  // HF allows an int or a list
  std::optional<int64_t> pad_token_id;

  /// Per-layer overrides from GGUF arrays (empty = uniform, use the scalar above).
  std::vector<int64_t> intermediate_size_per_layer;
  std::vector<int64_t> num_key_value_heads_per_layer;

  // Attention pattern.
  std::vector<std::string> layer_types;   // one per layer: full_ / sliding_ / linear_attention
  std::optional<int64_t> sliding_window;
  /// RoPE per layer type ("full_attention", "sliding_attention"); both always present.
  std::map<std::string, RopeParameters> rope_parameters;
  const RopeParameters& rope(const std::string& layer_type = kFullAttention) const;
  /// Layer l's attention and MLP geometry: head_dim and KV heads (a full layer's own
  /// global_head_dim / num_global_key_value_heads, or the per-layer GGUF array), MLP width (the
  /// per-layer array, or twice intermediate_size on a KV-sharing layer with use_double_wide_mlp),
  /// and kv_layer: the layer whose K/V it attends (itself, or for the last num_kv_shared_layers
  /// layers the last earlier layer of its type that computes its own).
  struct LayerDims {
    int64_t head_dim = 0, num_kv_heads = 0, intermediate_size = 0, kv_layer = 0;
  };
  LayerDims layer_dims(int64_t l) const;

  // Scales and caps.
  std::optional<double> query_pre_attn_scalar;   // Gemma 2/3: scale = qpas^-1/2
  std::optional<double> attn_logit_softcapping;
  std::optional<double> final_logit_softcapping;
  double embedding_multiplier = 1.0;             // Granite
  std::optional<double> attention_multiplier;    // Granite: replaces head_dim^-1/2
  double residual_multiplier = 1.0;              // Granite
  double logits_scaling = 1.0;                   // Granite: logits / logits_scaling
  std::optional<double> clip_qkv;                // OLMoE

  // MoE.
  int64_t num_experts = 0;             // num_experts / num_local_experts / expert_count
  int64_t num_experts_per_tok = 0;     // num_experts_per_tok / top_k_experts
  int64_t moe_intermediate_size = 0;   // expert width
  int64_t shared_expert_intermediate_size = 0;
  bool norm_topk_prob = false;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  double swiglu_limit = 0.0;           // gpt-oss clamp (7.0)
  double swiglu_alpha = 1.702;         // gpt-oss

  /// The model answers in OpenAI's harmony format (channels; chat/harmony_parser.cc): plain chat
  /// shows the final channel's text.
  bool harmony_chat = false;

  // Gated DeltaNet (Qwen3.5 linear_attention layers).
  int64_t linear_conv_kernel_dim = 0;
  int64_t linear_key_head_dim = 0;
  int64_t linear_value_head_dim = 0;
  int64_t linear_num_key_heads = 0;
  int64_t linear_num_value_heads = 0;

  // Gemma 4.
  int64_t global_head_dim = 0;              // head_dim of full layers (0 = head_dim)
  int64_t num_global_key_value_heads = 0;   // KV heads of full layers (0 = num_key_value_heads)
  bool attention_k_eq_v = false;
  int64_t hidden_size_per_layer_input = 0;  // PLE width (0 = no PLE)
  int64_t vocab_size_per_layer_input = 0;
  int64_t num_kv_shared_layers = 0;
  bool use_double_wide_mlp = false;
  bool enable_moe_block = false;
  bool use_bidirectional_attention = false;

  // BERT.
  int64_t type_vocab_size = 0;
  std::string position_embedding_type = "absolute";
  int pooling_type = -1;   // GGUF pooling_type (llama.cpp enum: 0 none, 1 mean, 2 cls, 3 last, 4 rank);
                           // HF: from sentence-transformers' modules.json / 1_Pooling/config.json
  bool embedding_normalize = false;  // L2-normalise pooled embeddings (sentence-transformers Normalize)
  /// sentence-transformers prompts by name ("query" → "Instruct: ...\nQuery:"), prepended to inputs.
  std::map<std::string, std::string> embedding_prompts;
  int64_t max_seq_length = 0;        // sentence_bert_config.json: the longest input (0 = positions)
  int64_t position_offset = 0;       // first absolute position id (RoBERTa: pad_token_id + 1)
  int64_t num_labels = 0;            // sequence-classification outputs (cross-encoders), 0 = none
  /// Which output's probability is a pair's relevance score where there are several (softmax over
  /// them): -1 the last (HF checkpoints: the "relevant" class; Qwen3-Reranker's "yes" of [no, yes]),
  /// 0 the first (a GGUF reranker, as llama.cpp's server scores it: [yes, no]).
  int64_t rank_score_label = -1;
  /// A causal LM scored as a reranker (e.g. yes/no): its labels are these tokens' logits at the
  /// last position (num_labels of them; the last is the "relevant" one), resolved to ids through
  /// the tokenizer. Empty: the labels come from a classification head.
  std::vector<std::string> rank_label_tokens;
  /// The text one (query, document) pair becomes for such a reranker: prefix and suffix are
  /// tokenized with their special tokens; body has {query} and {document} and is tokenized as
  /// user text. All empty: the tokenizer's pair encoding (encoder cross-encoders).
  struct RankPrompt {
    std::string prefix, body, suffix;
  } rank_prompt;

  /// Inputs of a multimodal wrapper this engine does not take: "images" (config.json has a
  /// vision_config), "audio" (audio_config). Their towers' weights are never loaded; text only.
  std::vector<std::string> unsupported_inputs;

  std::optional<QuantizationConfig> quantization_config;
  std::string dtype;       // torch_dtype / dtype of the checkpoint ("bfloat16"), if given

  /// The text config JSON (HF only) for anything not normalized here.
  nlohmann::json raw;
};

}  // namespace oxyd::loader
