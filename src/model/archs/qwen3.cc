// Qwen3ForCausalLM: per-head q_norm / k_norm before RoPE; head_dim may differ from hidden/heads.
// Sliding window as Qwen2. Qwen3-Embedding is this family with a sentence-transformers pipeline
// (last-token pooling, Normalize; loader/sentence_transformers.h).
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen3() {
  static const Family family = [] {
    Family f;
    f.config.name = "qwen3";
    f.config.hf_model_types = {{"qwen3", "Qwen3ForCausalLM"}};
    f.config.gguf_archs = {"qwen3"};
    f.config.gguf_architecture = "Qwen3ForCausalLM";
    f.config.gguf_model_type = "qwen3";
    f.config.hf_sliding_window = hf_sliding_window_if_used;
    f.config.hf_layer_types = hf_layers_after_max_window;
    f.runnable = true;
    f.arch.family = f.config.name;
    // Qwen3-Embedding checkpoints are saved from the bare Qwen3Model: no "model." prefix.
    f.arch.hf_prefix_fallbacks = {{"model.", ""}};
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
