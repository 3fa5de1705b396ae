// Issue 28: hostile model files give a clear error naming the file and field, in bounded time,
// instead of a stack overflow or a silently accepted inconsistency. Inputs are generated here
// (hostile_inputs.h); each defect has a control built the same way without it.
#include <gtest/gtest.h>

#include <chrono>

#include "core/json_parse.h"
#include "hostile_inputs.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "loader/model_validate.h"
#include "loader/safetensors.h"
#include "model/model_config.h"
#include "test_util.h"

namespace oxyd::loader {
namespace {

using model::load_hf_config;
using model::model_config_from_gguf;
using test::expect_error;
using test::TempDir;
namespace hostile = test::hostile;
constexpr auto kBad = ErrorCode::INVALID_ARGUMENT;

// Wall time of fn in seconds.
template <typename Fn>
double seconds(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(JsonDepth, LimitIsEnforcedWhileParsing) {
  EXPECT_NO_THROW(parse_json_bounded(hostile::nested_array(kMaxJsonDepth), "ok.json"));
  expect_error([] { parse_json_bounded(hostile::nested_array(kMaxJsonDepth + 1), "a.json"); }, kBad,
               {"a.json", "nested deeper than 64 levels"});
  // 10 MB of '[': refused at the 65th bracket, long before the document would be read.
  const std::string deep(10'000'000, '[');
  double s = seconds([&] { expect_error([&] { parse_json_bounded(deep, "big.json"); }, kBad, {"big.json"}); });
  EXPECT_LT(s, 2.0);
  // Objects count too.
  std::string objs;
  for (int i = 0; i < 100; ++i) objs += "{\"k\":";
  objs += "0" + std::string(100, '}');
  expect_error([&] { parse_json_bounded(objs, "o.json"); }, kBad, {"o.json", "nested deeper"});
}

TEST(JsonDepth, ParseErrorsAreShort) {
  // An unterminated 1 MB string: the message quotes at most kMaxJsonErrorBytes of it.
  const std::string text = "{\"a\": \"" + std::string(1'000'000, 'x');
  try {
    parse_json_bounded(text, "s.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 2 * kMaxJsonErrorBytes);
    EXPECT_NE(std::string(e.what()).find("s.json: not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(HostileConfig, DeeplyNestedConfigJson) {
  TempDir d;
  hostile::write_text(d.path / "config.json", hostile::llama_config());
  EXPECT_EQ(load_hf_config(d.file("config.json")).hidden_size, 8);  // control
  hostile::write_text(d.path / "config.json", hostile::llama_config(25'000));
  double s = seconds([&] {
    expect_error([&] { load_hf_config(d.file("config.json")); }, kBad, {"config.json", "nested deeper than 64"});
  });
  EXPECT_LT(s, 2.0);
}

TEST(HostileConfig, CountsAreCheckedAgainstEachOther) {
  TempDir d;
  auto load = [&](const std::string& extra) {
    // Later keys win in nlohmann, so `extra` overrides the base value.
    hostile::write_text(d.path / "config.json", hostile::llama_config(0, extra));
    return load_hf_config(d.file("config.json"));
  };
  EXPECT_EQ(load("").num_key_value_heads, 1);
  expect_error([&] { load(R"("num_attention_heads":3)"); }, kBad,
               {"num_attention_heads", "hidden_size = 8", "no head_dim"});
  expect_error([&] { load(R"("num_key_value_heads":0)"); }, kBad, {"num_key_value_heads", "0"});
  expect_error([&] { load(R"("num_attention_heads":4,"num_key_value_heads":3)"); }, kBad,
               {"num_key_value_heads", "3", "4"});
  expect_error([&] { load(R"("max_position_embeddings":0)"); }, kBad, {"max_position_embeddings"});
  expect_error([&] { load(R"("max_position_embeddings":-5)"); }, kBad, {"max_position_embeddings"});
  expect_error([&] { load(R"("max_position_embeddings":1099511627776)"); }, kBad,
               {"max_position_embeddings = 1099511627776", "16777216"});
  expect_error([&] { load(R"("num_local_experts":4,"num_experts_per_tok":8)"); }, kBad,
               {"num_experts_per_tok = 8", "[1, 4]"});
  expect_error([&] { load(R"("vocab_size":100000000)"); }, kBad, {"vocab_size = 100000000"});
}

TEST(HostileSafetensors, DeeplyNestedShapeGivesAShortError) {
  const std::string header = R"({"w":{"dtype":"F32","shape":)" + hostile::nested_array(200'000) +
                             R"(,"data_offsets":[0,4]}})";
  const std::string file = hostile::safetensors_bytes(header, 4);
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  try {
    parse_safetensors(bytes, "deep.safetensors");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("deep.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 300u);
  }
  // A shape that is wrong but shallow is quoted briefly too (8 entries at most).
  const std::string wide = R"({"w":{"dtype":"F32","shape":[)" + std::string(20000, '1').insert(0, "-") +
                           R"(,[1],[2],[3],[4],[5],[6],[7],[8],[9],[10]],"data_offsets":[0,4]}})";
  const std::string f2 = hostile::safetensors_bytes(wide, 4);
  try {
    parse_safetensors({reinterpret_cast<const uint8_t*>(f2.data()), f2.size()}, "wide.safetensors");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
}

TEST(HostileSafetensors, IndexJsonIsDepthBounded) {
  TempDir d;
  hostile::write_text(d.path / "model.safetensors.index.json", R"({"weight_map":{"a":)" +
                                                                   hostile::nested_array(50'000) + "}}");
  expect_error([&] { SafetensorsFile::open(d.path.string()); }, kBad,
               {"model.safetensors.index.json", "nested deeper"});
}

TEST(HostileSafetensors, IntegerWeightsAreRefused) {
  TempDir d;
  hostile::write_text(d.path / "config.json", hostile::llama_config());
  auto check = [&](const std::string& dtype) {
    const std::string file = hostile::llama_safetensors(dtype);
    hostile::write_text(d.path / "model.safetensors", file);
    SafetensorsFile st = SafetensorsFile::open(d.path.string());
    validate_model_tensors(load_hf_config(d.file("config.json")), tensor_descs(st.tensors()), -1, d.path.string());
  };
  EXPECT_NO_THROW(check("F32"));
  expect_error([&] { check("I32"); }, kBad, {"model.embed_tokens.weight", "I32", "floating-point"});
}

// GGUF: one inconsistent key or tensor each; model_config_from_gguf + validate_model_tensors is
// what show/run/estimate and the server all run.
void load_gguf(const std::string& path) {
  GgufFile g = GgufFile::open(path);
  ModelConfig c = model_config_from_gguf(g);
  validate_model_tensors(c, tensor_descs(g.tensors()), gguf_token_count(g), path);
}

TEST(HostileGguf, EachInconsistencyIsNamed) {
  TempDir d;
  const std::string p = d.file("m.gguf");
  using W = GgufWriter;
  auto set = [](const char* key, GgufValue v) { return [key, v](W& w) { w.metadata().set(key, v); }; };
  hostile::write_llama_gguf(p);
  EXPECT_NO_THROW(load_gguf(p));  // control

  struct Case {
    const char* what;
    std::function<void(W&)> edit;
    int64_t rows;
    std::vector<int64_t> extra;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"zero dimension", {}, 4, {0, 8}, {"blk.0.attn_norm.weight", "zero dimension", "[0, 8]"}},
      {"head_count does not divide hidden", set("llama.attention.head_count", GgufValue::scalar<uint32_t>(3)), 4, {},
       {"llama.attention.head_count = 3", "llama.embedding_length = 8"}},
      {"head_count_kv 0", set("llama.attention.head_count_kv", GgufValue::scalar<uint32_t>(0)), 4, {},
       {"llama.attention.head_count_kv = 0"}},
      {"head_count_kv does not divide head_count",
       [](W& w) {
         w.metadata().set("llama.attention.head_count", GgufValue::scalar<uint32_t>(4));
         w.metadata().set("llama.attention.head_count_kv", GgufValue::scalar<uint32_t>(3));
       },
       4, {}, {"llama.attention.head_count_kv = 3", "llama.attention.head_count = 4"}},
      {"more tokens than embedding rows",
       set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c", "d", "e"})), 4, {},
       {"token_embd.weight", "[4, 8]", "= 5"}},
      {"fewer tokens than embedding rows", set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c"})), 4,
       {}, {"token_embd.weight", "[4, 8]", "= 3"}},
      {"token list vs explicit vocab_size",
       [](W& w) {
         w.metadata().set("llama.vocab_size", GgufValue::scalar<uint32_t>(4));
         w.metadata().set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c", "d", "e"}));
       },
       4, {}, {"tokenizer.ggml.tokens has 5 entries", "4 rows"}},
      {"context_length 0", set("llama.context_length", GgufValue::scalar<uint32_t>(0)), 4, {},
       {"llama.context_length = 0", "[1, 16777216]"}},
      {"context_length -5", set("llama.context_length", GgufValue::scalar<int32_t>(-5)), 4, {},
       {"llama.context_length = -5"}},
      {"context_length 2^40", set("llama.context_length", GgufValue::scalar<uint64_t>(uint64_t{1} << 40)), 4, {},
       {"llama.context_length = 1099511627776"}},
      {"expert_used_count > expert_count",
       [](W& w) {
         w.metadata().set("llama.expert_count", GgufValue::scalar<uint32_t>(4));
         w.metadata().set("llama.expert_used_count", GgufValue::scalar<uint32_t>(8));
       },
       4, {}, {"llama.expert_used_count = 8", "[1, 4]"}},
      {"expert_used_count without experts", set("llama.expert_used_count", GgufValue::scalar<uint32_t>(2)), 4, {},
       {"llama.expert_used_count = 2", "[0, 0]"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::filesystem::remove(p);
    hostile::write_llama_gguf(p, c.edit, c.rows, c.extra);
    std::vector<std::string> parts = c.parts;
    parts.push_back("m.gguf");
    try {
      load_gguf(p);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kBad) << e.what();
      for (const auto& part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << e.what() << "' lacks '" << part << "'";
    }
  }
}

// A rank GGUF (pooling_type 4): without its classifier it is refused, naming the tensor; a decoder
// reranker without its "rerank" prompt template likewise, naming the key; with both, the template
// is split where the special tokens end (prefix, user-text body, suffix).
TEST(HostileGguf, RerankerHeadAndPromptAreRequired) {
  TempDir d;
  const std::string p = d.file("m.gguf");
  const std::vector<uint8_t> head(2 * 8 * 4);
  auto rank = [&](bool with_head, const char* tmpl) {
    std::filesystem::remove(p);
    hostile::write_llama_gguf(p, [&](GgufWriter& w) {
      w.add_scalar<uint32_t>("llama.pooling_type", 4);
      if (with_head) w.add_tensor("cls.output.weight", DType::F32, {2, 8}, head);
      if (tmpl) w.add_string("tokenizer.chat_template.rerank", tmpl);
    });
  };
  auto expect = [&](ErrorCode code, const char* part) {
    try {
      load_gguf(p);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const char* want : {part, "m.gguf"})
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << "'" << e.what() << "' lacks '" << want << "'";
    }
  };
  rank(false, nullptr);
  expect(ErrorCode::UNSUPPORTED, "'cls.output.weight'");
  rank(true, nullptr);
  expect(kBad, "'tokenizer.chat_template.rerank'");
  rank(true, "no placeholders here");
  expect(kBad, "{query} and {document}");
  rank(true, "<|im_start|>system\nJudge.<|im_end|>\n<|im_start|>user\nQ: {query}\nD: {document}<|im_end|>\n"
             "<|im_start|>assistant\n");
  GgufFile g = GgufFile::open(p);
  const ModelConfig c = model_config_from_gguf(g);
  EXPECT_EQ(c.num_labels, 2);
  EXPECT_EQ(c.rank_score_label, 0);
  EXPECT_EQ(c.rank_prompt.prefix, "<|im_start|>system\nJudge.<|im_end|>\n<|im_start|>user\n");
  EXPECT_EQ(c.rank_prompt.body, "Q: {query}\nD: {document}");
  EXPECT_EQ(c.rank_prompt.suffix, "<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace oxyd::loader
