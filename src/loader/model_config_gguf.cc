// ModelConfig from GGUF metadata: `<arch>.*` keys (llama.cpp's llama-arch.cpp) with llama.cpp's
// loader defaults (head_count_kv = head_count, key_length = n_embd / n_head, rope.dimension_count
// = key_length, rope.freq_base 10000) and its hard-coded per-arch facts (Gemma 2/3 query scale,
// SWA patterns, gpt-oss SwiGLU limit). Values the converter changed (norm +1, Q/K permutation)
// are the model layer's business; this only reports hyperparameters.
#include <algorithm>

#include "core/error.h"
#include "loader/model_config.h"
#include "loader/model_validate.h"

namespace oxyd::loader {
namespace {

struct ArchInfo {
  const char* arch;
  const char* family;
  const char* architecture;
  const char* model_type;
};

constexpr ArchInfo kArchs[] = {
    {"llama", "llama", "LlamaForCausalLM", "llama"},
    {"mistral3", "ministral3", "Mistral3ForConditionalGeneration", "ministral3"},
    {"qwen2", "qwen2", "Qwen2ForCausalLM", "qwen2"},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", "qwen3"},
    {"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM", "qwen3_moe"},
    {"qwen35", "qwen3_5", "Qwen3_5ForConditionalGeneration", "qwen3_5_text"},
    {"qwen35moe", "qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe_text"},
    {"gemma", "gemma", "GemmaForCausalLM", "gemma"},
    {"gemma2", "gemma2", "Gemma2ForCausalLM", "gemma2"},
    {"gemma3", "gemma3", "Gemma3ForCausalLM", "gemma3_text"},
    {"gemma4", "gemma4", "Gemma4ForConditionalGeneration", "gemma4_text"},
    {"phi3", "phi3", "Phi3ForCausalLM", "phi3"},
    {"granite", "granite", "GraniteForCausalLM", "granite"},
    {"olmoe", "olmoe", "OlmoeForCausalLM", "olmoe"},
    {"gpt-oss", "gpt_oss", "GptOssForCausalLM", "gpt_oss"},
    {"gptoss", "gpt_oss", "GptOssForCausalLM", "gpt_oss"},
    {"bert", "bert", "BertModel", "bert"},
};

}  // namespace

ModelConfig model_config_from_gguf(const GgufMetadata& md,
                                   const std::vector<GgufTensorInfo>* tensors) {
  ModelConfig c;
  c.source = md.source();
  c.gguf_arch = md.architecture();
  const ArchInfo* info = nullptr;
  for (const auto& a : kArchs)
    if (c.gguf_arch == a.arch) info = &a;
  if (!info) {
    std::string known;
    for (const auto& a : kArchs) known += std::string(known.empty() ? "" : ", ") + a.arch;
    throw Error(ErrorCode::UNSUPPORTED, md.source() + ": general.architecture '" + c.gguf_arch +
                                            "' is not supported; supported: " + known);
  }
  c.family = info->family;
  c.architecture = info->architecture;
  c.model_type = info->model_type;
  const std::string p = c.gguf_arch + ".";
  auto k = [&](const char* suffix) { return p + suffix; };
  auto pos = [&](const std::string& key, int64_t v) {
    if (v <= 0)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  md.source() + ": metadata key '" + key + "' = " + std::to_string(v) +
                      ", expected a positive integer");
    return v;
  };
  auto max_of = [](const std::vector<int64_t>& v) {
    return v.empty() ? int64_t{0} : *std::max_element(v.begin(), v.end());
  };
  auto uniform = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; });
  };

  c.num_hidden_layers = pos(k("block_count"), md.get<int64_t>(k("block_count")));
  if (c.num_hidden_layers > kMaxLayers)
    throw Error(ErrorCode::INVALID_ARGUMENT, md.source() + ": metadata key '" + k("block_count") +
                                                 "' = " + std::to_string(c.num_hidden_layers) +
                                                 " is implausible (at most " +
                                                 std::to_string(kMaxLayers) + ")");
  c.hidden_size = pos(k("embedding_length"), md.get<int64_t>(k("embedding_length")));
  c.max_position_embeddings = md.get<int64_t>(k("context_length"));
  // head_count / head_count_kv / feed_forward_length may be per-layer arrays.
  auto per_layer = [&](const std::string& key) {
    std::vector<int64_t> v = md.get_scalar_or_array<int64_t>(key);
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != c.num_hidden_layers)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  md.source() + ": metadata key '" + key + "' has " + std::to_string(v.size()) +
                      " entries, expected 1 or block_count = " + std::to_string(c.num_hidden_layers));
    return v;
  };
  std::vector<int64_t> heads = per_layer(k("attention.head_count"));
  c.num_attention_heads = pos(k("attention.head_count"), max_of(heads));
  std::vector<int64_t> kv = md.has(k("attention.head_count_kv")) ? per_layer(k("attention.head_count_kv"))
                                                                 : std::vector<int64_t>{c.num_attention_heads};
  c.num_key_value_heads = max_of(kv);
  if (!uniform(kv)) c.num_key_value_heads_per_layer = kv;
  if (md.has(k("feed_forward_length"))) {
    std::vector<int64_t> ff = per_layer(k("feed_forward_length"));
    c.intermediate_size = max_of(ff);
    if (!uniform(ff)) c.intermediate_size_per_layer = ff;
  } else if (!md.has(k("expert_feed_forward_length"))) {
    md.get<int64_t>(k("feed_forward_length"));  // throws: names the missing key
  }
  if (!md.has(k("attention.key_length")) && c.hidden_size % c.num_attention_heads != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                md.source() + ": " + k("attention.head_count") + " = " + std::to_string(c.num_attention_heads) +
                    " does not divide " + k("embedding_length") + " = " + std::to_string(c.hidden_size) +
                    " (no " + k("attention.key_length") + " gives head_dim otherwise)");
  c.head_dim = md.get<int64_t>(k("attention.key_length"), c.hidden_size / c.num_attention_heads);
  pos(k("attention.key_length"), c.head_dim);
  c.rms_norm_eps = md.get<double>(k("attention.layer_norm_rms_epsilon"), 1e-6);
  c.layer_norm_eps = md.get<double>(k("attention.layer_norm_epsilon"), 1e-12);
  c.is_causal = md.get<bool>(k("attention.causal"), c.family != "bert");
  if (md.has(k("vocab_size"))) c.vocab_size = md.get<int64_t>(k("vocab_size"));
  else if (const GgufValue* toks = md.find("tokenizer.ggml.tokens"); toks && toks->is_array())
    c.vocab_size = static_cast<int64_t>(toks->size());
  if (tensors) {
    bool has_output = false;
    for (const auto& t : *tensors) has_output |= t.name == "output.weight";
    c.tie_word_embeddings = !has_output;
  }
  if (auto b = md.get_opt<int64_t>("tokenizer.ggml.bos_token_id")) c.bos_token_id = *b;
  if (auto e = md.get_opt<int64_t>("tokenizer.ggml.eos_token_id")) c.eos_token_id = {*e};
  if (auto pd = md.get_opt<int64_t>("tokenizer.ggml.padding_token_id")) c.pad_token_id = *pd;
  c.hidden_act = c.family.rfind("gemma", 0) == 0 ? "gelu_pytorch_tanh"
                 : c.family == "bert"           ? "gelu"
                                                : "silu";

  // RoPE (llama.cpp: dimension_count defaults to key_length; freq_base to 10000).
  RopeParameters full;
  full.rope_theta = md.get<double>(k("rope.freq_base"), 10000.0);
  int64_t n_rot = md.get<int64_t>(k("rope.dimension_count"), c.head_dim);
  full.partial_rotary_factor = static_cast<double>(n_rot) / static_cast<double>(c.head_dim);
  std::string st = md.get<std::string>(k("rope.scaling.type"), "");
  double factor = md.get<double>(k("rope.scaling.factor"), 0.0);
  if (factor == 0.0 && md.has(k("rope.scale_linear"))) {  // older converters
    factor = md.get<double>(k("rope.scale_linear"));
    if (st.empty()) st = "linear";
  }
  if (!st.empty() && st != "none" && factor > 0) {
    full.rope_type = st;
    full.factor = factor;
  } else if (st == "longrope") {
    full.rope_type = st;
  }
  if (tensors && full.rope_type == "default") {
    // Phi-3 longrope is signalled by its factor tensors, not by rope.scaling.type.
    for (const auto& t : *tensors)
      if (t.name == "rope_factors_long.weight") full.rope_type = "longrope";
  }
  if (auto o = md.get_opt<int64_t>(k("rope.scaling.original_context_length")))
    full.original_max_position_embeddings = *o;
  full.beta_fast = md.get<double>(k("rope.scaling.yarn_beta_fast"), 32.0);
  full.beta_slow = md.get<double>(k("rope.scaling.yarn_beta_slow"), 1.0);
  if (auto af = md.get_opt<double>(k("rope.scaling.attn_factor"))) full.attention_factor = *af;
  if (auto lm = md.get_opt<double>(k("rope.scaling.yarn_log_multiplier"))) full.mscale_all_dim = *lm;
  if (auto ts = md.get_opt<double>(k("attention.temperature_scale"))) full.llama_4_scaling_beta = *ts;
  if (md.has(k("rope.dimension_sections")))
    full.mrope_section = md.get_array<int64_t>(k("rope.dimension_sections"));
  RopeParameters sliding = full;
  if (c.family == "gemma3" || c.family == "gemma4") {
    sliding = RopeParameters{};  // local layers: plain rope, no scaling (llama.cpp)
    sliding.rope_theta = md.get<double>(k("rope.freq_base_swa"), 10000.0);
  }
  if (c.family == "gemma4") {
    // key_length = global_head_dim (full layers), key_length_swa = head_dim (sliding layers).
    c.global_head_dim = c.head_dim;
    c.head_dim = md.get<int64_t>(k("attention.key_length_swa"), c.head_dim);
    int64_t n_rot_swa = md.get<int64_t>(k("rope.dimension_count_swa"), c.head_dim);
    sliding.partial_rotary_factor = static_cast<double>(n_rot_swa) / static_cast<double>(c.head_dim);
    full.partial_rotary_factor = static_cast<double>(n_rot) / static_cast<double>(c.global_head_dim);
  }
  if (c.family == "qwen3_5" || c.family == "qwen3_5_moe") full.mrope_interleaved = true, sliding = full;
  c.rope_parameters[kFullAttention] = full;
  c.rope_parameters[kSlidingAttention] = sliding;

  // Layer pattern.
  if (auto sw = md.get_opt<int64_t>(k("attention.sliding_window")); sw && *sw > 0) c.sliding_window = *sw;
  c.layer_types.assign(c.num_hidden_layers, kFullAttention);
  const GgufValue* pat = md.find(k("attention.sliding_window_pattern"));
  std::vector<bool> swa_layers;  // gemma4: bool per layer, true = sliding
  if (pat && pat->is_array()) {
    swa_layers = md.get_array<bool>(k("attention.sliding_window_pattern"));
    if (static_cast<int64_t>(swa_layers.size()) != c.num_hidden_layers)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  md.source() + ": attention.sliding_window_pattern has " +
                      std::to_string(swa_layers.size()) + " entries, expected block_count");
  }
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    std::string& lt = c.layer_types[i];
    const std::string& f = c.family;
    if (!swa_layers.empty()) {
      if (swa_layers[i]) lt = kSlidingAttention;
    } else if (f == "gemma2" || f == "gpt_oss") {
      if (c.sliding_window && (i + 1) % 2) lt = kSlidingAttention;
    } else if (f == "gemma3" || f == "gemma4") {
      int64_t n = pat ? md.get<int64_t>(k("attention.sliding_window_pattern")) : 6;
      if (c.sliding_window && n > 0 && (i + 1) % n) lt = kSlidingAttention;
    } else if (f == "qwen3_5" || f == "qwen3_5_moe") {
      int64_t iv = md.get<int64_t>(k("full_attention_interval"), 4);
      if (iv > 0 && (i + 1) % iv) lt = kLinearAttention;
    }
  }
  if (c.family == "gemma4" && c.num_hidden_layers > 0) c.layer_types.back() = kFullAttention;
  // Phi-3 SWA and Mistral's window: llama.cpp does not apply them; report the window only.

  // Scales and caps.
  if (auto v = md.get_opt<double>(k("attn_logit_softcapping"))) c.attn_logit_softcapping = *v;
  if (auto v = md.get_opt<double>(k("final_logit_softcapping"))) c.final_logit_softcapping = *v;
  if (c.family == "gemma2" || c.family == "gemma3") {
    // Not stored: llama.cpp uses n_embd / n_head for the 27B sizes, head_dim otherwise.
    bool is_27b = (c.family == "gemma2" && c.num_hidden_layers == 46) ||
                  (c.family == "gemma3" && c.num_hidden_layers == 62);
    c.query_pre_attn_scalar = is_27b ? static_cast<double>(c.hidden_size / c.num_attention_heads)
                                     : static_cast<double>(c.head_dim);
  }
  c.embedding_multiplier = md.get<double>(k("embedding_scale"), 1.0);
  if (auto v = md.get_opt<double>(k("attention.scale")); v && *v != 0.0) c.attention_multiplier = *v;
  c.residual_multiplier = md.get<double>(k("residual_scale"), 1.0);
  c.logits_scaling = md.get<double>(k("logit_scale"), 1.0);

  // MoE.
  c.num_experts = md.get<int64_t>(k("expert_count"), 0);
  c.num_experts_per_tok = md.get<int64_t>(k("expert_used_count"), 0);
  c.moe_intermediate_size = md.get<int64_t>(k("expert_feed_forward_length"), 0);
  if (c.num_experts > 0 && c.moe_intermediate_size == 0) c.moe_intermediate_size = c.intermediate_size;
  c.shared_expert_intermediate_size = md.get<int64_t>(k("expert_shared_feed_forward_length"), 0);
  // llama.cpp renormalizes top-k for qwen3moe/qwen35moe/gemma4, not for olmoe.
  c.norm_topk_prob = md.get<bool>(k("expert_weights_norm"), c.family == "qwen3_moe" ||
                                                               c.family == "qwen3_5_moe" ||
                                                               c.family == "gemma4");
  if (c.family == "gpt_oss") c.swiglu_limit = 7.0;

  // Gated DeltaNet (ssm.* keys).
  if (c.family == "qwen3_5" || c.family == "qwen3_5_moe") {
    c.linear_conv_kernel_dim = md.get<int64_t>(k("ssm.conv_kernel"));
    c.linear_key_head_dim = md.get<int64_t>(k("ssm.state_size"));
    c.linear_num_key_heads = md.get<int64_t>(k("ssm.group_count"));
    c.linear_num_value_heads = pos(k("ssm.time_step_rank"), md.get<int64_t>(k("ssm.time_step_rank")));
    c.linear_value_head_dim = md.get<int64_t>(k("ssm.inner_size")) / c.linear_num_value_heads;
  }
  if (c.family == "gemma4") {
    // head_count_kv array: sliding layers → num_key_value_heads, full → num_global_key_value_heads.
    c.num_global_key_value_heads = c.num_key_value_heads;
    if (!c.num_key_value_heads_per_layer.empty()) {
      for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
        if (c.layer_types[i] == kFullAttention) c.num_global_key_value_heads = kv[i];
        else c.num_key_value_heads = kv[i];
      }
    }
    c.num_kv_shared_layers = md.get<int64_t>(k("attention.shared_kv_layers"), 0);
    c.hidden_size_per_layer_input = md.get<int64_t>(k("embedding_length_per_layer_input"), 0);
    c.enable_moe_block = c.num_experts > 0;
    c.use_double_wide_mlp = !c.intermediate_size_per_layer.empty();
  }
  c.pooling_type = static_cast<int>(md.get<int64_t>(k("pooling_type"), -1));
  if (c.family == "bert") c.type_vocab_size = md.has("tokenizer.ggml.token_type_count")
                                                  ? md.get<int64_t>("tokenizer.ggml.token_type_count")
                                                  : 2;
  validate_model_config(c);
  return c;
}

}  // namespace oxyd::loader
