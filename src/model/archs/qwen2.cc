// Qwen2ForCausalLM: Llama-style with q/k/v biases (read when present); NEOX rope in both formats.
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& qwen2() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "qwen2";

    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
