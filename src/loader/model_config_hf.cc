// ModelConfig from a Hugging Face config.json. Mirrors what transformers v5's config classes do
// with the same file: text_config for wrappers, default layer_types per family, rope_scaling /
// rope_theta / rope_local_base_freq (v4) folded into per-layer-type rope_parameters (v5).
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "core/json_parse.h"
#include "loader/json_fields.h"
#include "loader/model_config.h"
#include "loader/model_validate.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
using detail::Obj;

struct FamilyInfo {
  const char* model_type;
  const char* family;
  const char* architecture;
  bool tie_default;
};

// HF model_type (text model) → family, canonical class, default of tie_word_embeddings.
constexpr FamilyInfo kFamilies[] = {
    {"llama", "llama", "LlamaForCausalLM", false},
    {"mistral", "mistral", "MistralForCausalLM", false},
    {"ministral3", "ministral3", "Mistral3ForConditionalGeneration", false},
    {"qwen2", "qwen2", "Qwen2ForCausalLM", false},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", false},
    {"qwen3_moe", "qwen3_moe", "Qwen3MoeForCausalLM", false},
    {"qwen3_5_text", "qwen3_5", "Qwen3_5ForConditionalGeneration", false},
    {"qwen3_5", "qwen3_5", "Qwen3_5ForConditionalGeneration", false},
    {"qwen3_5_moe_text", "qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration", false},
    {"qwen3_5_moe", "qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration", false},
    {"gemma", "gemma", "GemmaForCausalLM", true},
    {"gemma2", "gemma2", "Gemma2ForCausalLM", true},
    {"gemma3_text", "gemma3", "Gemma3ForCausalLM", true},
    {"gemma3", "gemma3", "Gemma3ForConditionalGeneration", true},
    {"gemma4_text", "gemma4", "Gemma4ForConditionalGeneration", true},
    {"gemma4", "gemma4", "Gemma4ForConditionalGeneration", true},
    {"phi3", "phi3", "Phi3ForCausalLM", false},
    {"granite", "granite", "GraniteForCausalLM", false},
    {"olmoe", "olmoe", "OlmoeForCausalLM", false},
    {"gpt_oss", "gpt_oss", "GptOssForCausalLM", false},
    {"bert", "bert", "BertModel", true},
    {"roberta", "bert", "RobertaModel", true},
    {"xlm-roberta", "bert", "XLMRobertaModel", true},
};

// Defaults of the text config classes (transformers v5), applied under a wrapper's text_config:
// sub-configs are saved as a diff against their class, so real files omit these keys (e.g.
// google/gemma-3-4b-it's text_config has no num_attention_heads). Printed from the classes by
// the snippet in tools/gen_config_fixtures.py's header.
const char* text_config_defaults(const std::string& model_type) {
  if (model_type == "gemma3_text")
    return R"({"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 2,
      "eos_token_id": 1, "pad_token_id": 0, "sliding_window": 4096, "query_pre_attn_scalar": 256,
      "hidden_activation": "gelu_pytorch_tanh"})";
  if (model_type == "gemma4_text")
    return R"({"vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 2,
      "eos_token_id": 1, "pad_token_id": 0, "sliding_window": 512,
      "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
      "hidden_activation": "gelu_pytorch_tanh"})";
  if (model_type == "qwen3_5_text")
    return R"({"vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288,
      "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "hidden_act": "silu"})";
  if (model_type == "qwen3_5_moe_text")
    return R"({"vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
      "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "linear_conv_kernel_dim": 4,
      "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "num_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "hidden_act": "silu"})";
  if (model_type == "ministral3")
    return R"({"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 262144, "rms_norm_eps": 1e-05, "bos_token_id": 1,
      "eos_token_id": 2, "pad_token_id": 11, "hidden_act": "silu",
      "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
        "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
        "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1}})";
  if (model_type == "mistral")
    return R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "bos_token_id": 1,
      "eos_token_id": 2, "sliding_window": 4096, "hidden_act": "silu"})";
  return nullptr;
}

const FamilyInfo* family_by_model_type(const std::string& mt) {
  for (const auto& f : kFamilies)
    if (mt == f.model_type) return &f;
  return nullptr;
}

const FamilyInfo* family_by_architecture(const std::string& arch) {
  for (const auto& f : kFamilies)
    if (arch == f.architecture) return &f;
  // Heads on the same trunk (…ForSequenceClassification, …Model).
  for (const auto& f : kFamilies) {
    std::string a = f.architecture;
    std::string stem = a.substr(0, a.find("For"));
    if (stem.size() < a.size() && arch.rfind(stem, 0) == 0 &&
        (arch.size() == stem.size() || arch.compare(stem.size(), 3, "For") == 0))
      return &f;
  }
  return nullptr;
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

// One rope dict (v4 rope_scaling or a v5 rope_parameters entry) over the given base.
RopeParameters parse_rope(const Obj& r, RopeParameters p, const ModelConfig& c) {
  if (auto t = r.opt_str("rope_type")) p.rope_type = *t;
  else if (auto t2 = r.opt_str("type")) p.rope_type = *t2;
  if (p.rope_type == "su") p.rope_type = "longrope";  // Phi-3 legacy names
  if (p.rope_type == "mrope") p.rope_type = "default";
  if (c.family == "phi3" && p.rope_type == "yarn") p.rope_type = "longrope";
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

void parse_ropes(const Obj& t, ModelConfig& c) {
  // Family defaults (transformers default_theta and default rope dicts).
  RopeParameters full, sliding;
  if (c.family == "gpt_oss") full.rope_theta = 150000.0;
  if (c.family == "ministral3") full.rope_theta = 1e6;
  if (c.family == "qwen3_5" || c.family == "qwen3_5_moe") full.partial_rotary_factor = 0.25;
  bool per_type = c.family == "gemma3" || c.family == "gemma4";
  if (c.family == "gemma3") {
    full.rope_theta = 1e6;
    sliding.rope_theta = 10000.0;
  }
  if (c.family == "gemma4") {
    full.rope_type = "proportional";
    full.partial_rotary_factor = 0.25;
    full.rope_theta = 1e6;
    sliding.rope_theta = 10000.0;
  }
  // v4 top-level keys.
  if (auto th = t.opt_num("rope_theta")) full.rope_theta = *th;
  if (auto pr = t.opt_num("partial_rotary_factor")) full.partial_rotary_factor = *pr;
  if (auto lb = t.opt_num("rope_local_base_freq")) sliding.rope_theta = *lb;
  if (!per_type) sliding = full;

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
      dst = parse_rope(sub, dst, c);
    }
    if (!per_type && !rp->contains(kSlidingAttention)) sliding = full;
  } else if (rp) {
    Obj sub(*rp, t.source(), t.prefix() + (t.has("rope_parameters") ? "rope_parameters." : "rope_scaling."));
    full = parse_rope(sub, full, c);
    // Gemma 3 v4: rope_scaling applies to global layers only; other families: to all.
    if (!per_type) sliding = full;
  }
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

void default_layer_types(const Obj& t, ModelConfig& c) {
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
    for (int64_t i = 0; i < n; ++i) {
      std::string& lt = c.layer_types[i];
      const std::string& f = c.family;
      if (f == "gemma2" || f == "gpt_oss") {
        if ((i + 1) % 2) lt = kSlidingAttention;
      } else if (f == "gemma3") {
        int64_t pat = t.get_int("sliding_window_pattern", t.get_int("_sliding_window_pattern", 6));
        if (pat > 0 && (i + 1) % pat) lt = kSlidingAttention;
      } else if (f == "gemma4") {
        if ((i + 1) % 6) lt = kSlidingAttention;
      } else if (f == "qwen3_5" || f == "qwen3_5_moe") {
        int64_t iv = t.get_int("full_attention_interval", 4);
        if (iv > 0 && (i + 1) % iv) lt = kLinearAttention;
      } else if (f == "qwen2" || f == "qwen3" || f == "qwen3_moe") {
        // Qwen2Config: sliding only when use_sliding_window and i >= max_window_layers.
        if (c.sliding_window && i >= t.get_int("max_window_layers", 28))
          lt = kSlidingAttention;
      } else if (f == "mistral" || f == "ministral3" || f == "phi3") {
        if (c.sliding_window) lt = kSlidingAttention;  // one window on every layer
      }
    }
  }
  if (c.family == "gemma4" && n > 0) c.layer_types.back() = kFullAttention;
}

}  // namespace

const RopeParameters& ModelConfig::rope(const std::string& layer_type) const {
  auto it = rope_parameters.find(layer_type == kSlidingAttention ? kSlidingAttention : kFullAttention);
  if (it == rope_parameters.end())
    throw Error(ErrorCode::INTERNAL, source + ": ModelConfig has no rope parameters");
  return it->second;
}

ModelConfig load_hf_config(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::IO, "cannot open '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  return parse_hf_config(parse_json_bounded(text, path), path);
}

ModelConfig parse_hf_config(const json& top_json, const std::string& source) {
  if (!top_json.is_object())
    throw Error(ErrorCode::INVALID_ARGUMENT, source + ": config.json must be a JSON object");
  Obj top(top_json, source, "");
  const json* tc = top.find("text_config");
  if (tc && !tc->is_object()) top.bad("text_config", "an object");
  // A wrapper's text_config is read over its class defaults (keys it has win, null included);
  // neither is copied.
  json defaults_json;
  if (tc) {
    const json* mt = tc->contains("model_type") ? &(*tc)["model_type"] : nullptr;
    const char* defaults = mt && mt->is_string() ? text_config_defaults(mt->get<std::string>()) : nullptr;
    if (defaults) defaults_json = json::parse(defaults);
  }
  Obj t(tc ? *tc : top_json, source, tc ? "text_config." : "", defaults_json.is_object() ? &defaults_json : nullptr);

  ModelConfig c;
  c.source = source;
  std::vector<std::string> archs = top.str_list("architectures");
  c.model_type = t.opt_str("model_type").value_or(top.opt_str("model_type").value_or(""));
  const FamilyInfo* fam = family_by_model_type(c.model_type);
  if (!fam && !archs.empty()) fam = family_by_architecture(archs[0]);
  if (!fam && tc) fam = family_by_model_type(top.opt_str("model_type").value_or(""));
  if (!fam) {
    std::string known;
    for (const auto& f : kFamilies) known += std::string(known.empty() ? "" : ", ") + f.model_type;
    throw Error(ErrorCode::UNSUPPORTED,
                source + ": model_type '" + c.model_type + "'" +
                    (archs.empty() ? "" : " (architecture " + archs[0] + ")") +
                    " is not a supported family; supported model_type values: " + known);
  }
  c.family = fam->family;
  c.architecture = archs.empty() ? fam->architecture : archs[0];

  c.vocab_size = t.req_int("vocab_size");
  c.hidden_size = t.req_int("hidden_size");
  c.num_hidden_layers = t.req_int("num_hidden_layers");
  c.num_attention_heads = t.req_int("num_attention_heads");
  c.intermediate_size = c.family == "qwen3_5_moe" ? t.get_int("intermediate_size", 0)
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
  c.rms_norm_eps = t.get_num("rms_norm_eps", c.family == "gpt_oss" || c.family == "phi3" ||
                                                     c.family == "olmoe" || c.family == "granite" ||
                                                     c.family == "llama" || c.family == "mistral" ||
                                                     c.family == "ministral3"
                                                 ? 1e-5 : 1e-6);
  c.layer_norm_eps = t.get_num("layer_norm_eps", 1e-12);
  c.hidden_act = t.opt_str("hidden_activation").value_or(
      t.opt_str("hidden_act").value_or(c.family.rfind("gemma", 0) == 0 ? "gelu_pytorch_tanh"
                                       : c.family == "bert"            ? "gelu"
                                                                       : "silu"));
  // Wrappers: the top-level flag is the one transformers ties by.
  c.tie_word_embeddings = top.opt_bool("tie_word_embeddings")
                              .value_or(t.get_bool("tie_word_embeddings", fam->tie_default));
  c.attention_bias = t.get_bool("attention_bias", c.family == "qwen2" || c.family == "gpt_oss" ||
                                                      c.family == "bert");
  c.mlp_bias = t.get_bool("mlp_bias", c.family == "bert");
  c.is_causal = c.family != "bert";
  if (auto b = t.opt_int("bos_token_id")) c.bos_token_id = *b;
  c.eos_token_id = t.int_list("eos_token_id");
  if (auto p = t.opt_int("pad_token_id")) c.pad_token_id = *p;

  if (auto sw = t.opt_int("sliding_window")) c.sliding_window = *sw;
  if ((c.family == "qwen2" || c.family == "qwen3" || c.family == "qwen3_moe") &&
      !t.get_bool("use_sliding_window", false))
    c.sliding_window.reset();  // Qwen2Config: sliding_window = None unless use_sliding_window
  if (c.family == "gemma2" && !t.has("sliding_window")) c.sliding_window = 4096;
  if (c.family == "gemma3" && !t.has("sliding_window")) c.sliding_window = 4096;
  if (c.family == "gemma4" && !t.has("sliding_window")) c.sliding_window = 512;
  if (c.family == "gpt_oss" && !t.has("sliding_window") && !t.contains("sliding_window"))
    c.sliding_window = 128;
  const json* bidir = t.find("use_bidirectional_attention");
  c.use_bidirectional_attention = bidir && bidir->is_boolean() && bidir->get<bool>();
  if (c.family == "gemma3" && c.use_bidirectional_attention) {
    // Gemma3TextConfig: encoders attend both ways; the window becomes an exclusive bound.
    c.is_causal = false;
    if (c.sliding_window) c.sliding_window = *c.sliding_window / 2 + 1;
  }
  default_layer_types(t, c);
  parse_ropes(t, c);

  if (auto q = t.opt_num("query_pre_attn_scalar")) c.query_pre_attn_scalar = *q;
  else if (c.family == "gemma2" || c.family == "gemma3") c.query_pre_attn_scalar = 256;
  c.attn_logit_softcapping = t.opt_num("attn_logit_softcapping");
  if (c.family == "gemma2" && !t.contains("attn_logit_softcapping")) c.attn_logit_softcapping = 50.0;
  c.final_logit_softcapping = t.opt_num("final_logit_softcapping");
  if (c.family == "gemma2" && !t.contains("final_logit_softcapping")) c.final_logit_softcapping = 30.0;
  c.embedding_multiplier = t.get_num("embedding_multiplier", 1.0);
  c.attention_multiplier = t.opt_num("attention_multiplier");
  c.residual_multiplier = t.get_num("residual_multiplier", 1.0);
  c.logits_scaling = t.get_num("logits_scaling", 1.0);
  c.clip_qkv = t.opt_num("clip_qkv");

  c.num_experts = t.get_int("num_experts", t.get_int("num_local_experts", 0));
  c.num_experts_per_tok = t.get_int("num_experts_per_tok", t.get_int("top_k_experts", 0));
  c.moe_intermediate_size = t.get_int("moe_intermediate_size", 0);
  if (c.moe_intermediate_size == 0 && (c.family == "olmoe" || c.family == "gpt_oss"))
    c.moe_intermediate_size = c.intermediate_size;  // these name the expert width intermediate_size
  c.shared_expert_intermediate_size = t.get_int("shared_expert_intermediate_size", 0);
  c.norm_topk_prob = t.get_bool("norm_topk_prob", c.family == "qwen3_5_moe");
  c.decoder_sparse_step = t.get_int("decoder_sparse_step", 1);
  c.mlp_only_layers = t.int_list("mlp_only_layers");
  c.swiglu_limit = t.get_num("swiglu_limit", c.family == "gpt_oss" ? 7.0 : 0.0);
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

  if (c.family == "gemma4") {
    c.global_head_dim = t.get_int("global_head_dim", 512);
    c.attention_k_eq_v = t.get_bool("attention_k_eq_v", false);
    c.num_global_key_value_heads = c.attention_k_eq_v
                                       ? t.get_int("num_global_key_value_heads", c.num_key_value_heads)
                                       : c.num_key_value_heads;
    if (const json* plc = t.find("per_layer_config"); plc && plc->is_object()) {
      for (size_t i = 0; i < c.layer_types.size(); ++i) {
        if (c.layer_types[i] != kFullAttention) continue;
        for (const auto& [k, v] : plc->items()) {
          if (!v.is_object() || layer_index(k) != static_cast<int64_t>(i)) continue;
          Obj o(v, source, t.prefix() + "per_layer_config." + k + ".");
          c.global_head_dim = o.get_int("head_dim", c.global_head_dim);
          c.num_global_key_value_heads = o.get_int("num_key_value_heads", c.num_global_key_value_heads);
        }
        break;
      }
    }
    c.hidden_size_per_layer_input = t.get_int("hidden_size_per_layer_input", 0);
    c.vocab_size_per_layer_input = t.get_int("vocab_size_per_layer_input", c.vocab_size);
    c.num_kv_shared_layers = t.get_int("num_kv_shared_layers", 0);
    c.use_double_wide_mlp = t.get_bool("use_double_wide_mlp", false);
    c.enable_moe_block = t.get_bool("enable_moe_block", false);
  }
  if (c.family == "bert") {
    c.type_vocab_size = t.get_int("type_vocab_size", 2);
    c.position_embedding_type = t.opt_str("position_embedding_type").value_or("absolute");
  }
  if (auto d = top.opt_str("dtype")) c.dtype = *d;
  else if (auto d2 = top.opt_str("torch_dtype")) c.dtype = *d2;
  else if (auto d3 = t.opt_str("dtype")) c.dtype = *d3;
  else if (auto d4 = t.opt_str("torch_dtype")) c.dtype = *d4;

  const json* qc = top.find("quantization_config");
  const char* qprefix = "quantization_config";
  if (!qc) qc = t.find("quantization_config");
  if (qc) {
    if (!qc->is_object()) top.bad(qprefix, "an object");
    Obj q(*qc, source, "quantization_config.");
    QuantizationConfig out;
    out.quant_method = q.opt_str("quant_method").value_or("");
    if (out.quant_method.empty())
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  source + ": quantization_config has no quant_method");
    out.fmt = q.opt_str("fmt").value_or("");
    out.activation_scheme = q.opt_str("activation_scheme").value_or("");
    out.weight_block_size = q.int_list("weight_block_size");
    out.modules_to_not_convert = q.str_list("modules_to_not_convert");
    if (out.quant_method == "fp8" && !out.weight_block_size.empty() && out.weight_block_size.size() != 2)
      q.bad("weight_block_size", "two integers [rows, cols]");
    c.quantization_config = std::move(out);
  }
  if (auto mpe = t.opt_int("max_position_embeddings"); mpe && *mpe <= 0)
    t.bad("max_position_embeddings", "a positive integer");
  validate_model_config(c);
  return c;
}

}  // namespace oxyd::loader
