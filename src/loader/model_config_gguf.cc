// ModelConfig from GGUF metadata: `<arch>.*` keys (llama.cpp's llama-arch.cpp) with llama.cpp's
// loader defaults (head_count_kv = head_count, key_length = n_embd / n_head, rope.dimension_count
// = key_length, rope.freq_base 10000). llama.cpp's hard-coded per-arch facts (query scales, SWA
// patterns, SwiGLU limits) come from the ConfigFamily that claims general.architecture. Values
// the converter changed (norm +1, Q/K permutation) are the model layer's business; this only
// reports hyperparameters.
#include <algorithm>

#include "core/error.h"
#include "loader/config_family.h"
#include "loader/model_validate.h"
#include "loader/sentence_transformers.h"

namespace oxyd::loader {
namespace {

const ConfigFamily& resolve_family(const GgufMetadata& md, const ConfigFamilies& fams, ModelConfig& c) {
  c.source = md.source();
  c.gguf_arch = md.architecture();
  for (const ConfigFamily* f : fams) {
    if (std::find(f->gguf_archs.begin(), f->gguf_archs.end(), c.gguf_arch) == f->gguf_archs.end()) continue;
    c.family = f->name;
    c.architecture = f->gguf_architecture;
    c.model_type = f->gguf_model_type;
    return *f;
  }
  std::string known;
  for (const ConfigFamily* f : fams)
    for (const std::string& a : f->gguf_archs) known += std::string(known.empty() ? "" : ", ") + a;
  throw Error(ErrorCode::UNSUPPORTED, md.source() + ": general.architecture '" + c.gguf_arch +
                                          "' is not supported; supported: " + known);
}

int64_t positive(const GgufMetadata& md, const std::string& key, int64_t v) {
  if (v <= 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, md.source() + ": metadata key '" + key + "' = " +
                                                 std::to_string(v) + ", expected a positive integer");
  return v;
}

int64_t max_of(const std::vector<int64_t>& v) {
  return v.empty() ? int64_t{0} : *std::max_element(v.begin(), v.end());
}

bool uniform(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; });
}

// head_count / head_count_kv / feed_forward_length may be per-layer arrays.
std::vector<int64_t> per_layer(const GgufMetadata& md, const std::string& key, const ModelConfig& c) {
  std::vector<int64_t> v = md.get_scalar_or_array<int64_t>(key);
  if (v.size() != 1 && static_cast<int64_t>(v.size()) != c.num_hidden_layers)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                md.source() + ": metadata key '" + key + "' has " + std::to_string(v.size()) +
                    " entries, expected 1 or block_count = " + std::to_string(c.num_hidden_layers));
  return v;
}

void read_layers_and_heads(const GgufMetadata& md, const std::string& p, ModelConfig& c) {
  c.num_hidden_layers = positive(md, p + "block_count", md.get<int64_t>(p + "block_count"));
  if (c.num_hidden_layers > kMaxLayers)
    throw Error(ErrorCode::INVALID_ARGUMENT, md.source() + ": metadata key '" + p + "block_count" +
                                                 "' = " + std::to_string(c.num_hidden_layers) +
                                                 " is implausible (at most " +
                                                 std::to_string(kMaxLayers) + ")");
  c.hidden_size = positive(md, p + "embedding_length", md.get<int64_t>(p + "embedding_length"));
  c.max_position_embeddings = md.get<int64_t>(p + "context_length");
  std::vector<int64_t> heads = per_layer(md, p + "attention.head_count", c);
  c.num_attention_heads = positive(md, p + "attention.head_count", max_of(heads));
  std::vector<int64_t> kv = md.has(p + "attention.head_count_kv") ? per_layer(md, p + "attention.head_count_kv", c)
                                                                   : std::vector<int64_t>{c.num_attention_heads};
  c.num_key_value_heads = max_of(kv);
  if (!uniform(kv)) c.num_key_value_heads_per_layer = kv;
  if (md.has(p + "feed_forward_length")) {
    std::vector<int64_t> ff = per_layer(md, p + "feed_forward_length", c);
    c.intermediate_size = max_of(ff);
    if (!uniform(ff)) c.intermediate_size_per_layer = ff;
  } else if (!md.has(p + "expert_feed_forward_length")) {
    md.get<int64_t>(p + "feed_forward_length");  // throws: names the missing key
  }
  if (!md.has(p + "attention.key_length") && c.hidden_size % c.num_attention_heads != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                md.source() + ": " + p + "attention.head_count = " + std::to_string(c.num_attention_heads) +
                    " does not divide " + p + "embedding_length = " + std::to_string(c.hidden_size) +
                    " (no " + p + "attention.key_length gives head_dim otherwise)");
  c.head_dim = md.get<int64_t>(p + "attention.key_length", c.hidden_size / c.num_attention_heads);
  positive(md, p + "attention.key_length", c.head_dim);
}

void read_norms_and_tokens(const GgufMetadata& md, const std::string& p, const ConfigFamily& fam,
                           const std::vector<GgufTensorInfo>* tensors, ModelConfig& c) {
  c.rms_norm_eps = md.get<double>(p + "attention.layer_norm_rms_epsilon", 1e-6);
  c.layer_norm_eps = md.get<double>(p + "attention.layer_norm_epsilon", 1e-12);
  c.is_causal = md.get<bool>(p + "attention.causal", fam.is_causal);
  if (md.has(p + "vocab_size")) c.vocab_size = md.get<int64_t>(p + "vocab_size");
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
  c.hidden_act = fam.hidden_act;
}

// RoPE (llama.cpp: dimension_count defaults to key_length; freq_base to 10000).
void read_rope(const GgufMetadata& md, const std::string& p, const ConfigFamily& fam,
               const std::vector<GgufTensorInfo>* tensors, ModelConfig& c) {
  RopeParameters full;
  full.rope_theta = md.get<double>(p + "rope.freq_base", 10000.0);
  int64_t n_rot = md.get<int64_t>(p + "rope.dimension_count", c.head_dim);
  full.partial_rotary_factor = static_cast<double>(n_rot) / static_cast<double>(c.head_dim);
  std::string st = md.get<std::string>(p + "rope.scaling.type", "");
  double factor = md.get<double>(p + "rope.scaling.factor", 0.0);
  if (factor == 0.0 && md.has(p + "rope.scale_linear")) {  // older converters
    factor = md.get<double>(p + "rope.scale_linear");
    if (st.empty()) st = "linear";
  }
  if (!st.empty() && st != "none" && factor > 0) {
    full.rope_type = st;
    full.factor = factor;
  } else if (st == "longrope") {
    full.rope_type = st;
  }
  if (tensors && full.rope_type == "default") {
    // Longrope may be signalled by its factor tensors only, not by rope.scaling.type.
    for (const auto& t : *tensors)
      if (t.name == "rope_factors_long.weight") full.rope_type = "longrope";
  }
  if (auto o = md.get_opt<int64_t>(p + "rope.scaling.original_context_length"))
    full.original_max_position_embeddings = *o;
  full.beta_fast = md.get<double>(p + "rope.scaling.yarn_beta_fast", 32.0);
  full.beta_slow = md.get<double>(p + "rope.scaling.yarn_beta_slow", 1.0);
  if (auto af = md.get_opt<double>(p + "rope.scaling.attn_factor")) full.attention_factor = *af;
  if (auto lm = md.get_opt<double>(p + "rope.scaling.yarn_log_multiplier")) full.mscale_all_dim = *lm;
  if (auto ts = md.get_opt<double>(p + "attention.temperature_scale")) full.llama_4_scaling_beta = *ts;
  if (md.has(p + "rope.dimension_sections"))
    full.mrope_section = md.get_array<int64_t>(p + "rope.dimension_sections");
  RopeParameters sliding = full;
  if (fam.gguf_rope) fam.gguf_rope(md, p, c, full, sliding, n_rot);
  c.rope_parameters[kFullAttention] = full;
  c.rope_parameters[kSlidingAttention] = sliding;
}

void read_layer_types(const GgufMetadata& md, const std::string& p, const ConfigFamily& fam, ModelConfig& c) {
  if (auto sw = md.get_opt<int64_t>(p + "attention.sliding_window"); sw && *sw > 0) c.sliding_window = *sw;
  c.layer_types.assign(c.num_hidden_layers, kFullAttention);
  const GgufValue* pat = md.find(p + "attention.sliding_window_pattern");
  if (pat && pat->is_array()) {  // one bool per layer, true = sliding
    std::vector<bool> swa_layers = md.get_array<bool>(p + "attention.sliding_window_pattern");
    if (static_cast<int64_t>(swa_layers.size()) != c.num_hidden_layers)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  md.source() + ": attention.sliding_window_pattern has " +
                      std::to_string(swa_layers.size()) + " entries, expected block_count");
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      if (swa_layers[i]) c.layer_types[i] = kSlidingAttention;
  } else if (fam.gguf_layer_types) {
    fam.gguf_layer_types(md, p, c);
  }
  if (fam.last_layer_full && c.num_hidden_layers > 0) c.layer_types.back() = kFullAttention;
  // A window llama.cpp does not apply (no pattern hook): reported only.
}

void read_scales_and_moe(const GgufMetadata& md, const std::string& p, const ConfigFamily& fam, ModelConfig& c) {
  if (auto v = md.get_opt<double>(p + "attn_logit_softcapping")) c.attn_logit_softcapping = *v;
  if (auto v = md.get_opt<double>(p + "final_logit_softcapping")) c.final_logit_softcapping = *v;
  c.embedding_multiplier = md.get<double>(p + "embedding_scale", 1.0);
  if (auto v = md.get_opt<double>(p + "attention.scale"); v && *v != 0.0) c.attention_multiplier = *v;
  c.residual_multiplier = md.get<double>(p + "residual_scale", 1.0);
  c.logits_scaling = md.get<double>(p + "logit_scale", 1.0);

  c.num_experts = md.get<int64_t>(p + "expert_count", 0);
  c.num_experts_per_tok = md.get<int64_t>(p + "expert_used_count", 0);
  c.moe_intermediate_size = md.get<int64_t>(p + "expert_feed_forward_length", 0);
  if (c.num_experts > 0 && c.moe_intermediate_size == 0) c.moe_intermediate_size = c.intermediate_size;
  c.shared_expert_intermediate_size = md.get<int64_t>(p + "expert_shared_feed_forward_length", 0);
  c.norm_topk_prob = md.get<bool>(p + "expert_weights_norm", fam.gguf_norm_topk_prob);
  c.swiglu_limit = fam.swiglu_limit;
  c.harmony_chat = fam.harmony_chat;
}

// A rank GGUF's chat template "rerank" (llama.cpp's converter writes Qwen3-Reranker's: its prompt
// with {query} and {document}) as ModelConfig::RankPrompt: the prefix runs to the end of the line
// of the last special marker ("|>") before the first placeholder, the suffix starts at the first
// "<|" after the last one (as the model card splits the prompt: special tokens outside, the user
// text between). False where the template has no placeholder.
bool split_rank_template(const std::string& t, ModelConfig::RankPrompt& out) {
  const size_t q = t.find("{query}"), d = t.find("{document}");
  if (q == std::string::npos || d == std::string::npos) return false;
  const size_t first = std::min(q, d), last = std::max(q + 7, d + 10);
  size_t begin = 0;
  if (const size_t m = t.rfind("|>", first); m != std::string::npos) {
    const size_t nl = t.find('\n', m);
    begin = nl != std::string::npos && nl < first ? nl + 1 : m + 2;
  }
  const size_t end = std::min(t.find("<|", last), t.size());
  out.prefix = t.substr(0, begin);
  out.body = t.substr(begin, end - begin);
  out.suffix = t.substr(end);
  return true;
}

// Whether the file has a classification head: the tensor cls.output.weight, or, from metadata
// alone, the labels the converter names.
bool has_classifier(const GgufMetadata& md, const std::vector<GgufTensorInfo>* tensors, const ModelConfig& c) {
  if (!tensors) return md.has(c.gguf_arch + ".classifier.output_labels");
  for (const auto& t : *tensors)
    if (t.name == "cls.output.weight") return true;
  return false;
}

// pooling_type rank (a reranker, as llama.cpp's converter writes cross-encoders and
// Qwen3-Reranker): the classifier's outputs are the rows of cls.output (a decoder reranker: its
// [yes, no] head rows), scored as llama.cpp's server does: the first output's softmax probability
// (one output: its sigmoid); a decoder's prompt comes from its "rerank" chat template.
void read_rank_head(const GgufMetadata& md, const std::vector<GgufTensorInfo>* tensors, ModelConfig& c) {
  if (c.pooling_type != POOLING_RANK) return;
  if (!tensors) {  // metadata alone: the labels the converter names, if it does
    if (const GgufValue* l = md.find(c.gguf_arch + ".classifier.output_labels"); l && l->is_array())
      c.num_labels = static_cast<int64_t>(l->size());
  } else {
    for (const auto& t : *tensors)
      if (t.name == "cls.output.weight") c.num_labels = t.n_dims >= 2 ? t.ne[1] : 1;
  }
  if (tensors && c.num_labels <= 0)
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": pooling_type is rank but the file has no 'cls.output.weight' "
                                                   "classifier; a reranker without one is not supported");
  c.rank_score_label = 0;
  if (c.is_causal) {
    const std::string key = "tokenizer.chat_template.rerank";
    if (!md.has(key) || !split_rank_template(md.get<std::string>(key), c.rank_prompt))
      throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": a decoder reranker needs the metadata key '" + key +
                                                   "' with {query} and {document} (its prompt)");
  }
}

}  // namespace

ModelConfig config_from_gguf(const GgufMetadata& md, const std::vector<GgufTensorInfo>* tensors,
                             const ConfigFamilies& families) {
  ModelConfig c;
  const ConfigFamily& fam = resolve_family(md, families, c);
  const std::string p = c.gguf_arch + ".";
  read_layers_and_heads(md, p, c);
  read_norms_and_tokens(md, p, fam, tensors, c);
  read_rope(md, p, fam, tensors, c);
  read_layer_types(md, p, fam, c);
  read_scales_and_moe(md, p, fam, c);
  if (fam.gguf_extra) fam.gguf_extra(md, p, c);
  c.pooling_type = static_cast<int>(md.get<int64_t>(p + "pooling_type", -1));
  // A GGUF has no Normalize flag: its embeddings are L2-normalised, as llama.cpp's server does by
  // default (embd_normalize 2). An encoder without the key pools by mean (sentence-transformers'),
  // unless it has a classifier: llama.cpp's converter writes cross-encoders (RoBERTa's and XLM-R's
  // ForSequenceClassification, e.g. bge-reranker) with cls.output and no pooling_type, for
  // llama.cpp's `--reranking` to ask for rank; such a file is a reranker.
  if (c.pooling_type == -1 && !c.is_causal) c.pooling_type = has_classifier(md, tensors, c) ? POOLING_RANK : 1;
  c.embedding_normalize = c.pooling_type >= 1 && c.pooling_type <= 3;
  read_rank_head(md, tensors, c);
  validate_model_config(c);
  return c;
}

}  // namespace oxyd::loader
