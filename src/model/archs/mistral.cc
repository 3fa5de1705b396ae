// MistralForCausalLM: Llama's graph plus a sliding window on every layer (HF). llama.cpp converts it
// to the `llama` arch, which has no sliding window: a Mistral GGUF attends globally, as there.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& mistral() {
  static const Family family = [] {
    Family f;
    f.config.name = "mistral";
    f.config.hf_model_types = {{"mistral", "MistralForCausalLM",
                                R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 1,
      "eos_token_id": 2, "sliding_window": 4096, "hidden_act": "silu"})"}};
    f.config.rms_norm_eps = 1e-5;
    f.config.hf_layer_types = hf_layers_all_sliding;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.gguf_rope_interleaved = true;
    f.arch.gguf_ignores_sliding_window = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
