// Mistral3ForConditionalGeneration (Ministral 3): recognised, not runnable yet. Its text config
// carries YaRN rope with a query temperature (llama_4_scaling_beta); one window on every layer.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& ministral3() {
  static const Family family = [] {
    Family f;
    f.config.name = "ministral3";
    f.config.hf_model_types = {{"ministral3", "Mistral3ForConditionalGeneration",
                                R"({"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 262144, "rms_norm_eps": 1e-05, "bos_token_id": 1,
      "eos_token_id": 2, "pad_token_id": 11, "hidden_act": "silu",
      "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
        "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
        "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1}})"}};
    f.config.gguf_archs = {"mistral3"};
    f.config.gguf_architecture = "Mistral3ForConditionalGeneration";
    f.config.gguf_model_type = "ministral3";
    f.config.rms_norm_eps = 1e-5;
    f.config.hf_rope_full.rope_theta = 1e6;
    f.config.hf_layer_types = hf_layers_all_sliding;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
