// MistralForCausalLM: Llama's graph plus a sliding window on every layer (HF). llama.cpp converts it
// to the `llama` arch, which has no sliding window: a Mistral GGUF attends globally, as there.
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& mistral() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "mistral";
    s.gguf_rope_interleaved = true;
    s.gguf_ignores_sliding_window = true;
    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
