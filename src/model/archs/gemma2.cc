// Gemma2ForCausalLM: Gemma plus sandwich norms, attention and final logit soft-caps and alternating
// sliding-window layers (the caps, scale and layer pattern come from ModelConfig).
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& gemma2() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "gemma2";
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
