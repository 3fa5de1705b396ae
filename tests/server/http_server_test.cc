// The transport of the real `oxydllm start` binary over raw HTTP: health, model listing (ids with
// '/'), API-key auth (flag beats OXYDLLM_API_KEY), CORS off/on/origin list and preflight, OpenAI
// error bodies for unknown routes (404), wrong methods (405), big bodies (413), malformed JSON
// (400), unknown models (404 model_not_found), the Prometheus names, and bad flags (exit 2).
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

json body_of(const httplib::Result& r) { return json::parse(r->body); }

void expect_error(const httplib::Result& r, int status, const std::string& type, const std::string& code = "") {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const json j = json::parse(r->body);
  ASSERT_TRUE(j.contains("error")) << r->body;
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_EQ(j["error"]["type"], type) << r->body;
  if (!code.empty()) {
    EXPECT_EQ(j["error"]["code"], code) << r->body;
  }
}

class HttpServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_store();
    server_ = new ServerProcess(dir_, {"--port", "0", "--models-dir", (dir_ / "store").string(), "--model", kModelId,
                                       "--max-body-mb", "1", "--chat-template", write_template(dir_).string(),
                                       "--no-pull"});
    ASSERT_GT(server_->port(), 0) << server_->stderr_text();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(dir_);
  }
  static inline fs::path dir_;
  static inline ServerProcess* server_ = nullptr;
};

TEST_F(HttpServer, HealthAndModels) {
  auto c = server_->client();
  auto r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body_of(r), json({{"status", "ok"}}));
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "");  // CORS off by default

  r = c.Get("/v1/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const json list = body_of(r);
  EXPECT_EQ(list["object"], "list");
  bool found = false;
  for (const auto& m : list["data"]) {
    EXPECT_EQ(m["object"], "model");
    EXPECT_TRUE(m["created"].is_number_integer());
    EXPECT_TRUE(m["owned_by"].is_string());
    if (m["id"] == kModelId) {
      found = true;
      EXPECT_EQ(m["owned_by"], "test");
      EXPECT_EQ(m["loaded"], true);
      EXPECT_EQ(m["architecture"], "LlamaForCausalLM");
      EXPECT_GT(m["size_bytes"].get<int64_t>(), 0);
    }
  }
  EXPECT_TRUE(found) << list.dump();

  r = c.Get(std::string("/v1/models/") + kModelId);  // the id has a '/'
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body_of(r)["id"], kModelId);
  expect_error(c.Get("/v1/models/nobody/nothing"), 404, "invalid_request_error", "model_not_found");
}

TEST_F(HttpServer, ErrorsAreOpenAiShaped) {
  auto c = server_->client();
  expect_error(c.Get("/v1/nothing-here"), 404, "invalid_request_error");
  expect_error(c.Post("/v2/chat", "{}", "application/json"), 404, "invalid_request_error");
  auto r = c.Get("/v1/chat/completions");
  expect_error(r, 405, "invalid_request_error");
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  expect_error(c.Delete("/v1/models"), 405, "invalid_request_error");

  expect_error(c.Post("/v1/chat/completions", "{\"model\": \"x\", ", "application/json"), 400, "invalid_request_error");
  expect_error(c.Post("/v1/chat/completions", "[1,2]", "application/json"), 400, "invalid_request_error");
  const json unknown = {{"model", "nobody/nothing"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  expect_error(c.Post("/v1/chat/completions", unknown.dump(), "application/json"), 404, "invalid_request_error",
               "model_not_found");
  const json bad_temp = {{"model", kModelId}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"temperature", 9}};
  r = c.Post("/v1/chat/completions", bad_temp.dump(), "application/json");
  expect_error(r, 400, "invalid_request_error");
  EXPECT_EQ(body_of(r)["error"]["param"], "temperature");

  // --max-body-mb 1: a 2 MB body is refused with 413 and an OpenAI body.
  const std::string big = "{\"model\":\"" + std::string(kModelId) + "\",\"prompt\":\"" + std::string(2 << 20, 'a') + "\"}";
  expect_error(c.Post("/v1/completions", big, "application/json"), 413, "invalid_request_error");
  // The server is still fine afterwards.
  r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServer, MetricsHaveTheDocumentedNames) {
  auto c = server_->client();
  const json req = {{"model", kModelId}, {"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}};
  auto r = c.Post("/v1/completions", req.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  r = c.Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const std::string m = r->body;
  for (const char* name :
       {"oxydllm_requests_total", "oxydllm_ttft_milliseconds", "oxydllm_tokens_per_second", "oxydllm_queue_depth",
        "oxydllm_running_requests", "oxydllm_kv_blocks_used", "oxydllm_kv_blocks_total", "oxydllm_kv_cache_usage_ratio",
        "oxydllm_prefix_cache_queries_total", "oxydllm_prefix_cache_hits_total", "oxydllm_prompt_tokens_total",
        "oxydllm_generation_tokens_total", "oxydllm_preemptions_total", "oxydllm_model_weights_bytes",
        "oxydllm_kv_cache_allocated_bytes"}) {
    EXPECT_NE(m.find(std::string("# HELP ") + name + " "), std::string::npos) << name;
    EXPECT_NE(m.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
  }
  EXPECT_NE(m.find("oxydllm_requests_total{model=\"test/tiny-llama\",endpoint=\"/v1/completions\",status=\"200\"}"),
            std::string::npos) << m;
  EXPECT_NE(m.find("oxydllm_ttft_milliseconds_bucket{model=\"test/tiny-llama\",le=\"10\"}"), std::string::npos) << m;
  EXPECT_NE(m.find("oxydllm_ttft_milliseconds_bucket{model=\"test/tiny-llama\",le=\"+Inf\"}"), std::string::npos);
  EXPECT_NE(m.find("oxydllm_kv_blocks_total{model=\"test/tiny-llama\"} "), std::string::npos);
  // 4 tokens generated by the request above (the counter is per model, so at least 4).
  std::smatch g;
  ASSERT_TRUE(std::regex_search(m, g, std::regex("oxydllm_generation_tokens_total\\{model=\"test/tiny-llama\"\\} ([0-9]+)")));
  EXPECT_GE(std::stoll(g[1]), 4);
}

TEST(HttpAuthCors, ApiKeyAndCorsOrigins) {
  const fs::path dir = make_store();
  // The flag beats the environment variable.
  ServerProcess s(dir,
                  {"--port", "0", "--models-dir", (dir / "store").string(), "--api-key", "secret", "--cors-origins",
                   "http://a.example, http://b.example", "--no-pull"},
                  {"OXYDLLM_API_KEY=from-env"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  expect_error(c.Get("/v1/models"), 401, "authentication_error", "invalid_api_key");
  expect_error(c.Get("/v1/models", {{"Authorization", "Bearer from-env"}}), 401, "authentication_error",
               "invalid_api_key");
  expect_error(c.Get("/v1/models", {{"Authorization", "Bearer secre"}}), 401, "authentication_error");
  expect_error(c.Post("/v1/chat/completions", "{}", "application/json"), 401, "authentication_error");
  auto r = c.Get("/v1/models", {{"Authorization", "Bearer secret"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/v1/models", {{"X-API-Key", "secret"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/health");  // open
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);

  r = c.Get("/health", {{"Origin", "http://a.example"}});
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://a.example");
  r = c.Get("/health", {{"Origin", "http://evil.example"}});
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "");
  // A preflight needs no key.
  r = c.Options("/v1/chat/completions", {{"Origin", "http://b.example"},
                                         {"Access-Control-Request-Method", "POST"},
                                         {"Access-Control-Request-Headers", "authorization, content-type"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://b.example");
  EXPECT_NE(r->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Headers"), "authorization, content-type");
  // The store has a model but nothing is loaded: the request loads it on demand.
  const json req = {{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 2}};
  r = c.Post("/v1/completions", {{"X-API-Key", "secret"}, {"Origin", "http://a.example"}}, req.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://a.example");
  fs::remove_all(dir);
}

TEST(HttpAuthCors, CorsStar) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--no-pull"},
                  {"OXYDLLM_CORS=1"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  auto r = c.Get("/v1/nothing");
  expect_error(r, 404, "invalid_request_error");
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*");
  r = c.Options("/v1/models", {{"Origin", "http://x.example"}, {"Access-Control-Request-Method", "GET"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*");
  fs::remove_all(dir);
}

TEST(HttpModels, LoadOnDemandConcurrentKeepAliveAndFailedLoad) {
  const fs::path dir = make_store();
  // A broken model next to the good one: its load fails for every waiter, and again on retry.
  fs::create_directories(dir / "store" / "test" / "broken");
  fs::copy_file(dir / "store" / kModelId / "config.json", dir / "store" / "test" / "broken" / "config.json");
  std::ofstream(dir / "store" / "test" / "broken" / "model.safetensors") << "not safetensors";
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--keep-alive", "1", "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  const json req = {{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 3}};
  std::vector<int> status(4, 0);
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      auto c = s.client();
      auto r = c.Post("/v1/completions", req.dump(), "application/json");
      status[i] = r ? r->status : -1;
    });
  for (auto& t : ts) t.join();
  for (int st : status) EXPECT_EQ(st, 200);
  auto c = s.client();
  auto loaded = [&] {
    auto r = c.Get(std::string("/v1/models/") + kModelId);
    return r && r->status == 200 && json::parse(r->body)["loaded"] == true;
  };
  EXPECT_TRUE(loaded());
  // --keep-alive 1: unloaded once idle (the reaper runs every second).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (loaded() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(loaded());
  auto r = c.Post("/v1/completions", req.dump(), "application/json");  // loads again
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;

  const json bad = {{"model", "test/broken"}, {"prompt", "Hi"}, {"max_tokens", 3}};
  for (int i = 0; i < 2; ++i) {
    r = c.Post("/v1/completions", bad.dump(), "application/json");
    expect_error(r, 500, "server_error", "model_load_failed");
    EXPECT_NE(json::parse(r->body)["error"]["message"].get<std::string>().find("broken"), std::string::npos);
  }
  fs::remove_all(dir);
}

TEST(HttpModels, FullQueueIs429) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                        "--max-num-seqs", "1", "--max-queued-requests", "1", "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  // 4 choices = 4 engine requests at once: one runs, one waits, the rest are refused.
  const json req = {{"model", kModelId}, {"prompt", "Hi"}, {"n", 4}, {"max_tokens", 50}, {"ignore_eos", true}};
  expect_error(c.Post("/v1/completions", req.dump(), "application/json"), 429, "rate_limit_error");
  // Once the engine has applied the aborts of the refused request, one choice fits again.
  json one = req;
  one["n"] = 1;
  int status = 0;
  std::string body;
  for (int i = 0; i < 100 && status != 200; ++i) {
    auto r = c.Post("/v1/completions", one.dump(), "application/json");
    ASSERT_TRUE(r);
    status = r->status;
    body = r->body;
    if (status == 429) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    else EXPECT_EQ(status, 200) << body;
  }
  EXPECT_EQ(status, 200) << body;
  fs::remove_all(dir);
}

TEST(HttpFlags, BadValuesExitTwoWithOneLine) {
  const fs::path dir = make_store();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--port", "70000"}, {"--port", "abc"}, {"--max-body-mb", "0"}, {"--keep-alive", "-1"},
           {"--chat-template", "/nonexistent/t.jinja"}, {"--model", "/nonexistent/model.gguf"}}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--no-pull", "--models-dir", (dir / "store").string()});
    ServerProcess s(dir, a);
    const int rc = s.wait_exit(60);
    const std::string err = s.stderr_text();
    if (args[0] == "--model") {
      EXPECT_EQ(rc, 1) << err;  // not a flag error: the model is missing
    } else {
      EXPECT_EQ(rc, 2) << args[0] << ": " << err;
    }
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(args[0]), std::string::npos) << err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
