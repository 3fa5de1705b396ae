// Gemma4ForConditionalGeneration / Gemma4ForCausalLM (text; a multimodal checkpoint's vision and
// audio towers are never read, `show` says so). Sliding layers 5:1 with the last layer always
// global; global layers have their own head_dim and KV heads (ModelConfig::layer_dims) and
// proportional partial RoPE; q/k norms with attention scale 1 and a weightless v norm; values
// from the raw k projection on attention_k_eq_v global layers; plain x̂·w norms (not 1 + w);
// per-layer input embeddings (PLE); the last num_kv_shared_layers layers attend the K/V of the
// last earlier layer of their type (no cache of their own), with double-wide MLPs when
// use_double_wide_mlp; an optional MoE block beside the dense MLP; a learned scalar per layer;
// final logit soft-cap (transformers 5.25 modeling_gemma4.py).
#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

using loader::kFullAttention;
using loader::kSlidingAttention;
using nlohmann::json;

// Gemma4TextConfig's default pattern ignores sliding_window_pattern: a global layer every 6th.
void hf_layer_types(const Obj&, ModelConfig& c) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    if ((i + 1) % 6) c.layer_types[i] = kSlidingAttention;
}

// "05" → 5 (per_layer_config keys are zero-padded layer indices); -1 if not a small number.
int64_t layer_index(const std::string& k) {
  if (k.empty() || k.size() > 9) return -1;
  int64_t v = 0;
  for (char ch : k) {
    if (ch < '0' || ch > '9') return -1;
    v = v * 10 + (ch - '0');
  }
  return v;
}

// per_layer_config of the first full layer overrides its head_dim and KV heads.
void hf_first_global_layer(const Obj& t, ModelConfig& c) {
  const json* plc = t.find("per_layer_config");
  if (!plc || !plc->is_object()) return;
  for (size_t i = 0; i < c.layer_types.size(); ++i) {
    if (c.layer_types[i] != kFullAttention) continue;
    for (const auto& [k, v] : plc->items()) {
      if (!v.is_object() || layer_index(k) != static_cast<int64_t>(i)) continue;
      Obj o(v, t.source(), t.prefix() + "per_layer_config." + k + ".");
      c.global_head_dim = o.get_int("head_dim", c.global_head_dim);
      c.num_global_key_value_heads = o.get_int("num_key_value_heads", c.num_global_key_value_heads);
    }
    break;
  }
}

void hf_extra(const Obj& t, ModelConfig& c) {
  c.global_head_dim = t.get_int("global_head_dim", 512);
  c.attention_k_eq_v = t.get_bool("attention_k_eq_v", false);
  c.num_global_key_value_heads = c.attention_k_eq_v
                                     ? t.get_int("num_global_key_value_heads", c.num_key_value_heads)
                                     : c.num_key_value_heads;
  hf_first_global_layer(t, c);
  c.hidden_size_per_layer_input = t.get_int("hidden_size_per_layer_input", 0);
  c.vocab_size_per_layer_input = t.get_int("vocab_size_per_layer_input", c.vocab_size);
  c.num_kv_shared_layers = t.get_int("num_kv_shared_layers", 0);
  c.use_double_wide_mlp = t.get_bool("use_double_wide_mlp", false);
  c.enable_moe_block = t.get_bool("enable_moe_block", false);
  if (!c.enable_moe_block) c.num_experts = 0;  // num_experts without the block is unused
  c.norm_topk_prob = true;                     // the router always renormalises its top-k
}

// key_length = global_head_dim (full layers), key_length_swa = head_dim (sliding layers).
void gguf_rope(const GgufMetadata& md, const std::string& p, ModelConfig& c, RopeParameters& full,
               RopeParameters& sliding, int64_t n_rot) {
  gguf_rope_local_plain(md, p, c, full, sliding, n_rot);
  c.global_head_dim = c.head_dim;
  c.head_dim = md.get<int64_t>(p + "attention.key_length_swa", c.head_dim);
  int64_t n_rot_swa = md.get<int64_t>(p + "rope.dimension_count_swa", c.head_dim);
  sliding.partial_rotary_factor = static_cast<double>(n_rot_swa) / static_cast<double>(c.head_dim);
  full.partial_rotary_factor = static_cast<double>(n_rot) / static_cast<double>(c.global_head_dim);
}

void gguf_extra(const GgufMetadata& md, const std::string& p, ModelConfig& c) {
  // head_count_kv array: sliding layers → num_key_value_heads, full → num_global_key_value_heads.
  c.num_global_key_value_heads = c.num_key_value_heads;
  const std::vector<int64_t> kv = c.num_key_value_heads_per_layer;
  for (size_t i = 0; i < kv.size(); ++i) {
    if (c.layer_types[i] == kFullAttention) c.num_global_key_value_heads = kv[i];
    else c.num_key_value_heads = kv[i];
  }
  c.num_kv_shared_layers = md.get<int64_t>(p + "attention.shared_kv_layers", 0);
  c.hidden_size_per_layer_input = md.get<int64_t>(p + "embedding_length_per_layer_input", 0);
  c.enable_moe_block = c.num_experts > 0;
  c.use_double_wide_mlp = !c.intermediate_size_per_layer.empty();
}

}  // namespace

const Family& gemma4() {
  static const Family family = [] {
    const char* defaults = R"({"vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 2,
      "eos_token_id": 1, "pad_token_id": 0, "sliding_window": 512,
      "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
      "hidden_activation": "gelu_pytorch_tanh"})";
    Family f;
    f.config.name = "gemma4";
    f.config.hf_model_types = {{"gemma4_text", "Gemma4ForConditionalGeneration", defaults},
                               {"gemma4", "Gemma4ForConditionalGeneration"}};
    f.config.gguf_archs = {"gemma4"};
    f.config.gguf_architecture = "Gemma4ForConditionalGeneration";
    f.config.gguf_model_type = "gemma4_text";
    f.config.tie_word_embeddings = true;
    f.config.hidden_act = "gelu_pytorch_tanh";
    f.config.sliding_window = 512;
    f.config.rope_per_layer_type = true;
    f.config.hf_rope_full.rope_type = "proportional";
    f.config.hf_rope_full.partial_rotary_factor = 0.25;
    f.config.hf_rope_full.rope_theta = 1e6;
    f.config.hf_rope_sliding.rope_theta = 10000.0;
    f.config.gguf_norm_topk_prob = true;
    f.config.last_layer_full = true;
    f.config.hf_layer_types = hf_layer_types;
    f.config.hf_extra = hf_extra;
    f.config.gguf_rope = gguf_rope;
    f.config.gguf_layer_types = gguf_layers_every_nth;
    f.config.gguf_extra = gguf_extra;
    f.runnable = true;
    f.arch.family = f.config.name;
    f.arch.act = backend::Activation::GELU_TANH;
    f.arch.embed_scale_sqrt_hidden = true;
    f.arch.attention_scale = 1.0f;
    f.arch.attn_v_norm = true;
    f.arch.v_from_k_when_absent = true;
    f.arch.moe_beside_dense = true;
    TensorNames& n = f.arch.names;
    const std::string L = "model.layers.{}.";
    n.post_attn_norm = {L + "post_attention_layernorm.weight", "blk.{}.post_attention_norm.weight"};
    n.ffn_norm = {L + "pre_feedforward_layernorm.weight", "blk.{}.ffn_norm.weight"};
    n.post_ffw_norm = {L + "post_feedforward_layernorm.weight", "blk.{}.post_ffw_norm.weight"};
    n.post_ffw_norm_1 = {L + "post_feedforward_layernorm_1.weight", "blk.{}.post_ffw_norm_1.weight"};
    n.pre_ffw_norm_2 = {L + "pre_feedforward_layernorm_2.weight", "blk.{}.pre_ffw_norm_2.weight"};
    n.post_ffw_norm_2 = {L + "post_feedforward_layernorm_2.weight", "blk.{}.post_ffw_norm_2.weight"};
    n.router = {L + "router.proj.weight", "blk.{}.ffn_gate_inp.weight"};
    n.router_scale = {L + "router.scale", "blk.{}.ffn_gate_inp.scale"};
    n.expert_scale = {L + "router.per_expert_scale", "blk.{}.ffn_down_exps.scale"};
    n.expert_gate_up = {L + "experts.gate_up_proj", "blk.{}.ffn_gate_up_exps.weight"};
    n.expert_down_stacked = {L + "experts.down_proj", "blk.{}.ffn_down_exps.weight"};
    n.ple_embed = {"model.embed_tokens_per_layer.weight", "per_layer_token_embd.weight"};
    n.ple_model_proj = {"model.per_layer_model_projection.weight", "per_layer_model_proj.weight"};
    n.ple_proj_norm = {"model.per_layer_projection_norm.weight", "per_layer_proj_norm.weight"};
    n.ple_gate = {L + "per_layer_input_gate.weight", "blk.{}.inp_gate.weight"};
    n.ple_proj = {L + "per_layer_projection.weight", "blk.{}.proj.weight"};
    n.ple_post_norm = {L + "post_per_layer_input_norm.weight", "blk.{}.post_norm.weight"};
    n.layer_scale = {L + "layer_scalar", "blk.{}.layer_output_scale.weight"};
    f.arch.hf_prefix_fallbacks = {{"model.", "model.language_model."}, {"lm_head.", "model.language_model.lm_head."}};
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
