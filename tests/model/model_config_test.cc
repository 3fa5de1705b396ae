// ModelConfig from HF config.json against transformers: tests/data/configs/*.json are v5 files
// written by transformers' config classes and v4-layout files as real checkpoints ship them;
// expected.json is what transformers v5 makes of each (tools/gen_config_fixtures.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../loader/test_util.h"
#include "loader/model_config.h"
#include "model/model_config.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
using model::load_hf_config;
using model::model_config_from_gguf;
using model::parse_hf_config;
using test::expect_error;
using test::fixture;

const json& expected_all() {
  static const json j = json::parse(test::read_bytes(fixture("configs/expected.json")));
  return j["configs"];
}

template <typename T> void expect_opt(const json& e, const char* key, const std::optional<T>& got) {
  if (!e.contains(key)) return;
  SCOPED_TRACE(key);
  if (e[key].is_null()) {
    EXPECT_FALSE(got.has_value());
  } else {
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, e[key].get<T>());
  }
}

template <typename T> void expect_val(const json& e, const char* key, const T& got) {
  if (!e.contains(key) || e[key].is_null()) return;
  SCOPED_TRACE(key);
  EXPECT_EQ(got, e[key].get<T>());
}

void expect_rope(const json& e, const RopeParameters& r) {
  EXPECT_EQ(r.rope_type, e["rope_type"].get<std::string>());
  EXPECT_DOUBLE_EQ(r.rope_theta, e["rope_theta"].get<double>());
  EXPECT_DOUBLE_EQ(r.factor, e["factor"].get<double>());
  EXPECT_DOUBLE_EQ(r.partial_rotary_factor, e["partial_rotary_factor"].get<double>());
  if (e.contains("original_max_position_embeddings")) {
    ASSERT_TRUE(r.original_max_position_embeddings);
    EXPECT_EQ(*r.original_max_position_embeddings, e["original_max_position_embeddings"].get<int64_t>());
  } else {
    EXPECT_FALSE(r.original_max_position_embeddings);
  }
  if (e.contains("low_freq_factor")) {
    EXPECT_DOUBLE_EQ(r.low_freq_factor, e["low_freq_factor"].get<double>());
  }
  if (e.contains("high_freq_factor")) {
    EXPECT_DOUBLE_EQ(r.high_freq_factor, e["high_freq_factor"].get<double>());
  }
  if (e.contains("beta_fast")) {
    EXPECT_DOUBLE_EQ(r.beta_fast, e["beta_fast"].get<double>());
  }
  if (e.contains("beta_slow")) {
    EXPECT_DOUBLE_EQ(r.beta_slow, e["beta_slow"].get<double>());
  }
  if (e.contains("truncate")) {
    EXPECT_EQ(r.truncate, e["truncate"].get<bool>());
  }
  if (e.contains("mscale")) {
    EXPECT_EQ(r.mscale, e["mscale"].get<double>());
  }
  if (e.contains("mscale_all_dim")) {
    EXPECT_EQ(r.mscale_all_dim, e["mscale_all_dim"].get<double>());
  }
  if (e.contains("llama_4_scaling_beta")) {
    EXPECT_EQ(r.llama_4_scaling_beta, e["llama_4_scaling_beta"].get<double>());
  }
  EXPECT_EQ(r.short_factor, e.value("short_factor", std::vector<double>{}));
  EXPECT_EQ(r.long_factor, e.value("long_factor", std::vector<double>{}));
  EXPECT_EQ(r.mrope_section, e.value("mrope_section", std::vector<int64_t>{}));
  EXPECT_EQ(r.mrope_interleaved, e.value("mrope_interleaved", false));
}

class HfConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(HfConfig, MatchesTransformers) {
  const std::string name = GetParam();
  const json& e = expected_all()[name];
  ModelConfig c = load_hf_config(fixture("configs/" + name + ".json"));
  EXPECT_EQ(c.architecture, e["architecture"].get<std::string>());
  EXPECT_EQ(c.model_type, e["model_type"].get<std::string>());
  EXPECT_EQ(c.family, e["family"].get<std::string>());
  expect_val(e, "vocab_size", c.vocab_size);
  expect_val(e, "hidden_size", c.hidden_size);
  expect_val(e, "intermediate_size", c.intermediate_size);
  expect_val(e, "num_hidden_layers", c.num_hidden_layers);
  expect_val(e, "num_attention_heads", c.num_attention_heads);
  expect_val(e, "num_key_value_heads", c.num_key_value_heads);
  expect_val(e, "head_dim", c.head_dim);
  expect_val(e, "max_position_embeddings", c.max_position_embeddings);
  expect_val(e, "rms_norm_eps", c.rms_norm_eps);
  expect_val(e, "layer_norm_eps", c.layer_norm_eps);
  expect_val(e, "hidden_act", c.hidden_act);
  expect_val(e, "tie_word_embeddings", c.tie_word_embeddings);
  expect_val(e, "layer_types", c.layer_types);
  expect_opt(e, "sliding_window", c.sliding_window);
  expect_opt(e, "query_pre_attn_scalar", c.query_pre_attn_scalar);
  expect_opt(e, "attn_logit_softcapping", c.attn_logit_softcapping);
  expect_opt(e, "final_logit_softcapping", c.final_logit_softcapping);
  expect_opt(e, "clip_qkv", c.clip_qkv);
  expect_opt(e, "attention_multiplier", c.attention_multiplier);
  expect_val(e, "embedding_multiplier", c.embedding_multiplier);
  expect_val(e, "residual_multiplier", c.residual_multiplier);
  expect_val(e, "logits_scaling", c.logits_scaling);
  expect_val(e, "num_experts", c.num_experts);
  expect_val(e, "num_experts_per_tok", c.num_experts_per_tok);
  expect_val(e, "moe_intermediate_size", c.moe_intermediate_size);
  expect_val(e, "shared_expert_intermediate_size", c.shared_expert_intermediate_size);
  expect_val(e, "norm_topk_prob", c.norm_topk_prob);
  expect_val(e, "decoder_sparse_step", c.decoder_sparse_step);
  expect_val(e, "mlp_only_layers", c.mlp_only_layers);
  expect_val(e, "swiglu_limit", c.swiglu_limit);
  expect_val(e, "linear_conv_kernel_dim", c.linear_conv_kernel_dim);
  expect_val(e, "linear_key_head_dim", c.linear_key_head_dim);
  expect_val(e, "linear_value_head_dim", c.linear_value_head_dim);
  expect_val(e, "linear_num_key_heads", c.linear_num_key_heads);
  expect_val(e, "linear_num_value_heads", c.linear_num_value_heads);
  expect_val(e, "global_head_dim", c.global_head_dim);
  expect_val(e, "num_global_key_value_heads", c.num_global_key_value_heads);
  expect_val(e, "attention_k_eq_v", c.attention_k_eq_v);
  expect_val(e, "hidden_size_per_layer_input", c.hidden_size_per_layer_input);
  expect_val(e, "num_kv_shared_layers", c.num_kv_shared_layers);
  expect_val(e, "enable_moe_block", c.enable_moe_block);
  expect_val(e, "type_vocab_size", c.type_vocab_size);
  expect_val(e, "eos_token_id", c.eos_token_id);
  if (e.contains("rope")) {
    SCOPED_TRACE("rope full_attention");
    expect_rope(e["rope"]["full_attention"], c.rope(kFullAttention));
    SCOPED_TRACE("rope sliding_attention");
    expect_rope(e["rope"]["sliding_attention"], c.rope(kSlidingAttention));
  }
  if (e.contains("quantization_config")) {
    ASSERT_TRUE(c.quantization_config);
    const json& q = e["quantization_config"];
    EXPECT_EQ(c.quantization_config->quant_method, q["quant_method"].get<std::string>());
    EXPECT_EQ(c.quantization_config->fmt, q.value("fmt", ""));
    EXPECT_EQ(c.quantization_config->activation_scheme, q.value("activation_scheme", ""));
    EXPECT_EQ(c.quantization_config->weight_block_size, q.value("weight_block_size", std::vector<int64_t>{}));
    EXPECT_EQ(c.quantization_config->modules_to_not_convert,
              q.value("modules_to_not_convert", std::vector<std::string>{}));
  } else {
    EXPECT_FALSE(c.quantization_config);
  }
}

std::vector<std::string> config_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : expected_all().items()) n.push_back(k);
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfConfig, ::testing::ValuesIn(config_names()),
                         [](const auto& info) { return info.param; });

// GptOssConfig() with no rope_parameters (transformers 5.25): {'rope_type': 'yarn', 'factor': 32.0,
// 'beta_fast': 32.0, 'beta_slow': 1.0, 'truncate': False, 'original_max_position_embeddings': 4096,
// 'rope_theta': 150000.0}.
TEST(HfConfigDefaults, GptOssWithoutRopeIsYarn) {
  const json j = json::parse(R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
    "vocab_size": 100, "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 4,
    "num_experts_per_tok": 2})");
  const ModelConfig c = parse_hf_config(j, "c.json");
  for (const char* lt : {loader::kFullAttention, loader::kSlidingAttention}) {
    const auto& r = c.rope(lt);
    EXPECT_EQ(r.rope_type, "yarn") << lt;
    EXPECT_EQ(r.factor, 32.0);
    EXPECT_EQ(r.beta_fast, 32.0);
    EXPECT_EQ(r.beta_slow, 1.0);
    EXPECT_FALSE(r.truncate);
    EXPECT_EQ(r.original_max_position_embeddings, 4096);
    EXPECT_EQ(r.rope_theta, 150000.0);
  }
  EXPECT_TRUE(c.harmony_chat);
}

TEST(HfConfigErrors, MissingAndWrongKeys) {
  json base = json::parse(R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
    "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2,
    "num_attention_heads": 2})");
  ModelConfig ok = parse_hf_config(base, "c.json");
  EXPECT_EQ(ok.head_dim, 4);             // hidden / heads when head_dim is absent
  EXPECT_EQ(ok.num_key_value_heads, 2);  // = num_attention_heads when absent
  json j = base;
  j.erase("hidden_size");
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"c.json", "'hidden_size'", "missing"});
  j = base;
  j["num_attention_heads"] = "two";
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"c.json", "'num_attention_heads'", "integer"});
  j = base;
  j["num_key_value_heads"] = 3;
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"'num_key_value_heads'", "divisor"});
  j = base;
  j["layer_types"] = {"full_attention"};
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT, {"'layer_types'"});
  j = base;
  j["num_hidden_layers"] = 4000000000LL;  // would size per-layer vectors
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"'num_hidden_layers'", "at most"});
  j = base;
  j["rope_scaling"] = 3;
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT, {"'rope_scaling'"});
  j = base;
  j["model_type"] = "mamba";
  j["architectures"] = {"MambaForCausalLM"};
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::UNSUPPORTED, {"c.json", "mamba"});
  j = json::parse(R"({"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text",
    "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 4,
    "num_attention_heads": 2, "num_key_value_heads": 2, "linear_conv_kernel_dim": null}})");
  expect_error([&] { parse_hf_config(j, "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"'text_config.linear_conv_kernel_dim'", "linear_attention"});
  // Under a wrapper, keys the text config class defaults may be absent (as in real files).
  j["text_config"].erase("linear_conv_kernel_dim");
  j["text_config"].erase("num_attention_heads");
  j["text_config"].erase("num_key_value_heads");
  ModelConfig w = parse_hf_config(j, "c.json");
  EXPECT_EQ(w.num_attention_heads, 16);
  EXPECT_EQ(w.linear_conv_kernel_dim, 4);
  EXPECT_EQ(w.layer_types[3], kFullAttention);
  EXPECT_EQ(w.layer_types[2], kLinearAttention);
  expect_error([&] { parse_hf_config(json::array(), "c.json"); }, ErrorCode::INVALID_ARGUMENT,
               {"c.json", "object"});
  expect_error([&] { load_hf_config("/nonexistent/config.json"); }, ErrorCode::IO,
               {"/nonexistent/config.json"});
}

}  // namespace
}  // namespace oxyd::loader

namespace oxyd::loader {
namespace {

// GGUF metadata written by gguf-py the way llama.cpp's converter describes each HF fixture
// (tools/gen_gguf_config_fixtures.py): both paths must give the same hyperparameters, except
// where the GGUF encodes something differently (noted per family).
class GgufConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufConfig, AgreesWithHfConfig) {
  const std::string name = GetParam();
  ModelConfig hf = load_hf_config(test::fixture("configs/" + name + ".json"));
  GgufFile f = GgufFile::open(test::fixture("gguf/config_" + name + ".gguf"));
  ModelConfig g = model_config_from_gguf(f);
  EXPECT_EQ(g.family, hf.family);
  EXPECT_EQ(g.vocab_size, hf.vocab_size);
  EXPECT_EQ(g.hidden_size, hf.hidden_size);
  EXPECT_EQ(g.intermediate_size, hf.intermediate_size);
  EXPECT_EQ(g.num_hidden_layers, hf.num_hidden_layers);
  EXPECT_EQ(g.num_attention_heads, hf.num_attention_heads);
  EXPECT_EQ(g.num_key_value_heads, hf.num_key_value_heads);
  EXPECT_EQ(g.head_dim, hf.head_dim);
  if (hf.family != "bert") {  // RoBERTa's position table loses pad_token_id + 1 rows
    EXPECT_EQ(g.max_position_embeddings, hf.max_position_embeddings);
    EXPECT_NEAR(g.rms_norm_eps, hf.rms_norm_eps, hf.rms_norm_eps * 1e-6);  // stored as f32
  } else {
    EXPECT_NEAR(g.layer_norm_eps, hf.layer_norm_eps, 1e-11);
    EXPECT_FALSE(g.is_causal);
    EXPECT_EQ(g.pooling_type, 2);
  }
  EXPECT_EQ(g.hidden_act, hf.hidden_act);
  EXPECT_EQ(g.tie_word_embeddings, hf.tie_word_embeddings);
  EXPECT_EQ(g.layer_types, hf.layer_types);
  EXPECT_EQ(g.sliding_window, hf.sliding_window);
  EXPECT_EQ(g.num_experts, hf.num_experts);
  EXPECT_EQ(g.num_experts_per_tok, hf.num_experts_per_tok);
  EXPECT_EQ(g.moe_intermediate_size, hf.moe_intermediate_size);
  EXPECT_EQ(g.shared_expert_intermediate_size, hf.shared_expert_intermediate_size);
  if (hf.num_experts > 0 && hf.family != "gemma4") {
    EXPECT_EQ(g.norm_topk_prob, hf.norm_topk_prob);
  }
  EXPECT_EQ(g.linear_conv_kernel_dim, hf.linear_conv_kernel_dim);
  EXPECT_EQ(g.linear_key_head_dim, hf.linear_key_head_dim);
  EXPECT_EQ(g.linear_value_head_dim, hf.linear_value_head_dim);
  EXPECT_EQ(g.linear_num_key_heads, hf.linear_num_key_heads);
  EXPECT_EQ(g.linear_num_value_heads, hf.linear_num_value_heads);
  EXPECT_EQ(g.global_head_dim, hf.global_head_dim);
  EXPECT_EQ(g.num_global_key_value_heads, hf.num_global_key_value_heads);
  EXPECT_EQ(g.num_kv_shared_layers, hf.num_kv_shared_layers);
  EXPECT_EQ(g.hidden_size_per_layer_input, hf.hidden_size_per_layer_input);
  EXPECT_EQ(g.enable_moe_block, hf.enable_moe_block);
  EXPECT_EQ(g.final_logit_softcapping.has_value(), hf.final_logit_softcapping.has_value());
  if (hf.query_pre_attn_scalar) {
    EXPECT_EQ(g.query_pre_attn_scalar, hf.query_pre_attn_scalar);
  }
  EXPECT_NEAR(g.embedding_multiplier, hf.embedding_multiplier, 1e-6);
  EXPECT_NEAR(g.residual_multiplier, hf.residual_multiplier, 1e-6);
  EXPECT_NEAR(g.logits_scaling, hf.logits_scaling, 1e-6);
  EXPECT_EQ(g.attention_multiplier.has_value(), hf.attention_multiplier.has_value());
  for (const char* lt : {kFullAttention, kSlidingAttention}) {
    SCOPED_TRACE(lt);
    const RopeParameters& a = g.rope(lt);
    const RopeParameters& b = hf.rope(lt);
    EXPECT_NEAR(a.rope_theta, b.rope_theta, b.rope_theta * 1e-7);
    // llama3 scaling becomes a rope_freqs tensor; Gemma 4's proportional rope a 1e30 factor tensor.
    if (b.rope_type != "llama3" && !(hf.family == "gemma4" && std::string(lt) == kFullAttention)) {
      EXPECT_EQ(a.rope_type, b.rope_type);
      EXPECT_DOUBLE_EQ(a.factor, b.factor);
      EXPECT_DOUBLE_EQ(a.partial_rotary_factor, b.partial_rotary_factor);
      if (b.rope_type == "yarn" || b.rope_type == "longrope") {
        EXPECT_EQ(a.original_max_position_embeddings, b.original_max_position_embeddings);
      }
      if (b.rope_type == "yarn") {
        EXPECT_DOUBLE_EQ(a.beta_fast, b.beta_fast);
        EXPECT_DOUBLE_EQ(a.beta_slow, b.beta_slow);
      }
      if (b.mscale_all_dim) {
        EXPECT_EQ(a.mscale_all_dim, b.mscale_all_dim);
      }
      EXPECT_EQ(a.llama_4_scaling_beta.has_value(), b.llama_4_scaling_beta.has_value());
      if (b.llama_4_scaling_beta) {
        EXPECT_NEAR(*a.llama_4_scaling_beta, *b.llama_4_scaling_beta, 1e-7);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgufConfig,
                         ::testing::Values("llama32_v4", "qwen3_v5", "qwen3_moe_v5", "gemma3_mm_v4",
                                           "gpt_oss_v4", "qwen36_moe_fp8_v4", "gemma4_v5", "granite_v4",
                                           "roberta_granite_embedding_v4", "ministral3_v5",
                                           "phi3_v5"),
                         [](const auto& info) { return info.param; });

TEST(GgufConfigErrors, MissingKeysAndUnknownArch) {
  GgufMetadata md("m.gguf");
  md.add("general.architecture", GgufValue::string("mamba2"));
  expect_error([&] { model_config_from_gguf(md); }, ErrorCode::UNSUPPORTED, {"m.gguf", "mamba2"});
  GgufMetadata q("q.gguf");
  q.add("general.architecture", GgufValue::string("qwen3"));
  q.add("qwen3.block_count", GgufValue::scalar<uint32_t>(4000000000u));
  expect_error([&] { model_config_from_gguf(q); }, ErrorCode::INVALID_ARGUMENT,
               {"'qwen3.block_count'", "implausible"});  // gguf_fuzz find: 64 GB layer_types
  q.set("qwen3.block_count", GgufValue::scalar<uint32_t>(2));
  q.add("qwen3.context_length", GgufValue::scalar<uint32_t>(128));
  expect_error([&] { model_config_from_gguf(q); }, ErrorCode::INVALID_ARGUMENT,
               {"q.gguf", "'qwen3.embedding_length'", "missing"});
  q.add("qwen3.embedding_length", GgufValue::string("64"));
  expect_error([&] { model_config_from_gguf(q); }, ErrorCode::INVALID_ARGUMENT,
               {"'qwen3.embedding_length'", "STRING"});
  q.set("qwen3.embedding_length", GgufValue::scalar<uint32_t>(64));
  q.add("qwen3.attention.head_count", GgufValue::scalar<uint32_t>(4));
  q.add("qwen3.feed_forward_length", GgufValue::array<int32_t>(std::vector<int32_t>{1, 2, 3}));
  expect_error([&] { model_config_from_gguf(q); }, ErrorCode::INVALID_ARGUMENT,
               {"'qwen3.feed_forward_length'", "3 entries"});
  q.set("qwen3.feed_forward_length", GgufValue::scalar<uint32_t>(128));
  // Neither <arch>.vocab_size nor tokenizer.ggml.tokens: no vocabulary to size the embedding by.
  expect_error([&] { model_config_from_gguf(q); }, ErrorCode::INVALID_ARGUMENT, {"q.gguf", "qwen3.vocab_size = 0"});
  q.add("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c"}));
  ModelConfig c = model_config_from_gguf(q);  // llama.cpp defaults fill the rest
  EXPECT_EQ(c.vocab_size, 3);
  EXPECT_EQ(c.num_key_value_heads, 4);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.rope().rope_theta, 10000.0);
  EXPECT_EQ(c.rope().partial_rotary_factor, 1.0);
}

}  // namespace
}  // namespace oxyd::loader
