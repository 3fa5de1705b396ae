// `oxydllm start --kv-dtype` / `--kv-quant` with the real binary and the tiny Llama: a BF16 pool serves the
// transformers float64 greedy continuation (tests/data/archs/llama_tok/goldens.json), /metrics
// and the startup log name the dtype, the flag beats OXYDLLM_KV_DTYPE, the same budget holds
// twice the F32 blocks, and a bad value is a one-line CLI error naming --kv-dtype (exit 2).
#include "http_test_util.h"

#include "tokenizer/tokenizer.h"

namespace oxyd::server::test {
namespace {

TEST(HttpKvDtype, Bf16ServesTheGoldenAndIsReported) {
  const fs::path dir = make_store();
  const json golden = json::parse(read_file(fs::path(OXYD_SOURCE_DIR) / "tests/data/archs/llama_tok/goldens.json"));
  const auto prompt = golden["prompts"][0].get<std::vector<int32_t>>();
  const auto greedy = golden["greedy"][0].get<std::vector<int32_t>>();
  const fs::path m = dir / "store" / kModelId;
  auto tok = tokenizer::Tokenizer::from_hf_files((m / "tokenizer.json").string(), (m / "tokenizer_config.json").string());
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), greedy.begin(), greedy.end());
  const std::string want = tok->decode(all, true).substr(tok->decode(prompt, true).size());

  const std::vector<std::string> base = {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                                         "--no-pull", "--kv-cache-mb", "8"};
  int64_t bytes[2] = {0, 0}, blocks[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = base;
    if (i == 0) args.insert(args.end(), {"--kv-dtype", "bf16"});  // beats the environment's f16
    else args.insert(args.end(), {"--kv-dtype", "f32"});
    ServerProcess s(dir, args, {"OXYDLLM_KV_DTYPE=f16"});
    ASSERT_GT(s.port(), 0) << s.stderr_text();
    const char* name = i == 0 ? "BF16" : "F32";
    EXPECT_NE(s.stderr_text().find(std::string("KV cache ") + name), std::string::npos) << s.stderr_text();
    auto c = s.client();
    const json req = {{"model", kModelId}, {"prompt", prompt}, {"max_tokens", greedy.size()}, {"temperature", 0},
                      {"ignore_eos", true}};
    auto r = c.Post("/v1/completions", req.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body)["choices"][0]["text"], want) << name;
    auto mr = c.Get("/metrics");
    ASSERT_TRUE(mr);
    const std::string info = metric_line(mr->body, "oxydllm_kv_cache_info{");
    EXPECT_NE(info.find(std::string("dtype=\"") + name + "\""), std::string::npos) << info;
    const std::string b = metric_line(mr->body, "oxydllm_kv_cache_allocated_bytes{");
    ASSERT_FALSE(b.empty());
    bytes[i] = int64_t(std::stod(b.substr(b.rfind(' ') + 1)));
    const std::string n = metric_line(mr->body, "oxydllm_kv_blocks_total{");
    ASSERT_FALSE(n.empty());
    blocks[i] = int64_t(std::stod(n.substr(n.rfind(' ') + 1)));
  }
  // The same 8 MB budget: both pools fill it, the BF16 one with twice the blocks (± rounding).
  EXPECT_LE(bytes[0], 8 << 20);
  EXPECT_LE(bytes[1], 8 << 20);
  EXPECT_GT(bytes[1], (8 << 20) * 0.99);
  EXPECT_NEAR(double(blocks[0]), 2.0 * double(blocks[1]), 1.0);
  fs::remove_all(dir);
}

// --kv-quant balanced (env OXYDLLM_KV_QUANT too): served, named Q6 in /metrics and the log.
TEST(HttpKvDtype, KvQuantServesAndIsReported) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId, "--no-pull",
                        "--kv-quant", "balanced"},
                  {"OXYDLLM_KV_QUANT=aggressive"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  EXPECT_NE(s.stderr_text().find("KV cache Q6"), std::string::npos) << s.stderr_text();
  auto c = s.client();
  const json req = {{"model", kModelId}, {"prompt", "Once upon a time"}, {"max_tokens", 8}, {"temperature", 0},
                    {"ignore_eos", true}};
  auto r = c.Post("/v1/completions", req.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["usage"]["completion_tokens"], 8);
  auto mr = c.Get("/metrics");
  ASSERT_TRUE(mr);
  EXPECT_NE(metric_line(mr->body, "oxydllm_kv_cache_info{").find("dtype=\"Q6\""), std::string::npos) << mr->body;
  // /v1/models: the format and what a token costs. 2 layers × K+V × 1 head × (4-byte norm + 64·6/8) = 208 B.
  auto lr = c.Get("/v1/models");
  ASSERT_TRUE(lr);
  const json m = json::parse(lr->body)["data"][0];
  EXPECT_EQ(m["kv_cache_format"], "Q6") << m.dump();
  EXPECT_EQ(m["kv_quant"], "balanced") << m.dump();
  EXPECT_EQ(m["kv_bytes_per_token"], 208) << m.dump();
  fs::remove_all(dir);
}

TEST(HttpKvDtype, BadValueIsAFlagError) {
  const fs::path dir = make_store();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--kv-dtype", "f8"}, {"--kv-dtype", ""}, {"--kv-quant", "8bit"}}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--no-pull", "--models-dir", (dir / "store").string()});
    ServerProcess s(dir, a);
    EXPECT_EQ(s.wait_exit(60), 2) << s.stderr_text();
    const std::string err = s.stderr_text();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(args[0]), std::string::npos) << err;
    EXPECT_NE(err.find(args[0] == "--kv-quant" ? "lossless" : "f16"), std::string::npos) << err;  // what is allowed
  }
  ServerProcess env_bad(dir, {"--no-pull", "--models-dir", (dir / "store").string()}, {"OXYDLLM_KV_DTYPE=int4"});
  EXPECT_EQ(env_bad.wait_exit(60), 2) << env_bad.stderr_text();
  EXPECT_NE(env_bad.stderr_text().find("--kv-dtype"), std::string::npos) << env_bad.stderr_text();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
