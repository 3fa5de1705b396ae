// GptOssForCausalLM: alternating sliding (window 128 unless the key is present, null included) and
// full layers with attention sinks and q/k/v/o biases, YaRN; every MLP a mixture of experts (router
// with bias, top-k then softmax, experts with biases and clamped SwiGLU, limit 7.0), experts in
// MXFP4 in real checkpoints; answers in harmony (chat/harmony_parser.cc).
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

// GptOssConfig: sliding_window = 128 by default, but an explicit null stays null.
void hf_sliding_window(const Obj& t, ModelConfig& c) {
  if (!t.contains("sliding_window")) c.sliding_window = 128;
}

// YaRN without truncating the ramp ends, as in transformers (rope_parameters truncate: false) and
// OpenAI's reference code; GGUF has no key for it (llama.cpp rounds them, ARCHITECTURES §2.16).
void gguf_rope(const GgufMetadata&, const std::string&, ModelConfig&, RopeParameters& full,
               RopeParameters& sliding, int64_t) {
  for (RopeParameters* r : {&full, &sliding})
    if (r->rope_type == "yarn") r->truncate = false;
}

}  // namespace

const Family& gpt_oss() {
  static const Family family = [] {
    Family f;
    f.config.name = "gpt_oss";
    f.config.hf_model_types = {{"gpt_oss", "GptOssForCausalLM"}};
    f.config.gguf_archs = {"gpt-oss", "gptoss"};
    f.config.gguf_architecture = "GptOssForCausalLM";
    f.config.gguf_model_type = "gpt_oss";
    f.config.rms_norm_eps = 1e-5;
    f.config.attention_bias = true;
    // GptOssConfig's rope_parameters when config.json has none: YaRN ×32 over 4096, no truncation.
    f.config.hf_rope_full.rope_theta = 150000.0;
    f.config.hf_rope_full.rope_type = "yarn";
    f.config.hf_rope_full.factor = 32.0;
    f.config.hf_rope_full.beta_fast = 32.0;
    f.config.hf_rope_full.beta_slow = 1.0;
    f.config.hf_rope_full.truncate = false;
    f.config.hf_rope_full.original_max_position_embeddings = 4096;
    f.config.moe_width_is_intermediate_size = true;
    f.config.swiglu_limit = 7.0;
    f.config.harmony_chat = true;
    f.config.hf_sliding_window = hf_sliding_window;
    f.config.hf_layer_types = hf_layers_alternating;
    f.config.gguf_layer_types = gguf_layers_alternating;
    f.config.gguf_rope = gguf_rope;
    // The runtime: attention sinks and o bias (default names), MoE with a biased router, top-k then
    // softmax, experts with biases and clamped SwiGLU (swiglu_limit), HF experts input-major.
    f.runnable = true;
    f.arch.family = f.config.name;
    TensorNames& n = f.arch.names;
    n.ffn_norm.gguf = "blk.{}.post_attention_norm.weight";  // HF post_attention_layernorm: before the MLP
    n.router = {"model.layers.{}.mlp.router.weight", "blk.{}.ffn_gate_inp.weight"};
    n.router_bias = {"model.layers.{}.mlp.router.bias", "blk.{}.ffn_gate_inp.bias"};
    n.expert_gate_up = {"model.layers.{}.mlp.experts.gate_up_proj", ""};
    n.expert_down_stacked = {"model.layers.{}.mlp.experts.down_proj", ""};
    // HF's one interleaved gate_up_proj_bias, split at load under these two names (experts_layout.h).
    n.expert_gate_bias = {"model.layers.{}.mlp.experts.gate_up_proj_bias:gate", "blk.{}.ffn_gate_exps.bias"};
    n.expert_up_bias = {"model.layers.{}.mlp.experts.gate_up_proj_bias:up", "blk.{}.ffn_up_exps.bias"};
    n.expert_down_bias = {"model.layers.{}.mlp.experts.down_proj_bias", "blk.{}.ffn_down_exps.bias"};
    f.arch.hf_experts_input_major = true;
    f.arch.router_softmax_after_topk = true;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
