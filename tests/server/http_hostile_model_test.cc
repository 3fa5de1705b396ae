// Issue 28: a hostile model in the store, requested by name, gets an error response naming the
// file while the server keeps running: a second model keeps answering and /health stays ok. The
// hostile files are generated here (tests/loader/hostile_inputs.h); before the fix the nested
// tokenizer.json killed `oxydllm start` with a stack overflow.
#include <signal.h>

#include "../loader/hostile_inputs.h"
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

namespace hostile = loader::test::hostile;

// A copy of the tiny Llama under store/test/<name> with `file` replaced by `text`.
void add_hostile_model(const fs::path& store, const std::string& name, const std::string& file,
                       const std::string& text) {
  const fs::path src = store / kModelId, dst = store / "test" / name;
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), dst / e.path().filename());
  hostile::write_text(dst / file, text);
}

TEST(HttpHostileModel, FailedLoadsAnswerWithAnErrorAndTheServerKeepsServing) {
  const fs::path dir = make_store(), store = dir / "store";
  add_hostile_model(store, "deep-tokenizer", "tokenizer.json", hostile::nested_sequence_tokenizer("normalizer", 30'000));
  add_hostile_model(store, "deep-config", "config.json", hostile::llama_config(25'000));
  add_hostile_model(store, "bad-heads", "config.json", hostile::llama_config(0, R"("num_key_value_heads":3)"));
  {
    ServerProcess server(dir, {"--port", "0", "--models-dir", store.string(), "--model", kModelId, "--chat-template",
                               write_template(dir).string(), "--no-pull"});
    ASSERT_GT(server.port(), 0) << server.stderr_text();
    auto c = server.client();
    const json completion = {{"prompt", "Hello"}, {"max_tokens", 2}, {"temperature", 0}};
    const std::vector<std::pair<std::string, std::string>> hostile_models = {
        {"test/deep-tokenizer", "nested deeper than 64"},
        {"test/deep-config", "nested deeper than 64"},
        {"test/bad-heads", "num_key_value_heads"}};
    for (int round = 0; round < 2; ++round) {  // a second request for the same model fails the same way
      for (const auto& [id, reason] : hostile_models) {
        SCOPED_TRACE(id);
        json req = completion;
        req["model"] = id;
        auto r = c.Post("/v1/completions", req.dump(), "application/json");
        ASSERT_TRUE(r) << "no response: the server died? " << server.stderr_text();
        EXPECT_GE(r->status, 400) << r->body;
        EXPECT_LT(r->status, 600) << r->body;
        const json j = json::parse(r->body, nullptr, false);
        ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
        const std::string msg = j["error"]["message"].get<std::string>();
        EXPECT_NE(msg.find(reason), std::string::npos) << msg;
        EXPECT_NE(msg.find(id.substr(5)), std::string::npos) << "the message names the model: " << msg;
        // The good model still answers, and /health is ok.
        json good = completion;
        good["model"] = kModelId;
        auto g = c.Post("/v1/completions", good.dump(), "application/json");
        ASSERT_TRUE(g) << server.stderr_text();
        EXPECT_EQ(g->status, 200) << g->body;
        auto h = c.Get("/health");
        ASSERT_TRUE(h);
        EXPECT_EQ(h->status, 200);
      }
    }
    EXPECT_EQ(kill(server.pid(), 0), 0) << "the server process is gone";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
