// GraniteForCausalLM: Llama with embedding, attention, residual and logits multipliers (ModelConfig);
// llama.cpp's converter is a Llama subclass, so its GGUF carries the NORM-rope Q/K permutation.
#include "model/family.h"

namespace oxyd::model::archs {

const Family& granite() {
  static const Family family = [] {
    Family f;
    f.config.name = "granite";
    f.config.hf_model_types = {{"granite", "GraniteForCausalLM"}};
    f.config.gguf_archs = {"granite"};
    f.config.gguf_architecture = "GraniteForCausalLM";
    f.config.gguf_model_type = "granite";
    f.config.rms_norm_eps = 1e-5;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.gguf_rope_interleaved = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
