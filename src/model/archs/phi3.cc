// Phi3ForCausalLM: fused qkv_proj [q | k | v] and gate_up_proj [gate | up] (split as row views at
// load, no copy); longrope factors (GGUF: rope_factors_long, chosen by context size like llama.cpp).
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& phi3() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "phi3";
    s.names.q = s.names.k = s.names.v = {"", ""};
    s.names.qkv = {"model.layers.{}.self_attn.qkv_proj.weight", "blk.{}.attn_qkv.weight"};
    s.names.gate = {"", ""};
    s.names.up = {"", ""};
    s.names.gate_up = {"model.layers.{}.mlp.gate_up_proj.weight", "blk.{}.ffn_up.weight"};
    s.names.gguf_rope_factors = "rope_factors_long.weight";
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
