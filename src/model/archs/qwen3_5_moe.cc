// Qwen3_5MoeForConditionalGeneration (Qwen3.5-MoE; Qwen3.6 MoE ships the same class), text path:
// Qwen3.5's hybrid stack (qwen3_5.cc: Gated DeltaNet + gated full attention, (1 + w) norms) with an
// MoE block on every layer: softmax router over num_experts, top num_experts_per_tok, always
// renormalized (transformers 5.25's Qwen3_5MoeTopKRouter; the config class has no
// norm_topk_prob), SwiGLU experts of moe_intermediate_size, plus a shared expert of
// shared_expert_intermediate_size whose output is scaled by sigmoid(shared_expert_gate · h) and
// added. HF experts: per-expert tensors (what transformers 5.25's save_pretrained writes) or its
// in-memory fused mlp.experts.gate_up_proj [E, 2I, H] / down_proj [E, H, I]. GGUF (qwen35moe, llama.cpp's
// converter): qwen35's tensors plus ffn_gate_inp, ffn_{gate,up,down}_exps (the fused gate_up
// split), ffn_{gate,up,down}_shexp and ffn_gate_inp_shexp ([H]); llama.cpp renormalizes top-k.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

// Qwen3_5MoeTopKRouter always renormalizes the top-k weights, and every decoder layer is an MoE
// layer: the config class has no norm_topk_prob, decoder_sparse_step or mlp_only_layers, so a
// config.json that still carries them (Qwen3-Next style) changes nothing.
void hf_extra(const loader::detail::Obj&, loader::ModelConfig& c) {
  c.norm_topk_prob = true;
  c.decoder_sparse_step = 1;
  c.mlp_only_layers.clear();
}

}  // namespace

const Family& qwen3_5();

const Family& qwen3_5_moe() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "num_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "hidden_act": "silu"})";
    Family f;
    f.config.name = "qwen3_5_moe";
    f.config.hf_model_types = {{"qwen3_5_moe_text", "Qwen3_5MoeForConditionalGeneration", defaults},
                               {"qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"}};
    f.config.gguf_archs = {"qwen35moe"};
    f.config.gguf_architecture = "Qwen3_5MoeForConditionalGeneration";
    f.config.gguf_model_type = "qwen3_5_moe_text";
    f.config.intermediate_size_optional = true;
    f.config.hf_rope_full.partial_rotary_factor = 0.25;
    f.config.hf_norm_topk_prob = true;
    f.config.hf_extra = hf_extra;
    f.config.gguf_norm_topk_prob = true;
    f.config.hf_layer_types = hf_layers_linear_interval;
    f.config.gguf_rope = gguf_rope_mrope_interleaved;
    f.config.gguf_layer_types = gguf_layers_linear_interval;
    f.config.gguf_extra = gguf_ssm_keys;
    f.runnable = true;
    f.arch = qwen3_5().arch;  // the hybrid stack's names and flags
    f.arch.family = f.config.name;
    auto mlp = [](const char* s, const char* g) {
      return TensorName{std::string("model.layers.{}.mlp.") + s, std::string("blk.{}.") + g};
    };
    f.arch.names.shexp_gate = mlp("shared_expert.gate_proj.weight", "ffn_gate_shexp.weight");
    f.arch.names.shexp_up = mlp("shared_expert.up_proj.weight", "ffn_up_shexp.weight");
    f.arch.names.shexp_down = mlp("shared_expert.down_proj.weight", "ffn_down_shexp.weight");
    f.arch.names.shexp_gate_inp = mlp("shared_expert_gate.weight", "ffn_gate_inp_shexp.weight");
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
