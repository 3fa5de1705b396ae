// ModelConfig from HF config.json against transformers: tests/data/configs/*.json are v5 files
// written by transformers' config classes and v4-layout files as real checkpoints ship them;
// expected.json is what transformers v5 makes of each (tools/gen_config_fixtures.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loader/model_config.h"
#include "test_util.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
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
