// Qwen3ForCausalLM: per-head q_norm / k_norm before RoPE; head_dim may differ from hidden/heads.
#include "model/archs/archs.h"

namespace oxyd::model::archs {

const ArchSpec& qwen3() {
  static const ArchSpec spec = [] {
    ArchSpec s;
    s.family = "qwen3";

    return s;
  }();
  return spec;
}

}  // namespace oxyd::model::archs
