// Gemma2ForCausalLM: Gemma plus sandwich norms, attention and final logit soft-caps and alternating
// sliding-window layers (the caps, scale and layer pattern come from ModelConfig).
#include "model/archs/config_hooks.h"
#include "model/archs/gemma_style.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

// 46 layers = the 27B size (llama.cpp's LLM_TYPE_27B for gemma2).
void gguf_query_scale(const GgufMetadata&, const std::string&, ModelConfig& c) { gguf_query_scale_by_size(c, 46); }

}  // namespace

const Family& gemma2() {
  static const Family family = [] {
    Family f;
    f.config.name = "gemma2";
    f.config.hf_model_types = {{"gemma2", "Gemma2ForCausalLM"}};
    f.config.gguf_archs = {"gemma2"};
    f.config.gguf_architecture = "Gemma2ForCausalLM";
    f.config.gguf_model_type = "gemma2";
    f.config.attn_logit_softcapping = 50.0;
    f.config.final_logit_softcapping = 30.0;
    f.config.hf_layer_types = hf_layers_alternating;
    f.config.gguf_layer_types = gguf_layers_alternating;
    f.config.gguf_extra = gguf_query_scale;
    set_gemma_sandwich_layer(f);
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
