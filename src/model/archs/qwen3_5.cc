// Qwen3_5ForConditionalGeneration (Qwen3.5 dense): recognised, not runnable yet. Hybrid layers:
// Gated DeltaNet (linear_attention) with a full-attention layer every full_attention_interval;
// partial interleaved M-RoPE (text-only reduces to 1-D RoPE).
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen3_5() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288,
      "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "hidden_act": "silu"})";
    Family f;
    f.config.name = "qwen3_5";
    f.config.hf_model_types = {{"qwen3_5_text", "Qwen3_5ForConditionalGeneration", defaults},
                               {"qwen3_5", "Qwen3_5ForConditionalGeneration"}};
    f.config.gguf_archs = {"qwen35"};
    f.config.gguf_architecture = "Qwen3_5ForConditionalGeneration";
    f.config.gguf_model_type = "qwen3_5_text";
    f.config.hf_rope_full.partial_rotary_factor = 0.25;
    f.config.hf_layer_types = hf_layers_linear_interval;
    f.config.gguf_rope = gguf_rope_mrope_interleaved;
    f.config.gguf_layer_types = gguf_layers_linear_interval;
    f.config.gguf_extra = gguf_ssm_keys;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
