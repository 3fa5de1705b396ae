// ModelConfig from a Hugging Face config.json. Mirrors what transformers v5's config classes do
// with the same file: text_config for wrappers, default layer_types per family, rope_scaling /
// rope_theta / rope_local_base_freq (v4) folded into per-layer-type rope_parameters (v5). Every
// per-family default and odd key comes from the ConfigFamily the file resolves to.
#include <utility>

#include "core/error.h"
#include "loader/config_family.h"
#include "loader/model_validate.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
using detail::Obj;

struct Resolved {
  const ConfigFamily* family = nullptr;
  const HfModelType* type = nullptr;
};

Resolved by_model_type(const ConfigFamilies& fams, const std::string& mt) {
  for (const ConfigFamily* f : fams)
    for (const HfModelType& t : f->hf_model_types)
      if (mt == t.model_type) return {f, &t};
  return {};
}

Resolved by_architecture(const ConfigFamilies& fams, const std::string& arch) {
  for (const ConfigFamily* f : fams)
    for (const HfModelType& t : f->hf_model_types)
      if (arch == t.architecture) return {f, &t};
  // Heads on the same trunk (…ForSequenceClassification, …Model).
  for (const ConfigFamily* f : fams) {
    for (const HfModelType& t : f->hf_model_types) {
      std::string a = t.architecture;
      std::string stem = a.substr(0, a.find("For"));
      if (stem.size() < a.size() && arch.rfind(stem, 0) == 0 &&
          (arch.size() == stem.size() || arch.compare(stem.size(), 3, "For") == 0))
        return {f, &t};
    }
  }
  return {};
}

// The class defaults a wrapper's text_config is read over (null when there are none).
json text_config_defaults(const ConfigFamilies& fams, const json* tc) {
  const json* mt = tc && tc->contains("model_type") ? &(*tc)["model_type"] : nullptr;
  if (!mt || !mt->is_string()) return {};
  Resolved r = by_model_type(fams, mt->get<std::string>());
  if (!r.type || !r.type->text_config_defaults) return {};
  return json::parse(r.type->text_config_defaults);
}

Resolved resolve_family(const ConfigFamilies& fams, const Obj& top, const Obj& t, bool wrapped,
                        ModelConfig& c) {
  std::vector<std::string> archs = top.str_list("architectures");
  c.model_type = t.opt_str("model_type").value_or(top.opt_str("model_type").value_or(""));
  Resolved r = by_model_type(fams, c.model_type);
  if (!r.family && !archs.empty()) r = by_architecture(fams, archs[0]);
  if (!r.family && wrapped) r = by_model_type(fams, top.opt_str("model_type").value_or(""));
  if (!r.family) {
    std::string known;
    for (const ConfigFamily* f : fams)
      for (const HfModelType& ht : f->hf_model_types)
        known += std::string(known.empty() ? "" : ", ") + ht.model_type;
    throw Error(ErrorCode::UNSUPPORTED,
                c.source + ": model_type '" + c.model_type + "'" +
                    (archs.empty() ? "" : " (architecture " + archs[0] + ")") +
                    " is not a supported family; supported model_type values: " + known);
  }
  c.family = r.family->name;
  c.architecture = archs.empty() ? r.type->architecture : archs[0];
  return r;
}

void read_dims(const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  c.vocab_size = t.req_int("vocab_size");
  c.hidden_size = t.req_int("hidden_size");
  c.num_hidden_layers = t.req_int("num_hidden_layers");
  c.num_attention_heads = t.req_int("num_attention_heads");
  c.intermediate_size = fam.intermediate_size_optional ? t.get_int("intermediate_size", 0)
                                                       : t.req_int("intermediate_size");
  auto positive = [&](const char* k, int64_t v) {
    if (v <= 0) t.bad(k, "a positive integer");
  };
  positive("hidden_size", c.hidden_size);
  positive("num_hidden_layers", c.num_hidden_layers);
  if (c.num_hidden_layers > kMaxLayers)
    t.bad("num_hidden_layers", "at most " + std::to_string(kMaxLayers) + " layers");
  positive("num_attention_heads", c.num_attention_heads);
  positive("vocab_size", c.vocab_size);
  c.num_key_value_heads = t.get_int("num_key_value_heads", c.num_attention_heads);
  positive("num_key_value_heads", c.num_key_value_heads);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    t.bad("num_key_value_heads", "a divisor of num_attention_heads = " + std::to_string(c.num_attention_heads));
  if (!t.has("head_dim") && c.hidden_size % c.num_attention_heads != 0)
    t.bad("num_attention_heads", "a divisor of hidden_size = " + std::to_string(c.hidden_size) +
                                     " (there is no head_dim key)");
  c.head_dim = t.get_int("head_dim", c.hidden_size / c.num_attention_heads);
  positive("head_dim", c.head_dim);
  c.max_position_embeddings = t.get_int("max_position_embeddings", 0);
}

void read_flags(const Obj& top, const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  c.rms_norm_eps = t.get_num("rms_norm_eps", fam.rms_norm_eps);
  c.layer_norm_eps = t.get_num("layer_norm_eps", 1e-12);
  c.hidden_act = t.opt_str("hidden_activation").value_or(t.opt_str("hidden_act").value_or(fam.hidden_act));
  // Wrappers: the top-level flag is the one transformers ties by.
  c.tie_word_embeddings = top.opt_bool("tie_word_embeddings")
                              .value_or(t.get_bool("tie_word_embeddings", fam.tie_word_embeddings));
  c.attention_bias = t.get_bool("attention_bias", fam.attention_bias);
  c.mlp_bias = t.get_bool("mlp_bias", fam.mlp_bias);
  c.is_causal = fam.is_causal;
  if (auto b = t.opt_int("bos_token_id")) c.bos_token_id = *b;
  c.eos_token_id = t.int_list("eos_token_id");
  if (auto p = t.opt_int("pad_token_id")) c.pad_token_id = *p;

  if (auto sw = t.opt_int("sliding_window")) c.sliding_window = *sw;
  else if (fam.sliding_window) c.sliding_window = *fam.sliding_window;
  const json* bidir = t.find("use_bidirectional_attention");
  c.use_bidirectional_attention = bidir && bidir->is_boolean() && bidir->get<bool>();
  if (fam.hf_sliding_window) fam.hf_sliding_window(t, c);
}

void read_layer_types(const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  int64_t n = c.num_hidden_layers;
  if (t.has("layer_types")) {
    c.layer_types = t.str_list("layer_types");
    if (static_cast<int64_t>(c.layer_types.size()) != n)
      t.bad("layer_types", "a list of num_hidden_layers = " + std::to_string(n) + " entries");
    for (const auto& lt : c.layer_types)
      if (lt != kFullAttention && lt != kSlidingAttention && lt != kLinearAttention)
        t.bad("layer_types", "entries full_attention, sliding_attention or linear_attention (got '" + lt + "')");
  } else {
    c.layer_types.assign(n, kFullAttention);
    if (fam.hf_layer_types) fam.hf_layer_types(t, c);
  }
  if (fam.last_layer_full && n > 0) c.layer_types.back() = kFullAttention;
}

// One rope dict (v4 rope_scaling or a v5 rope_parameters entry) over the given base.
RopeParameters parse_rope(const Obj& r, RopeParameters p, const ConfigFamily& fam) {
  if (auto t = r.opt_str("rope_type")) p.rope_type = *t;
  else if (auto t2 = r.opt_str("type")) p.rope_type = *t2;
  if (p.rope_type == "su") p.rope_type = "longrope";  // Phi-3 legacy names
  if (p.rope_type == "mrope") p.rope_type = "default";
  if (fam.hf_yarn_is_longrope && p.rope_type == "yarn") p.rope_type = "longrope";
  p.rope_theta = r.get_num("rope_theta", p.rope_theta);
  p.factor = r.get_num("factor", p.factor);
  p.partial_rotary_factor = r.get_num("partial_rotary_factor", p.partial_rotary_factor);
  if (auto o = r.opt_int("original_max_position_embeddings")) p.original_max_position_embeddings = *o;
  p.low_freq_factor = r.get_num("low_freq_factor", p.low_freq_factor);
  p.high_freq_factor = r.get_num("high_freq_factor", p.high_freq_factor);
  p.beta_fast = r.get_num("beta_fast", p.beta_fast);
  p.beta_slow = r.get_num("beta_slow", p.beta_slow);
  if (auto v = r.opt_num("attention_factor")) p.attention_factor = *v;
  if (auto v = r.opt_num("mscale")) p.mscale = *v;
  if (auto v = r.opt_num("mscale_all_dim")) p.mscale_all_dim = *v;
  p.truncate = r.get_bool("truncate", p.truncate);
  if (r.has("short_factor")) p.short_factor = r.num_list("short_factor");
  if (r.has("long_factor")) p.long_factor = r.num_list("long_factor");
  if (r.has("mrope_section")) p.mrope_section = r.int_list("mrope_section");
  p.mrope_interleaved = r.get_bool("mrope_interleaved", p.mrope_interleaved);
  if (auto v = r.opt_num("llama_4_scaling_beta")) p.llama_4_scaling_beta = *v;
  return p;
}

// rope_parameters / rope_scaling over the family defaults and the v4 top-level keys.
void read_rope_dicts(const Obj& t, const ConfigFamily& fam, RopeParameters& full, RopeParameters& sliding) {
  const bool per_type = fam.rope_per_layer_type;
  const json* rp = t.find("rope_parameters");
  if (!rp) rp = t.find("rope_scaling");
  if (rp && !rp->is_object())
    t.bad(t.has("rope_parameters") ? "rope_parameters" : "rope_scaling", "an object");
  bool nested = rp && (rp->contains(kFullAttention) || rp->contains(kSlidingAttention));
  if (rp && nested) {
    for (const char* lt : {kFullAttention, kSlidingAttention}) {
      auto it = rp->find(lt);
      if (it == rp->end() || it->is_null()) continue;
      if (!it->is_object()) t.bad("rope_parameters", "per-layer-type objects");
      Obj sub(*it, t.source(), t.prefix() + "rope_parameters." + lt + ".");
      RopeParameters& dst = std::string(lt) == kFullAttention ? full : sliding;
      dst = parse_rope(sub, dst, fam);
    }
    if (!per_type && !rp->contains(kSlidingAttention)) sliding = full;
  } else if (rp) {
    Obj sub(*rp, t.source(), t.prefix() + (t.has("rope_parameters") ? "rope_parameters." : "rope_scaling."));
    full = parse_rope(sub, full, fam);
    // Per-layer-type families (v4): rope_scaling applies to global layers only; others: to all.
    if (!per_type) sliding = full;
  }
}

void read_ropes(const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  // Family defaults (transformers default_theta and default rope dicts).
  RopeParameters full = fam.hf_rope_full, sliding = fam.hf_rope_sliding;
  // v4 top-level keys.
  if (auto th = t.opt_num("rope_theta")) full.rope_theta = *th;
  if (auto pr = t.opt_num("partial_rotary_factor")) full.partial_rotary_factor = *pr;
  if (auto lb = t.opt_num("rope_local_base_freq")) sliding.rope_theta = *lb;
  if (!fam.rope_per_layer_type) sliding = full;
  read_rope_dicts(t, fam, full, sliding);
  // transformers standardize_rope_params: scaled types learn the pretraining length.
  for (RopeParameters* p : {&full, &sliding}) {
    if (p->rope_type == "llama3" || p->rope_type == "yarn" || p->rope_type == "longrope") {
      if (auto o = t.opt_int("original_max_position_embeddings")) p->original_max_position_embeddings = *o;
      else if (!p->original_max_position_embeddings) p->original_max_position_embeddings = c.max_position_embeddings;
    }
  }
  c.rope_parameters[kFullAttention] = full;
  c.rope_parameters[kSlidingAttention] = sliding;
}

void read_scales(const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  if (auto q = t.opt_num("query_pre_attn_scalar")) c.query_pre_attn_scalar = *q;
  else c.query_pre_attn_scalar = fam.query_pre_attn_scalar;
  c.attn_logit_softcapping = t.opt_num("attn_logit_softcapping");
  if (!t.contains("attn_logit_softcapping")) c.attn_logit_softcapping = fam.attn_logit_softcapping;
  c.final_logit_softcapping = t.opt_num("final_logit_softcapping");
  if (!t.contains("final_logit_softcapping")) c.final_logit_softcapping = fam.final_logit_softcapping;
  c.embedding_multiplier = t.get_num("embedding_multiplier", 1.0);
  c.attention_multiplier = t.opt_num("attention_multiplier");
  c.residual_multiplier = t.get_num("residual_multiplier", 1.0);
  c.logits_scaling = t.get_num("logits_scaling", 1.0);
  c.clip_qkv = t.opt_num("clip_qkv");
}

void read_moe_and_linear(const Obj& t, const ConfigFamily& fam, ModelConfig& c) {
  c.num_experts = t.get_int("num_experts", t.get_int("num_local_experts", 0));
  c.num_experts_per_tok = t.get_int("num_experts_per_tok", t.get_int("top_k_experts", 0));
  c.moe_intermediate_size = t.get_int("moe_intermediate_size", 0);
  if (c.moe_intermediate_size == 0 && fam.moe_width_is_intermediate_size)
    c.moe_intermediate_size = c.intermediate_size;
  c.shared_expert_intermediate_size = t.get_int("shared_expert_intermediate_size", 0);
  c.norm_topk_prob = t.get_bool("norm_topk_prob", fam.hf_norm_topk_prob);
  c.decoder_sparse_step = t.get_int("decoder_sparse_step", 1);
  c.mlp_only_layers = t.int_list("mlp_only_layers");
  c.swiglu_limit = t.get_num("swiglu_limit", fam.swiglu_limit);
  c.harmony_chat = fam.harmony_chat;
  c.swiglu_alpha = t.get_num("swiglu_alpha", 1.702);

  c.linear_conv_kernel_dim = t.get_int("linear_conv_kernel_dim", 0);
  c.linear_key_head_dim = t.get_int("linear_key_head_dim", 0);
  c.linear_value_head_dim = t.get_int("linear_value_head_dim", 0);
  c.linear_num_key_heads = t.get_int("linear_num_key_heads", 0);
  c.linear_num_value_heads = t.get_int("linear_num_value_heads", 0);
  bool has_linear = false;
  for (const auto& lt : c.layer_types) has_linear |= lt == kLinearAttention;
  if (has_linear)
    for (const char* k : {"linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim",
                          "linear_num_key_heads", "linear_num_value_heads"})
      if (t.get_int(k, 0) <= 0)
        t.bad(k, "a positive integer (the model has linear_attention layers)");
}

void read_dtype_and_quantization(const Obj& top, const Obj& t, ModelConfig& c) {
  if (auto d = top.opt_str("dtype")) c.dtype = *d;
  else if (auto d2 = top.opt_str("torch_dtype")) c.dtype = *d2;
  else if (auto d3 = t.opt_str("dtype")) c.dtype = *d3;
  else if (auto d4 = t.opt_str("torch_dtype")) c.dtype = *d4;

  const json* qc = top.find("quantization_config");
  if (!qc) qc = t.find("quantization_config");
  if (!qc) return;
  if (!qc->is_object()) top.bad("quantization_config", "an object");
  Obj q(*qc, c.source, "quantization_config.");
  QuantizationConfig out;
  out.quant_method = q.opt_str("quant_method").value_or("");
  if (out.quant_method.empty())
    throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": quantization_config has no quant_method");
  out.fmt = q.opt_str("fmt").value_or("");
  out.activation_scheme = q.opt_str("activation_scheme").value_or("");
  out.weight_block_size = q.int_list("weight_block_size");
  out.modules_to_not_convert = q.str_list("modules_to_not_convert");
  if (out.quant_method == "fp8" && !out.weight_block_size.empty() && out.weight_block_size.size() != 2)
    q.bad("weight_block_size", "two integers [rows, cols]");
  // AutoAWQ writes w_bit / q_group_size in its own quant_config.json; transformers' config.json
  // carries bits / group_size (both spellings accepted).
  out.bits = q.opt_int("bits").value_or(q.get_int("w_bit", 0));
  out.group_size = q.opt_int("group_size").value_or(q.get_int("q_group_size", 0));
  out.desc_act = q.get_bool("desc_act", false);
  out.version = q.opt_str("version").value_or("");
  out.checkpoint_format = q.opt_str("checkpoint_format").value_or("");
  c.quantization_config = std::move(out);
}

}  // namespace

ModelConfig config_from_hf_json(const json& top_json, const std::string& source,
                                const ConfigFamilies& families) {
  if (!top_json.is_object())
    throw Error(ErrorCode::INVALID_ARGUMENT, source + ": config.json must be a JSON object");
  Obj top(top_json, source, "");
  const json* tc = top.find("text_config");
  if (tc && !tc->is_object()) top.bad("text_config", "an object");
  // A wrapper's text_config is read over its class defaults (keys it has win, null included);
  // neither is copied.
  const json defaults = text_config_defaults(families, tc);
  Obj t(tc ? *tc : top_json, source, tc ? "text_config." : "", defaults.is_object() ? &defaults : nullptr);

  ModelConfig c;
  c.source = source;
  const ConfigFamily& fam = *resolve_family(families, top, t, tc != nullptr, c).family;
  read_dims(t, fam, c);
  read_flags(top, t, fam, c);
  read_layer_types(t, fam, c);
  read_ropes(t, fam, c);
  read_scales(t, fam, c);
  read_moe_and_linear(t, fam, c);
  if (fam.hf_extra) fam.hf_extra(t, c);
  read_dtype_and_quantization(top, t, c);
  if (tc && top.has("vision_config")) c.unsupported_inputs.push_back("images");
  if (tc && top.has("audio_config")) c.unsupported_inputs.push_back("audio");
  if (auto mpe = t.opt_int("max_position_embeddings"); mpe && *mpe <= 0)
    t.bad("max_position_embeddings", "a positive integer");
  validate_model_config(c);
  return c;
}

}  // namespace oxyd::loader
