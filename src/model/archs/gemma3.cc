// Gemma3ForCausalLM: Gemma 2's layer with per-head q/k norms, 5:1 local/global layers and a separate
// RoPE theta for local layers (all from ModelConfig: layer_types, rope_parameters per layer type).
// Gemma3TextConfig with use_bidirectional_attention (encoders): not causal, the window halved.
#include "model/archs/config_hooks.h"
#include "model/archs/gemma_style.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

// Gemma3TextConfig: encoders attend both ways; the window becomes an exclusive bound.
void hf_bidirectional(const Obj&, ModelConfig& c) {
  if (!c.use_bidirectional_attention) return;
  c.is_causal = false;
  if (c.sliding_window) c.sliding_window = *c.sliding_window / 2 + 1;
}

// 62 layers = the 27B size (llama.cpp's LLM_TYPE_27B for gemma3).
void gguf_query_scale(const GgufMetadata&, const std::string&, ModelConfig& c) { gguf_query_scale_by_size(c, 62); }

}  // namespace

const Family& gemma3() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 2,
      "eos_token_id": 1, "pad_token_id": 0, "sliding_window": 4096, "query_pre_attn_scalar": 256,
      "hidden_activation": "gelu_pytorch_tanh"})";
    Family f;
    f.config.name = "gemma3";
    f.config.hf_model_types = {{"gemma3_text", "Gemma3ForCausalLM", defaults},
                               {"gemma3", "Gemma3ForConditionalGeneration"}};
    f.config.gguf_archs = {"gemma3"};
    f.config.gguf_architecture = "Gemma3ForCausalLM";
    f.config.gguf_model_type = "gemma3_text";
    f.config.rope_per_layer_type = true;
    f.config.hf_rope_full.rope_theta = 1e6;
    f.config.hf_rope_sliding.rope_theta = 10000.0;
    f.config.hf_sliding_window = hf_bidirectional;
    f.config.hf_layer_types = hf_layers_every_nth;
    f.config.gguf_rope = gguf_rope_local_plain;
    f.config.gguf_layer_types = gguf_layers_every_nth;
    f.config.gguf_extra = gguf_query_scale;
    set_gemma_sandwich_layer(f);
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
