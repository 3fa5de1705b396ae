// Qwen2ForCausalLM: Llama-style with q/k/v biases (read when present); NEOX rope in both formats.
// Qwen2Config: a sliding window only with use_sliding_window, on layers >= max_window_layers.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen2() {
  static const Family family = [] {
    Family f;
    f.config.name = "qwen2";
    f.config.hf_model_types = {{"qwen2", "Qwen2ForCausalLM"}};
    f.config.gguf_archs = {"qwen2"};
    f.config.gguf_architecture = "Qwen2ForCausalLM";
    f.config.gguf_model_type = "qwen2";
    f.config.attention_bias = true;
    f.config.hf_sliding_window = hf_sliding_window_if_used;
    f.config.hf_layer_types = hf_layers_after_max_window;
    f.runnable = true;
    f.arch.family = f.config.name;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
