// vLLM's request extensions over HTTP with the real binary (issue 21 §5.8): each field reaches
// generation (ignore_eos, min_tokens, skip_special_tokens, include_stop_str_in_output, top_k,
// min_p, repetition_penalty; semantics in tests/serving/vllm_extensions_test.cc), unknown fields
// are accepted and named on stderr at --log-level debug only, and a model whose vocab_size is
// padded past its tokenizer detokenizes a padded id to nothing (§5.4).
#include "http_test_util.h"

#include "../serving/padded_model.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::server::test {
namespace {

class HttpVllmFields : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_store();
    server_ = new ServerProcess(dir_, {"--port", "0", "--models-dir", (dir_ / "store").string(), "--model", kModelId,
                                       "--no-pull", "--log-level", "debug"});
    ASSERT_GT(server_->port(), 0) << server_->stderr_text();
    const fs::path m = dir_ / "store" / kModelId;
    tok_ = tokenizer::Tokenizer::from_hf_files((m / "tokenizer.json").string(), (m / "tokenizer_config.json").string())
               .release();
    const json j = json::parse(read_file(fs::path(OXYD_SOURCE_DIR) / "tests/data/archs/llama_tok/goldens.json"));
    prompt_ = j["prompts"][0].get<std::vector<int32_t>>();
    greedy_ = j["greedy"][0].get<std::vector<int32_t>>();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete tok_;
    fs::remove_all(dir_);
  }
  static json complete(json body, int expect = 200) {
    body["model"] = kModelId;
    body["prompt"] = prompt_;
    auto c = server_->client();
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return json();
    EXPECT_EQ(r->status, expect) << r->body;
    return json::parse(r->body);
  }
  static std::string greedy_text(size_t n) {
    std::vector<int32_t> all = prompt_;
    all.insert(all.end(), greedy_.begin(), greedy_.begin() + long(n));
    return tok_->decode(all, true).substr(tok_->decode(prompt_, true).size());
  }
  static inline fs::path dir_;
  static inline ServerProcess* server_ = nullptr;
  static inline tokenizer::Tokenizer* tok_ = nullptr;
  static inline std::vector<int32_t> prompt_, greedy_;
};

TEST_F(HttpVllmFields, EosFieldsReachGeneration) {
  const json eos_bias = {{"2", 100}};  // Llama 2 </s>
  json r = complete({{"max_tokens", 8}, {"temperature", 0}, {"logit_bias", eos_bias}});
  EXPECT_EQ(r["usage"]["completion_tokens"], 1);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  r = complete({{"max_tokens", 8}, {"temperature", 0}, {"logit_bias", eos_bias}, {"min_tokens", 3}});
  EXPECT_EQ(r["usage"]["completion_tokens"], 4);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  r = complete({{"max_tokens", 8}, {"temperature", 0}, {"logit_bias", eos_bias}, {"ignore_eos", true}});
  EXPECT_EQ(r["usage"]["completion_tokens"], 8);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][0]["text"], "");  // special tokens write nothing by default
  r = complete({{"max_tokens", 2}, {"temperature", 0}, {"logit_bias", eos_bias}, {"ignore_eos", true},
                {"skip_special_tokens", false}});
  EXPECT_EQ(r["choices"][0]["text"], "</s></s>");
  // min_tokens above max_tokens: 400 naming the numbers.
  r = complete({{"max_tokens", 2}, {"min_tokens", 3}}, 400);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("min_tokens"), std::string::npos);
  complete({{"min_tokens", -1}}, 400);
  complete({{"include_stop_str_in_output", "yes"}}, 400);
}

TEST_F(HttpVllmFields, StopStringKeptWhenAsked) {
  const std::string full = greedy_text(24);
  const std::string stop = full.substr(full.size() / 2, 3);
  json r = complete({{"max_tokens", 24}, {"temperature", 0}, {"ignore_eos", true}, {"stop", stop},
                     {"include_stop_str_in_output", true}});
  EXPECT_EQ(r["choices"][0]["text"], full.substr(0, full.find(stop) + stop.size()));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  r = complete({{"max_tokens", 24}, {"temperature", 0}, {"ignore_eos", true}, {"stop", stop}});
  EXPECT_EQ(r["choices"][0]["text"], full.substr(0, full.find(stop)));
}

TEST_F(HttpVllmFields, WarpersReachTheSampler) {
  const std::string want = greedy_text(12);
  for (int seed : {5, 6}) {
    json r = complete({{"max_tokens", 12}, {"temperature", 1}, {"seed", seed}, {"top_k", 1}, {"ignore_eos", true}});
    EXPECT_EQ(r["choices"][0]["text"], want) << "top_k 1, seed " << seed;
    r = complete({{"max_tokens", 12}, {"temperature", 1}, {"seed", seed}, {"min_p", 1.0}, {"ignore_eos", true}});
    EXPECT_EQ(r["choices"][0]["text"], want) << "min_p 1, seed " << seed;
  }
  const json plain = complete({{"max_tokens", 12}, {"temperature", 1}, {"seed", 5}, {"ignore_eos", true}});
  EXPECT_NE(plain["choices"][0]["text"], want) << "temperature 1 alone matched greedy: the check proves nothing";
  const json rep = complete({{"max_tokens", 12}, {"temperature", 0}, {"repetition_penalty", 1e6}, {"ignore_eos", true}});
  EXPECT_NE(rep["choices"][0]["text"], want);  // the golden repeats tokens; the penalty forbids it
}

TEST_F(HttpVllmFields, UnknownFieldsAcceptedAndListedAtDebug) {
  const json r = complete({{"max_tokens", 2}, {"temperature", 0}, {"brand_new_field", 1}, {"another_one", "x"}});
  EXPECT_EQ(r["usage"]["completion_tokens"], 2);
  auto c = server_->client();
  const json chat = {{"model", kModelId}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2},
                     {"chat_only_unknown", true}};
  auto cr = c.Post("/v1/chat/completions", chat.dump(), "application/json");  // listed once parsed
  ASSERT_TRUE(cr);
  const std::string err = server_->stderr_text();
  // The two names in the order the body has them (the client's json sorts keys).
  EXPECT_NE(err.find("ignored unknown field(s): 'another_one', 'brand_new_field'"), std::string::npos) << err;
  EXPECT_NE(err.find("'chat_only_unknown'"), std::string::npos) << err;
  EXPECT_EQ(err.find("'max_tokens'"), std::string::npos) << "a known field was listed: " << err;
}

TEST(HttpUnknownFields, NotListedAtInfo) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId, "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  const json body = {{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 1}, {"brand_new_field", 1}};
  auto r = c.Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(s.stderr_text().find("brand_new_field"), std::string::npos);
  fs::remove_all(dir);
}

TEST(HttpPaddedVocab, DetokenizePaddedIdIsEmpty) {
  const fs::path dir = fs::temp_directory_path() / ("oxyd_http_pad_" + std::to_string(getpid()));
  oxyd::test::write_padded_qwen2(dir / "model", OXYD_SOURCE_DIR);
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", (dir / "model").string(),
                        "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  const int32_t pad = oxyd::test::kPaddedRealVocab + 1;
  auto r = c.Post("/detokenize", json({{"tokens", {pad}}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["content"], "");
  const int32_t past = oxyd::test::kPaddedRealVocab + oxyd::test::kPaddedRows;
  r = c.Post("/detokenize", json({{"tokens", {past}}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
