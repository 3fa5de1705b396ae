// `oxydllm run` end to end, the real binary as a subprocess: the tiny Llama checkpoint
// (tests/data/archs/llama_tok, goldens from transformers in float64) with the Llama 2
// tokenizer.json from tests/data/tokenizers must print the decoded golden greedy continuation; bad inputs
// exit 1 with one line on stderr naming the path.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "archs_util.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::model::test {
namespace {

namespace fs = std::filesystem;

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q.append(c == '\'' ? std::string("'\\''") : std::string(1, c));
  return q.append("'");
}

Result run_cli(const fs::path& tmp, const std::vector<std::string>& args) {
  std::string cmd = quote(OXYD_CLI_BIN);
  for (const auto& a : args) cmd.append(" ").append(quote(a));
  cmd.append(" </dev/null >").append(quote((tmp / "out").string())).append(" 2>").append(quote((tmp / "err").string()));
  const int st = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(tmp / "out");
  r.err = slurp(tmp / "err");
  return r;
}

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp = fs::temp_directory_path() / ("oxyd_cli_run_" + std::to_string(::getpid()));
    fs::remove_all(tmp);
    fs::create_directories(tmp / "model");
    const fs::path src = arch_dir("llama_tok");
    for (const char* f : {"config.json", "generation_config.json", "model.safetensors"})
      fs::copy_file(src / f, tmp / "model" / f);
    const fs::path tok = fs::path(OXYD_TEST_DATA_DIR) / "tokenizers" / "llama2";
    fs::copy_file(tok / "tokenizer.json", tmp / "model" / "tokenizer.json");
  }
  void TearDown() override { fs::remove_all(tmp); }
  fs::path tmp;
};

TEST_F(CliRun, RawPromptPrintsGoldenGreedyText) {
  Golden g = load_golden("llama_tok");
  const auto texts = g.j["prompt_text"].get<std::vector<std::string>>();
  auto tok = tokenizer::Tokenizer::from_hf_files((tmp / "model" / "tokenizer.json").string(), "");
  ASSERT_EQ(tok->encode(texts[0], true, true), g.prompts[0]);  // --raw feeds exactly the golden ids
  std::vector<int32_t> want = g.greedy[0];
  for (size_t i = 0; i < want.size(); ++i)
    if (tok->is_end_of_generation(want[i])) want.resize(i);  // run stops there
  Result r = run_cli(tmp, {"run", (tmp / "model").string(), texts[0], "--raw", "--max-tokens",
                           std::to_string(want.size()), "--threads", "2",
                           "--kv-dtype", "f32"});  // token for token against float64: the F32 cache
  ASSERT_EQ(r.rc, 0) << r.err;
  // The engine decodes generated text in the prompt's context (HF/vLLM): the first word keeps its space.
  std::vector<int32_t> all = g.prompts[0];
  all.insert(all.end(), want.begin(), want.end());
  const std::string pre = tok->decode(g.prompts[0], true), full = tok->decode(all, true);
  ASSERT_EQ(full.compare(0, pre.size(), pre), 0);
  EXPECT_EQ(r.out, full.substr(pre.size()) + "\n");
}

// An answer that never reaches an end-of-turn token ends at the default --max-tokens (1024), not
// when the context is full (issue 21: a base model looped for 161 s). The tiny checkpoint gets a
// 4096-token context so that the two differ; its greedy continuation never emits EOS.
TEST_F(CliRun, DefaultMaxTokensEndsAnAnswerThatNeverStops) {
  nlohmann::json cfg = nlohmann::json::parse(slurp(tmp / "model" / "config.json"));
  cfg["max_position_embeddings"] = 4096;
  std::ofstream(tmp / "model" / "config.json") << cfg.dump();
  Result r = run_cli(tmp, {"run", (tmp / "model").string(), "Once upon a time", "--raw", "--stats",
                           "--max-context-len", "4096", "--threads", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find(" 1024 tokens in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("| length]"), std::string::npos) << r.err;
}

TEST_F(CliRun, ErrorsExitOneWithOneLine) {
  Result r = run_cli(tmp, {"run", (tmp / "missing.gguf").string(), "hi"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("missing.gguf: no such file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  std::ofstream(tmp / "bad.gguf") << "not a gguf";
  r = run_cli(tmp, {"run", (tmp / "bad.gguf").string(), "hi"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad.gguf"), std::string::npos) << r.err;

  // This tokenizer has no chat template: the message says what to pass.
  r = run_cli(tmp, {"run", (tmp / "model").string(), "hi"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--chat-template"), std::string::npos) << r.err;

  r = run_cli(tmp, {"run", (tmp / "model").string(), "hi", "--raw", "--max-tokens", "-3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--max-tokens"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace oxyd::model::test
