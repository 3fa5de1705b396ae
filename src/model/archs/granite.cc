// GraniteForCausalLM: Llama with embedding, attention, residual and logits multipliers (ModelConfig);
// llama.cpp's converter is a Llama subclass, so its GGUF carries the NORM-rope Q/K permutation.
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& granite() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "granite";
    s.gguf_rope_interleaved = true;
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
