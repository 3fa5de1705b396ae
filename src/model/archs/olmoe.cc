// OlmoeForCausalLM: every MLP a mixture of experts (softmax router, top-k, no renormalisation by
// default; llama.cpp does not renormalize either). q_norm / k_norm are RMSNorms over the whole q
// [nh·hd] and k [nkv·hd] projections, before RoPE. Its config names the expert width
// intermediate_size.
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
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.qk_norm_full_width = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
