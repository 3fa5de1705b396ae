// GemmaForCausalLM (Gemma 1): x̂·(1 + w) norms, embeddings × √hidden, GeGLU (tanh gelu).
#include "model/family.h"

namespace oxyd::model::archs {

const Family& gemma() {
  static const Family family = [] {
    Family f;
    f.config.name = "gemma";
    f.config.hf_model_types = {{"gemma", "GemmaForCausalLM"}};
    f.config.gguf_archs = {"gemma"};
    f.config.gguf_architecture = "GemmaForCausalLM";
    f.config.gguf_model_type = "gemma";
    f.config.tie_word_embeddings = true;
    f.config.hidden_act = "gelu_pytorch_tanh";
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.act = backend::Activation::GELU_TANH;
    f.arch.norm_one_plus_in_hf = true;
    f.arch.embed_scale_sqrt_hidden = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
