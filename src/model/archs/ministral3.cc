// Mistral3ForConditionalGeneration (Ministral 3), text path: Llama's graph with YaRN rope and a query
// temperature after RoPE, q · (1 + llama_4_scaling_beta · ln(1 + floor(pos / original_max_pos)))
// (AttentionSpec, from rope_parameters). The wrapper's text weights sit under
// model.language_model. (transformers v5) or language_model.model. (v4); its vision tower and
// projector are never read (`show` says images are not supported). A text-only Ministral3 config
// (model_type ministral3, model.layers.*) loads the same way. GGUF: llama.cpp's `mistral3` arch,
// NORM rope on Q/K rows its converter permuted.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

// llama.cpp stores mscale_all_dim as rope.scaling.yarn_log_multiplier and takes mscale = 1
// (llama-context.cpp); the YaRN attention factor is then m(f, 1) / m(f, mscale_all_dim).
void gguf_yarn_mscale(const GgufMetadata&, const std::string&, ModelConfig&, RopeParameters& full,
                      RopeParameters& sliding, int64_t) {
  for (RopeParameters* r : {&full, &sliding})
    if (r->mscale_all_dim && !r->mscale) r->mscale = 1.0;
}

}  // namespace

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
    f.config.gguf_rope = gguf_yarn_mscale;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.gguf_rope_interleaved = true;
    f.arch.hf_prefix_fallbacks = {{"model.", "model.language_model."},
                                  {"model.", "language_model.model."},
                                  {"lm_head.", "language_model.lm_head."}};
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
