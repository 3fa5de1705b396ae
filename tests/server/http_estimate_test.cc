// `oxydllm estimate` prints exactly the KV pool `oxydllm start` allocates with the same flags
// (issue 21 §5.7): bytes, blocks, context and max_num_seqs read from start's startup line against
// estimate's output, for the defaults (half precision, trained context, auto pool) and for
// explicit --max-context-len / --max-num-seqs / --kv-dtype / --kv-quant / --kv-cache-mb.
#include <cstdio>

#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

struct Pool {
  int64_t bytes = -1, blocks = -1, context = -1, seqs = -1;
  std::string format;
};

// "model ID: KV cache BF16, 40 blocks x 16 tokens (81920 bytes), context 128, max_num_seqs 64"
Pool from_start(const std::string& err) {
  static const std::regex re(
      R"(KV cache (\S+), ([0-9]+) blocks x 16 tokens \(([0-9]+) bytes\), context ([0-9]+), max_num_seqs ([0-9]+))");
  std::smatch m;
  Pool p;
  if (!std::regex_search(err, m, re)) return p;
  p.format = m[1];
  p.blocks = std::stoll(m[2]);
  p.bytes = std::stoll(m[3]);
  p.context = std::stoll(m[4]);
  p.seqs = std::stoll(m[5]);
  return p;
}

// "512-token pool (32 blocks of 16), 128 ctx, 4 seq max, F32; ..." and "  81920   (bytes: what ..."
Pool from_estimate(const std::string& out) {
  static const std::regex pool(R"(([0-9]+)-token pool \(([0-9]+) blocks of 16\), ([0-9]+) ctx, ([0-9]+) seq max, ([^;]+);)");
  static const std::regex bytes(R"(([0-9]+)   \(bytes: what `oxydllm start` with these flags allocates\))");
  std::smatch m;
  Pool p;
  if (std::regex_search(out, m, pool)) {
    p.blocks = std::stoll(m[2]);
    p.context = std::stoll(m[3]);
    p.seqs = std::stoll(m[4]);
    p.format = m[5];
  }
  if (std::regex_search(out, m, bytes)) p.bytes = std::stoll(m[1]);
  return p;
}

std::string run_estimate(const std::vector<std::string>& args, const std::string& env) {
  std::string cmd = env + " '" + std::string(OXYD_CLI_BIN) + "' estimate";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    pclose(f);
  }
  return out;
}

TEST(EstimateEqualsStart, SameFlagsSamePool) {
  const fs::path dir = make_store();
  const std::string model = (dir / "store" / kModelId).string();
  struct Case {
    std::vector<std::string> flags;
    std::string env;  // also given to start
  };
  // OXYDLLM_KV_QUANT=off is the default value: it only stops the harness from choosing F32.
  const std::vector<Case> cases = {
      {{}, "OXYDLLM_KV_QUANT=off"},
      {{"--max-context-len", "64", "--max-num-seqs", "3", "--kv-dtype", "f32"}, ""},
      {{"--kv-quant", "lossless"}, ""},
      {{"--kv-cache-mb", "1", "--kv-dtype", "f16"}, ""},
      {{"--max-num-seqs", "5"}, "OXYDLLM_KV_QUANT=off"},
  };
  for (const Case& c : cases) {
    std::string what;
    for (const auto& f : c.flags) what += f + " ";
    SCOPED_TRACE("flags: " + what + c.env);
    std::vector<std::string> args = {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                                     "--no-pull"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    std::vector<std::string> env;
    if (!c.env.empty()) env.push_back(c.env);
    ServerProcess s(dir, args, env);
    ASSERT_GT(s.port(), 0) << s.stderr_text();
    const Pool started = from_start(s.stderr_text());
    ASSERT_GT(started.bytes, 0) << s.stderr_text();

    std::vector<std::string> eargs = {model};
    eargs.insert(eargs.end(), c.flags.begin(), c.flags.end());
    const std::string out = run_estimate(eargs, c.env);
    const Pool est = from_estimate(out);
    EXPECT_EQ(est.bytes, started.bytes) << out;
    EXPECT_EQ(est.blocks, started.blocks) << out;
    EXPECT_EQ(est.context, started.context) << out;
    EXPECT_EQ(est.seqs, started.seqs) << out;
  }
  fs::remove_all(dir);
}

// The defaults: a half-precision pool, the trained context (128 for the tiny model), and an auto
// pool sized from what 64 sequences need, not 16 full contexts of F32.
TEST(EstimateEqualsStart, DefaultsAreHalfPrecisionAndTrainedContext) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId, "--no-pull"},
                  {"OXYDLLM_KV_QUANT=off"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  const Pool p = from_start(s.stderr_text());
  EXPECT_EQ(p.format, "BF16") << s.stderr_text();
  const json cfg = json::parse(read_file(dir / "store" / kModelId / "config.json"));
  EXPECT_EQ(p.context, cfg["max_position_embeddings"].get<int64_t>());
  // 64 sequences × 256 tokens (more than one 128-token context) in 16-token blocks.
  EXPECT_EQ(p.blocks, 64 * 256 / 16);
  const int64_t per_token = 2 * cfg["num_hidden_layers"].get<int64_t>() * cfg["num_key_value_heads"].get<int64_t>() *
                            cfg["head_dim"].get<int64_t>() * 2;  // K+V, 2-byte elements
  EXPECT_EQ(p.bytes, p.blocks * 16 * per_token);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
