// Qwen3_5MoeForConditionalGeneration: recognised, not runnable yet. Qwen3.5's hybrid layers with
// MoE MLPs only (intermediate_size may be absent); top-k expert weights renormalized.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen3_5_moe() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "num_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "hidden_act": "silu"})";
    Family f;
    f.config.name = "qwen3_5_moe";
    f.config.hf_model_types = {{"qwen3_5_moe_text", "Qwen3_5MoeForConditionalGeneration", defaults},
                               {"qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"}};
    f.config.gguf_archs = {"qwen35moe"};
    f.config.gguf_architecture = "Qwen3_5MoeForConditionalGeneration";
    f.config.gguf_model_type = "qwen3_5_moe_text";
    f.config.intermediate_size_optional = true;
    f.config.hf_rope_full.partial_rotary_factor = 0.25;
    f.config.hf_norm_topk_prob = true;
    f.config.gguf_norm_topk_prob = true;
    f.config.hf_layer_types = hf_layers_linear_interval;
    f.config.gguf_rope = gguf_rope_mrope_interleaved;
    f.config.gguf_layer_types = gguf_layers_linear_interval;
    f.config.gguf_extra = gguf_ssm_keys;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
