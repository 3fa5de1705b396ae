// Qwen3MoeForCausalLM: recognised, not runnable yet (MoE). llama.cpp renormalizes the top-k
// expert weights for qwen3moe; the sliding window follows Qwen2.
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
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
