// Generation over HTTP with the real binary and the tiny Llama (real Llama 2 vocabulary): the
// completions text for the golden prompts equals the transformers float64 greedy continuation
// (decoded by the Llama 2 tokenizer, itself checked against HF tokenizers in tests/tokenizer),
// streamed and not; chat SSE shape (role first, finish_reason, usage chunk only when asked,
// [DONE]); echo + prompt logprobs; n > 1; context errors and clamping; tokenize/detokenize
// against the tokenizer; the per-request timeout (408 / error chunk).
#include "http_test_util.h"

#include <cmath>

#include "tokenizer/tokenizer.h"

namespace oxyd::server::test {
namespace {

struct Goldens {
  std::vector<std::vector<int32_t>> prompts, greedy;
};

Goldens load_goldens() {
  const json j = json::parse(read_file(fs::path(OXYD_SOURCE_DIR) / "tests/data/archs/llama_tok/goldens.json"));
  Goldens g;
  for (auto& p : j["prompts"]) g.prompts.push_back(p.get<std::vector<int32_t>>());
  for (auto& p : j["greedy"]) g.greedy.push_back(p.get<std::vector<int32_t>>());
  return g;
}

class HttpGenerate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_store();
    server_ = new ServerProcess(dir_, {"--port", "0", "--models-dir", (dir_ / "store").string(), "--model", kModelId,
                                       "--chat-template", write_template(dir_).string(), "--no-pull"});
    ASSERT_GT(server_->port(), 0) << server_->stderr_text();
    const fs::path m = dir_ / "store" / kModelId;
    tok_ = tokenizer::Tokenizer::from_hf_files((m / "tokenizer.json").string(), (m / "tokenizer_config.json").string())
               .release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete tok_;
    fs::remove_all(dir_);
  }
  static json post(const std::string& path, const json& body, int expect_status = 200) {
    auto c = server_->client();
    auto r = c.Post(path, body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return json();
    EXPECT_EQ(r->status, expect_status) << r->body;
    return json::parse(r->body);
  }
  static inline fs::path dir_;
  static inline ServerProcess* server_ = nullptr;
  static inline tokenizer::Tokenizer* tok_ = nullptr;
};

TEST_F(HttpGenerate, CompletionsMatchTransformersGreedy) {
  const Goldens g = load_goldens();
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const json req = {{"model", kModelId}, {"prompt", g.prompts[p]}, {"max_tokens", g.greedy[p].size()},
                      {"temperature", 0}, {"ignore_eos", true}};
    const json r = post("/v1/completions", req);
    // Generated text = decode(prompt + generated) minus decode(prompt), as HF/vLLM detokenize it
    // (a SentencePiece first word keeps its leading space).
    std::vector<int32_t> all = g.prompts[p];
    all.insert(all.end(), g.greedy[p].begin(), g.greedy[p].end());
    const std::string full = tok_->decode(all, /*skip_special=*/true), pre = tok_->decode(g.prompts[p], true);
    ASSERT_EQ(full.compare(0, pre.size(), pre), 0);
    const std::string want = full.substr(pre.size());
    EXPECT_EQ(r["object"], "text_completion");
    EXPECT_EQ(r["choices"][0]["text"], want) << "prompt " << p;
    EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(r["usage"]["prompt_tokens"], g.prompts[p].size());
    EXPECT_EQ(r["usage"]["completion_tokens"], g.greedy[p].size());

    json sreq = req;
    sreq["stream"] = true;
    auto c = server_->client();
    const auto events = sse_events(post_stream(c, "/v1/completions", sreq));
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text, finish;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
      const json e = json::parse(events[i]);
      EXPECT_FALSE(e.contains("usage")) << events[i];
      text += e["choices"][0]["text"].get<std::string>();
      if (!e["choices"][0]["finish_reason"].is_null()) finish = e["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(text, want) << "prompt " << p;
    EXPECT_EQ(finish, "length");
  }
}

TEST_F(HttpGenerate, ChatStreamShapeAndUsageChunk) {
  json req = {{"model", kModelId}, {"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}},
              {"max_tokens", 6}, {"temperature", 0}, {"ignore_eos", true}};
  const json whole = post("/v1/chat/completions", req);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["completion_tokens"], 6);
  // The rendered prompt, tokenized as the server does (template text, no BOS added).
  const json tmpl = post("/apply-template", {{"messages", req["messages"]}});
  const std::string prompt = tmpl["prompt"];
  EXPECT_EQ(prompt, "<|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(whole["usage"]["prompt_tokens"], tok_->encode(prompt, false, true).size());

  for (bool include_usage : {false, true}) {
    req["stream"] = true;
    if (include_usage) req["stream_options"] = {{"include_usage", true}};
    auto c = server_->client();
    const auto ev = sse_events(post_stream(c, "/v1/chat/completions", req));
    ASSERT_GE(ev.size(), 4u);
    EXPECT_EQ(ev.back(), "[DONE]");
    const json first = json::parse(ev[0]);
    EXPECT_EQ(first["object"], "chat.completion.chunk");
    EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
    std::string text;
    int finishes = 0;
    const size_t last = ev.size() - (include_usage ? 2 : 1);
    for (size_t i = 0; i < last; ++i) {
      const json e = json::parse(ev[i]);
      EXPECT_EQ(e["id"], first["id"]);
      if (include_usage) EXPECT_TRUE(e.contains("usage") && e["usage"].is_null()) << ev[i];
      else EXPECT_FALSE(e.contains("usage")) << ev[i];
      if (e["choices"][0]["delta"].contains("content")) text += e["choices"][0]["delta"]["content"].get<std::string>();
      if (!e["choices"][0]["finish_reason"].is_null()) {
        finishes++;
        EXPECT_EQ(i, last - 1) << "finish_reason before the last choice chunk";
        EXPECT_EQ(e["choices"][0]["finish_reason"], "length");
      }
    }
    EXPECT_EQ(finishes, 1);
    EXPECT_EQ(text, whole["choices"][0]["message"]["content"]);
    if (include_usage) {
      const json u = json::parse(ev[ev.size() - 2]);
      EXPECT_TRUE(u["choices"].empty());
      EXPECT_EQ(u["usage"]["completion_tokens"], 6);
      EXPECT_EQ(u["usage"]["prompt_tokens"], whole["usage"]["prompt_tokens"]);
    }
  }
}

TEST_F(HttpGenerate, EchoPromptLogprobsAndN) {
  const Goldens g = load_goldens();
  const auto& ids = g.prompts[0];
  const json r = post("/v1/completions", {{"model", kModelId}, {"prompt", ids}, {"max_tokens", 1}, {"temperature", 0},
                                         {"echo", true}, {"logprobs", 1}, {"ignore_eos", true}});
  const json& lp = r["choices"][0]["logprobs"];
  ASSERT_EQ(lp["token_logprobs"].size(), ids.size() + 1);
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  for (size_t i = 1; i < lp["token_logprobs"].size(); ++i) EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
  // Greedy: the generated token is the argmax, so its logprob is the top-1 alternative's.
  const json& top_last = lp["top_logprobs"].back();
  ASSERT_EQ(top_last.size(), 1u);
  EXPECT_NEAR(top_last.begin().value().get<double>(), lp["token_logprobs"].back().get<double>(), 1e-4);
  const json plain = post("/v1/completions", {{"model", kModelId}, {"prompt", ids}, {"max_tokens", 1},
                                             {"temperature", 0}, {"ignore_eos", true}});
  EXPECT_EQ(r["choices"][0]["text"], tok_->decode(ids, false) + plain["choices"][0]["text"].get<std::string>());

  // max_tokens 0 with echo: the scored prompt only.
  const json z = post("/v1/completions", {{"model", kModelId}, {"prompt", ids}, {"max_tokens", 0}, {"echo", true},
                                         {"logprobs", 0}});
  EXPECT_EQ(z["choices"][0]["logprobs"]["token_logprobs"].size(), ids.size());
  EXPECT_EQ(z["usage"]["completion_tokens"], 0);

  const json n = post("/v1/completions", {{"model", kModelId}, {"prompt", {"Once upon", "The cat"}}, {"n", 2},
                                         {"max_tokens", 3}, {"seed", 7}, {"ignore_eos", true}});
  ASSERT_EQ(n["choices"].size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(n["choices"][i]["index"], i);
  EXPECT_EQ(n["usage"]["completion_tokens"], 12);
}

TEST_F(HttpGenerate, ContextLimits) {
  std::vector<int32_t> long_prompt(200, 450);  // the model's context is 128
  const json e = post("/v1/completions", {{"model", kModelId}, {"prompt", long_prompt}}, 400);
  const std::string msg = e["error"]["message"];
  EXPECT_NE(msg.find("200"), std::string::npos) << msg;
  EXPECT_NE(msg.find("128"), std::string::npos) << msg;
  // max_tokens past the context is clamped: it stops at the context with "length".
  const json r = post("/v1/completions", {{"model", kModelId}, {"prompt", std::vector<int32_t>(100, 450)},
                                         {"max_tokens", 1000}, {"ignore_eos", true}});
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["completion_tokens"], 28);
}

TEST_F(HttpGenerate, TokenizeDetokenizeMatchTheTokenizer) {
  const std::string text = "Hello world, ça va? 媽 🤗 done";
  const json t = post("/tokenize", {{"content", text}});
  const auto want = tok_->encode(text, /*add_special=*/false, /*parse_special=*/true);
  EXPECT_EQ(t["tokens"].get<std::vector<int32_t>>(), want);
  const json sp = post("/tokenize", {{"content", "a <s> b"}});  // specials parsed by default
  EXPECT_EQ(sp["tokens"].get<std::vector<int32_t>>(), tok_->encode("a <s> b", false, true));
  const json b = post("/tokenize", {{"content", text}, {"add_special", true}, {"model", kModelId}});
  EXPECT_EQ(b["tokens"][0], tok_->bos_id());
  EXPECT_EQ(b["tokens"].get<std::vector<int32_t>>(), tok_->encode(text, true, true));
  const json p = post("/tokenize", {{"content", "Hello world"}, {"with_pieces", true}});
  ASSERT_FALSE(p["tokens"].empty());
  EXPECT_TRUE(p["tokens"][0].contains("id") && p["tokens"][0].contains("piece"));
  const json d = post("/detokenize", {{"tokens", want}});
  EXPECT_EQ(d["content"], tok_->decode(want, false));
  EXPECT_EQ(d["content"], text);
  post("/detokenize", {{"tokens", {1, 99999999}}}, 400);
  post("/tokenize", {{"content", 5}}, 400);
  post("/tokenize", json::object(), 400);  // no input field: an error, not an empty answer (issue 21)
  // vLLM's field name and shape: "prompt", BOS added by default (add_special_tokens).
  const json v = post("/tokenize", {{"prompt", text}});
  EXPECT_EQ(v["tokens"].get<std::vector<int32_t>>(), tok_->encode(text, true, true));
  EXPECT_EQ(v["count"], v["tokens"].size());
  EXPECT_GT(v["max_model_len"].get<int>(), 0);
  const json v2 = post("/tokenize", {{"prompt", text}, {"add_special_tokens", false}});
  EXPECT_EQ(v2["tokens"].get<std::vector<int32_t>>(), want);
}

TEST_F(HttpGenerate, RequestTimeout) {
  // 100 sequences of ~100 tokens: far longer than the 0.5 s this request allows.
  const json req = {{"model", kModelId}, {"prompt", "Once"}, {"n", 100}, {"max_tokens", 120},
                    {"ignore_eos", true}, {"timeout", 0.5}};
  const json e = post("/v1/completions", req, 408);
  EXPECT_EQ(e["error"]["code"], "request_timeout");
  json s = req;
  s["stream"] = true;
  auto c = server_->client();
  const auto ev = sse_events(post_stream(c, "/v1/completions", s));
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev.back(), "[DONE]");
  const json err = json::parse(ev[ev.size() - 2]);
  EXPECT_EQ(err["error"]["code"], "request_timeout") << ev[ev.size() - 2];
  // The server still answers.
  post("/v1/completions", {{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 2}});
}

// A 1 MB pool (1,024 tokens of the tiny Llama's F32 KV, 64 blocks) for 16 requests that each grow
// to 8 + 110 tokens (8 blocks): the scheduler must set some aside and recompute them. Every request
// still gets its 110 tokens, /metrics counts the preemptions, and the pool drains.
TEST(HttpPreemption, SmallPoolFinishesEveryRequestAndCountsPreemptions) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId, "--no-pull",
                        "--kv-cache-mb", "1", "--max-num-seqs", "16"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  std::vector<int> status(16, 0), tokens(16, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < 16; ++i)
    clients.emplace_back([&, i] {
      auto c = s.client();
      const std::vector<int32_t> prompt = {1, 450, 4996 + i, 17354, 1701, 29916, 432, 17204};
      const json req = {{"model", kModelId}, {"prompt", prompt}, {"max_tokens", 110}, {"temperature", 0},
                        {"ignore_eos", true}};
      if (auto r = c.Post("/v1/completions", req.dump(), "application/json")) {
        status[size_t(i)] = r->status;
        if (r->status == 200) tokens[size_t(i)] = json::parse(r->body)["usage"]["completion_tokens"].get<int>();
      }
    });
  for (auto& t : clients) t.join();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(status[size_t(i)], 200) << "request " << i;
    EXPECT_EQ(tokens[size_t(i)], 110) << "request " << i;
  }
  auto c = s.client();
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  const std::string series = std::string("oxydllm_preemptions_total{model=\"") + kModelId + "\"}";
  EXPECT_GT(metric_value(m->body, series), 0.0) << m->body;
  const std::string used = std::string("oxydllm_kv_blocks_used{model=\"") + kModelId + "\"}";
  for (int i = 0; i < 100 && metric_value(m->body, used) > 0; ++i) {  // the gauge lags a step
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    m = c.Get("/metrics");
    ASSERT_TRUE(m);
  }
  EXPECT_EQ(metric_value(m->body, used), 0.0);
  fs::remove_all(dir);
}

// lm-eval's loglikelihood path: echo + logprobs on /v1/completions scores every prompt token.
// Oracle: transformers float64 logits of every prompt position of the tiny F32 Llama
// (tests/data/archs/llama/logits.bin, per prompt [len, vocab] f32). Also serves a model given
// by path (the id is the path).
TEST(HttpPromptLogprobs, EchoMatchesTransformersLogSoftmax) {
  const fs::path dir = make_store();
  const std::string model = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/llama";
  ServerProcess s(dir, {"--port", "0", "--model", model, "--models-dir", (dir / "store").string(), "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  const json goldens = json::parse(read_file(model + "/goldens.json"));
  const int64_t vocab = goldens["vocab_size"];
  const std::string raw = read_file(model + "/logits.bin");
  const float* logits = reinterpret_cast<const float*>(raw.data());
  size_t row0 = 0;
  auto c = s.client();
  for (const auto& pj : goldens["prompts"]) {
    const auto ids = pj.get<std::vector<int32_t>>();
    const json req = {{"model", model}, {"prompt", ids}, {"max_tokens", 1}, {"temperature", 0},
                      {"echo", true}, {"logprobs", 1}, {"ignore_eos", true}};
    auto r = c.Post("/v1/completions", req.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json lp = json::parse(r->body)["choices"][0]["logprobs"];
    ASSERT_EQ(lp["token_logprobs"].size(), ids.size() + 1);
    EXPECT_TRUE(lp["token_logprobs"][0].is_null());
    for (size_t i = 0; i < ids.size(); ++i) {
      // Row i of this prompt scores token i+1 (the last row scores the generated token).
      const float* row = logits + (row0 + i) * vocab;
      double mx = row[0];
      int32_t arg = 0;
      for (int64_t v = 1; v < vocab; ++v)
        if (row[v] > mx) mx = row[v], arg = int32_t(v);
      double sum = 0;
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(double(row[v]) - mx);
      const double lse = mx + std::log(sum);
      const int32_t next = i + 1 < ids.size() ? ids[i + 1] : arg;  // greedy picks the argmax
      EXPECT_NEAR(lp["token_logprobs"][i + 1].get<double>(), double(row[next]) - lse, 2e-3) << "position " << i;
      const json& top = lp["top_logprobs"][i + 1];
      ASSERT_EQ(top.size(), 1u);
      EXPECT_NEAR(top.begin().value().get<double>(), mx - lse, 2e-3) << "position " << i;
    }
    row0 += ids.size();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
