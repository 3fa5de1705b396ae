// LlamaForCausalLM (Llama 2/3.x, TinyLlama): the default names and flags. llama.cpp's converter
// permutes Q/K rows for its NORM rope and writes llama3 scaling as the rope_freqs tensor.
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& llama() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "llama";
    s.gguf_rope_interleaved = true;
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
