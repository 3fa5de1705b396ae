#include "model/archs/gemma_style.h"

namespace oxyd::model::archs {

void set_gemma_sandwich_layer(Family& f) {
  f.config.tie_word_embeddings = true;
  f.config.hidden_act = "gelu_pytorch_tanh";
  f.config.sliding_window = 4096;
  f.config.query_pre_attn_scalar = 256;
  f.runnable = true;
  f.arch.family = f.config.name;
  f.arch.act = backend::Activation::GELU_TANH;
  f.arch.norm_one_plus_in_hf = true;
  f.arch.embed_scale_sqrt_hidden = true;
  TensorNames& n = f.arch.names;
  n.post_attn_norm = {"model.layers.{}.post_attention_layernorm.weight", "blk.{}.post_attention_norm.weight"};
  n.ffn_norm = {"model.layers.{}.pre_feedforward_layernorm.weight", "blk.{}.ffn_norm.weight"};
  n.post_ffw_norm = {"model.layers.{}.post_feedforward_layernorm.weight", "blk.{}.post_ffw_norm.weight"};
}

}  // namespace oxyd::model::archs
