// ConfigFamily: what the config readers need to know about one model family, declared by the
// family itself (model/archs/<family>.cc) and handed in by the caller. The readers here are
// family-agnostic: every per-family default is a field below and every odd key a hook, so no code
// in loader/ names a family. Not the family's tensor names or runtime flags (model::ArchSpec).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/gguf.h"
#include "loader/json_fields.h"
#include "loader/model_config.h"

namespace oxyd::loader {

/// One Hugging Face model_type of a family and the class it stands for when config.json names no
/// architectures. `text_config_defaults`: JSON of the text config class's defaults (transformers
/// v5), read under a wrapper's text_config whose model_type is this one (nullptr: none).
struct HfModelType {
  const char* model_type;
  const char* architecture;
  const char* text_config_defaults = nullptr;
};

/// Reads family-only keys of config.json (`t`: the text config) into `c`.
using HfHook = void (*)(const detail::Obj& t, ModelConfig& c);
/// Reads family-only GGUF keys (`p`: "<general.architecture>.") into `c`.
using GgufHook = void (*)(const GgufMetadata& md, const std::string& p, ModelConfig& c);
/// Adjusts the two GGUF rope dicts; `n_rot` is rope.dimension_count (or its default).
using GgufRopeHook = void (*)(const GgufMetadata& md, const std::string& p, ModelConfig& c,
                              RopeParameters& full, RopeParameters& sliding, int64_t n_rot);

struct ConfigFamily {
  std::string name;                        // ModelConfig::family
  std::vector<HfModelType> hf_model_types; // first match wins, in registry order
  std::vector<std::string> gguf_archs;     // general.architecture values (empty: none)
  std::string gguf_architecture;           // ModelConfig::architecture read from GGUF
  std::string gguf_model_type;             // ModelConfig::model_type read from GGUF

  // Defaults of keys the file may omit (the transformers config class / llama.cpp loader).
  bool tie_word_embeddings = false;
  bool intermediate_size_optional = false;  // all-MoE models without a dense MLP
  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";
  bool attention_bias = false;
  bool mlp_bias = false;
  bool is_causal = true;
  std::optional<int64_t> sliding_window;    // HF: when the key is absent or null
  RopeParameters hf_rope_full;              // before rope_theta / rope_parameters are read
  RopeParameters hf_rope_sliding;           // used only when rope_per_layer_type
  bool rope_per_layer_type = false;         // sliding layers keep their own rope (Gemma 3/4)
  bool hf_yarn_is_longrope = false;         // rope_type "yarn" means longrope (Phi-3)
  std::optional<double> query_pre_attn_scalar;   // HF: when the key is absent
  std::optional<double> attn_logit_softcapping;  // HF: when the key is absent (null stays null)
  std::optional<double> final_logit_softcapping;
  bool moe_width_is_intermediate_size = false;   // HF: intermediate_size names the expert width
  bool hf_norm_topk_prob = false;
  bool gguf_norm_topk_prob = false;
  double swiglu_limit = 0.0;
  bool last_layer_full = false;              // the last layer is always full attention
  bool harmony_chat = false;                 // ModelConfig::harmony_chat

  // Hooks (nullptr: nothing to do), in the order the readers call them.
  HfHook hf_sliding_window = nullptr;  // after sliding_window is read, before layer_types
  HfHook hf_layer_types = nullptr;     // the pattern when config.json has no layer_types
  HfHook hf_extra = nullptr;           // family-only keys after the common ones
  GgufRopeHook gguf_rope = nullptr;    // after the common rope keys
  GgufHook gguf_layer_types = nullptr; // the pattern when sliding_window_pattern is no array
  GgufHook gguf_extra = nullptr;       // family-only keys after the common ones
};

/// The families a reader may resolve to, in registry order.
using ConfigFamilies = std::vector<const ConfigFamily*>;

/// config.json object → ModelConfig; `source` names it in errors. Error(UNSUPPORTED) when no
/// family of `families` claims its model_type or architecture.
ModelConfig config_from_hf_json(const nlohmann::json& config, const std::string& source,
                                const ConfigFamilies& families);
/// GGUF metadata → ModelConfig. `tensors`, when given, decides tie_word_embeddings (no
/// output.weight) and Phi-3 style longrope (rope_factors_long.weight).
ModelConfig config_from_gguf(const GgufMetadata& md, const std::vector<GgufTensorInfo>* tensors,
                             const ConfigFamilies& families);

}  // namespace oxyd::loader
