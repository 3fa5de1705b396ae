// Phi3ForCausalLM: fused qkv_proj [q | k | v] and gate_up_proj [gate | up] (split as row views at
// load, no copy); longrope factors (GGUF: rope_factors_long, chosen by context size like llama.cpp).
// Its configs name longrope "su" or "yarn"; one window on every layer (llama.cpp ignores it).
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& phi3() {
  static const Family family = [] {
    Family f;
    f.config.name = "phi3";
    f.config.hf_model_types = {{"phi3", "Phi3ForCausalLM"}};
    f.config.gguf_archs = {"phi3"};
    f.config.gguf_architecture = "Phi3ForCausalLM";
    f.config.gguf_model_type = "phi3";
    f.config.rms_norm_eps = 1e-5;
    f.config.hf_yarn_is_longrope = true;
    f.config.hf_layer_types = hf_layers_all_sliding;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.names.q = f.arch.names.k = f.arch.names.v = {"", ""};
    f.arch.names.qkv = {"model.layers.{}.self_attn.qkv_proj.weight", "blk.{}.attn_qkv.weight"};
    f.arch.names.gate = {"", ""};
    f.arch.names.up = {"", ""};
    f.arch.names.gate_up = {"model.layers.{}.mlp.gate_up_proj.weight", "blk.{}.ffn_up.weight"};
    f.arch.names.gguf_rope_factors = "rope_factors_long.weight";
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
