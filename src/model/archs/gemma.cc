// GemmaForCausalLM (Gemma 1): x̂·(1 + w) norms, embeddings × √hidden, GeGLU (tanh gelu).
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& gemma() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "gemma";
    s.act = backend::Activation::GELU_TANH;
    s.norm_one_plus_in_hf = true;
    s.embed_scale_sqrt_hidden = true;
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
