// Gemma3ForCausalLM: Gemma 2's layer with per-head q/k norms, 5:1 local/global layers and a separate
// RoPE theta for local layers (all from ModelConfig: layer_types, rope_parameters per layer type).
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& gemma3() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "gemma3";
    s.act = backend::Activation::GELU_TANH;
    s.norm_one_plus_in_hf = true;
    s.embed_scale_sqrt_hidden = true;
    s.names.post_attn_norm = {"model.layers.{}.post_attention_layernorm.weight", "blk.{}.post_attention_norm.weight"};
    s.names.ffn_norm = {"model.layers.{}.pre_feedforward_layernorm.weight", "blk.{}.ffn_norm.weight"};
    s.names.post_ffw_norm = {"model.layers.{}.post_feedforward_layernorm.weight", "blk.{}.post_ffw_norm.weight"};
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
