// Qwen3MoeForCausalLM: Qwen3 (per-head q/k norm) with mixture-of-experts MLPs (softmax router,
// top-k, norm_topk_prob) on the layers transformers' rule picks (mlp_only_layers,
// decoder_sparse_step); the others are dense. llama.cpp renormalizes the top-k expert weights for
// qwen3moe GGUFs (its converter writes no expert_weights_norm). The sliding window follows Qwen2.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen3_moe() {
  static const Family family = [] {
    Family f;
    f.config.name = "qwen3_moe";
    f.config.hf_model_types = {{"qwen3_moe", "Qwen3MoeForCausalLM"}};
    f.config.gguf_archs = {"qwen3moe"};
    f.config.gguf_architecture = "Qwen3MoeForCausalLM";
    f.config.gguf_model_type = "qwen3_moe";
    f.config.gguf_norm_topk_prob = true;
    f.config.hf_sliding_window = hf_sliding_window_if_used;
    f.config.hf_layer_types = hf_layers_after_max_window;
    f.runnable = true;
    f.arch.family = f.config.name;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
