// LlamaForCausalLM (Llama 2/3.x, TinyLlama): the default names and flags. llama.cpp's converter
// permutes Q/K rows for its NORM rope and writes llama3 scaling as the rope_freqs tensor.
#include "model/family.h"

namespace oxyd::model::archs {

const Family& llama() {
  static const Family family = [] {
    Family f;
    f.config.name = "llama";
    f.config.hf_model_types = {{"llama", "LlamaForCausalLM"}};
    f.config.gguf_archs = {"llama"};
    f.config.gguf_architecture = "LlamaForCausalLM";
    f.config.gguf_model_type = "llama";
    f.config.rms_norm_eps = 1e-5;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.gguf_rope_interleaved = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
