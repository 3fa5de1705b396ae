// Qwen3_5ForConditionalGeneration (Qwen3.5 dense), text path. Hybrid layers: Gated DeltaNet
// (linear_attention: layers/gated_delta_net.h, per-request state in the KvCache) with a gated
// full-attention layer every full_attention_interval (q_proj rows [q | gate] per head, output
// · sigmoid(gate); q/k norms; partial rotary 0.25). Interleaved M-RoPE reduces to 1-D RoPE for
// text. RMSNorms are x̂·(1 + w) except the DeltaNet's gated output norm (plain w). The wrapper's
// text weights sit under model.language_model.; the vision tower is never read. GGUF (qwen35,
// llama.cpp's converter): attn_qkv / attn_gate / ssm_alpha / ssm_beta / ssm_out / ssm_conv1d /
// ssm_a (= −exp(A_log)) / ssm_dt.bias / ssm_norm, norms with the +1 baked in (ssm_norm excepted),
// post_attention_norm for the FFN norm, and value heads reordered from grouped-by-key-head to
// tiled (gguf_lin_v_heads_tiled): model/weights.cc undoes the order and the −exp at load.
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {

const Family& qwen3_5() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288,
      "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "hidden_act": "silu"})";
    Family f;
    f.config.name = "qwen3_5";
    f.config.hf_model_types = {{"qwen3_5_text", "Qwen3_5ForConditionalGeneration", defaults},
                               {"qwen3_5", "Qwen3_5ForConditionalGeneration"}};
    f.config.gguf_archs = {"qwen35"};
    f.config.gguf_architecture = "Qwen3_5ForConditionalGeneration";
    f.config.gguf_model_type = "qwen3_5_text";
    f.config.hf_rope_full.partial_rotary_factor = 0.25;
    f.config.hf_layer_types = hf_layers_linear_interval;
    f.config.gguf_rope = gguf_rope_mrope_interleaved;
    f.config.gguf_layer_types = gguf_layers_linear_interval;
    f.config.gguf_extra = gguf_ssm_keys;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.norm_one_plus_in_hf = true;
    f.arch.attn_output_gate = true;
    f.arch.gguf_lin_v_heads_tiled = true;
    auto lin = [](const char* s, const char* g) {
      return TensorName{std::string("model.layers.{}.linear_attn.") + s, std::string("blk.{}.") + g};
    };
    f.arch.names.lin_qkv = lin("in_proj_qkv.weight", "attn_qkv.weight");
    f.arch.names.lin_z = lin("in_proj_z.weight", "attn_gate.weight");
    f.arch.names.lin_b = lin("in_proj_b.weight", "ssm_beta.weight");
    f.arch.names.lin_a = lin("in_proj_a.weight", "ssm_alpha.weight");
    f.arch.names.lin_out = lin("out_proj.weight", "ssm_out.weight");
    f.arch.names.lin_conv = lin("conv1d.weight", "ssm_conv1d.weight");
    f.arch.names.lin_A_log = lin("A_log", "ssm_a");
    f.arch.names.lin_dt_bias = lin("dt_bias", "ssm_dt.bias");
    f.arch.names.lin_norm = lin("norm.weight", "ssm_norm.weight");
    f.arch.names.ffn_norm.gguf = "blk.{}.post_attention_norm.weight";
    f.arch.hf_prefix_fallbacks = {{"model.", "model.language_model."}};
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
