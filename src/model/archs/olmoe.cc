// OlmoeForCausalLM: recognised, not runnable yet (MoE). Its config names the expert width
// intermediate_size; llama.cpp does not renormalize its top-k expert weights.
#include "model/family.h"

namespace oxyd::model::archs {

const Family& olmoe() {
  static const Family family = [] {
    Family f;
    f.config.name = "olmoe";
    f.config.hf_model_types = {{"olmoe", "OlmoeForCausalLM"}};
    f.config.gguf_archs = {"olmoe"};
    f.config.gguf_architecture = "OlmoeForCausalLM";
    f.config.gguf_model_type = "olmoe";
    f.config.rms_norm_eps = 1e-5;
    f.config.moe_width_is_intermediate_size = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
