// The real `oxydllm` binary as a subprocess against the fake hub (HF_ENDPOINT): a pull killed
// with SIGKILL mid-download and rerun gives a byte-identical file (resumed with Range from the
// .part), list output, rm confirmation and id safety, and --models-dir beating OXYDLLM_MODELS_DIR.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "fake_hub.h"
#include "hub_test_util.h"

extern char** environ;
namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using namespace oxyd::hub::testing;

struct Cli : ::testing::Test {
  FakeHub hub;
  TempDir tmp;
  std::string root = tmp / "models";
  std::string content = tiny_gguf(1536 * 1024, 77);

  void SetUp() override {
    hub.add_repo({"Qwen/Kill-GGUF", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c",
                  {{"Kill-Q4_K_M.gguf", content, true}, {"Kill-Q8_0.gguf", tiny_gguf(4096, 78), true}}, ""});
    fs::create_directories(tmp / "home");
    fs::create_directories(tmp / "hfcache");
  }

  // Starts the binary with HOME, HF_ENDPOINT, HF_HUB_CACHE pointing into the sandbox.
  pid_t spawn(const std::vector<std::string>& args, const std::string& stdin_text = "",
              const std::vector<std::string>& extra_env = {}) {
    write_file(tmp / "stdin", stdin_text);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (kv.rfind("HOME=", 0) && kv.rfind("HF_", 0) && kv.rfind("OXYDLLM_", 0) && kv.rfind("HUGGING", 0)) env.push_back(kv);
    }
    env.push_back("HOME=" + (tmp / "home"));
    const bool own_endpoint = std::any_of(extra_env.begin(), extra_env.end(),
                                          [](const std::string& e) { return e.rfind("HF_ENDPOINT=", 0) == 0; });
    if (!own_endpoint) env.push_back("HF_ENDPOINT=" + hub.endpoint());
    env.push_back("HF_HUB_CACHE=" + (tmp / "hfcache"));
    for (const auto& e : extra_env) env.push_back(e);
    std::vector<char*> argv{const_cast<char*>(OXYD_CLI_BIN)}, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, (tmp / "stdin").c_str(), O_RDONLY, 0);
    // Each run gets its own output files: a still-running earlier process keeps writing to its own.
    ++runs_;
    const std::string out_path = tmp / ("stdout." + std::to_string(runs_));
    const std::string err_path = tmp / ("stderr." + std::to_string(runs_));
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, OXYD_CLI_BIN, &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_EQ(rc, 0) << "cannot start " << OXYD_CLI_BIN;
    return pid;
  }
  static int wait_for(pid_t pid) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
  }
  int run(const std::vector<std::string>& args, const std::string& stdin_text = "",
          const std::vector<std::string>& extra_env = {}) {
    return wait_for(spawn(args, stdin_text, extra_env));
  }
  std::string out() { return read_file(tmp / ("stdout." + std::to_string(runs_))); }
  std::string err() { return read_file(tmp / ("stderr." + std::to_string(runs_))); }
  int runs_ = 0;
};

// Issue 21: with the hub unreachable, `pull` and a bare `start` waited 31 s in silence (a refused
// connection was retried). Now `pull` says what it is asking and fails at once; `start` on an
// empty store says on stderr how to get a model, with or without --no-pull, then serves.
TEST_F(Cli, UnreachableHubFailsAtOnceAndStartSaysHowToGetAModel) {
  const std::vector<std::string> no_hub = {"HF_ENDPOINT=http://127.0.0.1:1"};  // port 1: refused
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root}, "", no_hub), 1);
  // Before: 31 s of retries (1 + 2 + 4 + 8 + 16 s). The bounds leave room for a loaded machine.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_NE(err().find("listing Qwen/Kill-GGUF on http://127.0.0.1:1"), std::string::npos) << err();
  EXPECT_NE(err().find("cannot reach the hub at http://127.0.0.1:1"), std::string::npos) << err();

  for (const bool no_pull : {false, true}) {
    std::vector<std::string> args = {"start", "--port", "0", "--models-dir", root};
    if (no_pull) args.push_back("--no-pull");
    t0 = std::chrono::steady_clock::now();
    const pid_t pid = spawn(args, "", no_hub);
    std::string e;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
      e = err();
      if (e.find("listening on") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0) << e;
    ::kill(pid, SIGTERM);
    wait_for(pid);
    e = err();
    EXPECT_NE(e.find("no model to serve: the store " + root + " is empty"), std::string::npos) << e;
    EXPECT_NE(e.find("oxydllm pull unsloth/gemma-3-270m-it-GGUF"), std::string::npos) << e;
    EXPECT_EQ(e.find("pulling the default model") != std::string::npos, !no_pull) << e;
    EXPECT_LT(e.find("no model to serve"), e.find("listening on")) << e;
  }
}

// --dtype takes auto or bf16; anything else stops `start` and `run` before a model loads.
TEST_F(Cli, DtypeFlagIsChecked) {
  EXPECT_EQ(run({"start", "--port", "0", "--models-dir", root, "--dtype", "f16"}), 2);
  EXPECT_NE(err().find("--dtype must be auto or bf16, got 'f16'"), std::string::npos) << err();
  EXPECT_NE(run({"run", "no-such-model", "x", "--models-dir", root, "--dtype", "fp32"}), 0);
  EXPECT_NE(err().find("--dtype must be auto or bf16, got 'fp32'"), std::string::npos) << err();
}

// Waiting on a failing hub is visible: each retry prints why and when the next attempt comes.
TEST_F(Cli, PullAnnouncesEachRetry) {
  hub.fail_500_info = 1;
  ASSERT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root, "--variant", "Q8_0"}), 0) << err();
  EXPECT_NE(err().find("model info for Qwen/Kill-GGUF: HTTP 500; retrying in 1.0 s (attempt 2 of 6)"),
            std::string::npos)
      << err();
}

TEST_F(Cli, KilledPullResumesToAByteIdenticalFile) {
  const std::string part = root + "/Qwen/Kill-GGUF/Kill-Q4_K_M.gguf.part";
  const std::string final_path = root + "/Qwen/Kill-GGUF/Kill-Q4_K_M.gguf";
  // ~6 s for the whole file: time to kill it midway even when the lock-refusal run between takes a
  // second on a loaded machine (at 1 MiB/s the pull once finished first under ctest -j2).
  hub.bytes_per_second = 256 * 1024;
  pid_t pid = spawn({"pull", "Qwen/Kill-GGUF", "--models-dir", root});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::error_code ec;
  while (std::chrono::steady_clock::now() < deadline && int64_t(fs::file_size(part, ec)) < 300 * 1024)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // A second pull into the same folder is refused while the first runs (lock on the folder).
  EXPECT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root}), 1);
  EXPECT_NE(err().find("another `oxydllm pull` is writing"), std::string::npos) << err();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_for(pid), -SIGKILL);
  ASSERT_TRUE(fs::exists(part)) << err();
  const int64_t left = int64_t(fs::file_size(part));
  EXPECT_GE(left, 300 * 1024);
  EXPECT_LT(left, int64_t(content.size()));
  EXPECT_FALSE(fs::exists(final_path));  // an unverified file never has the final name

  hub.bytes_per_second = 0;
  hub.reset_counters();
  ASSERT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root}), 0) << err();
  EXPECT_EQ(read_file(final_path), content);
  EXPECT_FALSE(fs::exists(part));
  auto ranges = hub.ranges();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].range, "bytes=" + std::to_string(left) + "-");
  EXPECT_EQ(hub.body_bytes_served.load(), int64_t(content.size()) - left);
  EXPECT_NE(out().find("pulled Qwen/Kill-Q4_K_M"), std::string::npos) << out();
  // Not a terminal: plain progress lines, no bar redraws.
  EXPECT_NE(err().find("resuming at"), std::string::npos) << err();
  EXPECT_EQ(err().find('\r'), std::string::npos);
}

TEST_F(Cli, ListRmAndFlagPrecedence) {
  ASSERT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root, "--variant", "q8_0"}), 0) << err();
  // An HF-cache model shows up too, marked as such.
  std::string snap = tmp / "hfcache/models--unsloth--g-GGUF/snapshots/abc";
  write_file(snap + "/g-Q4_0.gguf", tiny_gguf(5000, 79, "gemma3"));
  ASSERT_EQ(run({"list", "--models-dir", root}), 0) << err();
  std::string o = out();
  EXPECT_NE(o.find("ID"), std::string::npos);
  EXPECT_NE(o.find("ARCHITECTURE"), std::string::npos);
  EXPECT_NE(o.find("Qwen/Kill-Q8_0"), std::string::npos) << o;
  EXPECT_NE(o.find("llama"), std::string::npos);
  EXPECT_NE(o.find("gguf F32"), std::string::npos) << o;  // from its tensors (one F32 matrix), not the name
  EXPECT_NE(o.find("store: " + root + "/Qwen/Kill-GGUF"), std::string::npos) << o;
  EXPECT_NE(o.find("unsloth/g-Q4_0"), std::string::npos);
  EXPECT_NE(o.find("gemma3"), std::string::npos);
  EXPECT_NE(o.find("hf-cache: " + snap), std::string::npos);
  EXPECT_NE(o.find("1 model(s) in " + root + ", 1 in the Hugging Face cache"), std::string::npos) << o;

  // The flag beats OXYDLLM_MODELS_DIR; the variable is used without the flag.
  fs::create_directories(tmp / "other");
  ASSERT_EQ(run({"list", "--no-hf-cache"}, "", {"OXYDLLM_MODELS_DIR=" + (tmp / "other")}), 0);
  EXPECT_NE(out().find("0 model(s) in " + (tmp / "other")), std::string::npos) << out();
  ASSERT_EQ(run({"list", "--no-hf-cache", "--models-dir", root}, "", {"OXYDLLM_MODELS_DIR=" + (tmp / "other")}), 0);
  EXPECT_NE(out().find("Qwen/Kill-Q8_0"), std::string::npos);

  // rm: path-like ids are refused before anything is looked up.
  for (std::string bad : {"../../etc", "/etc/passwd", "Qwen/../..", "a/b/c"}) {
    EXPECT_EQ(run({"rm", "-f", bad, "--models-dir", root}), 1) << bad;
    EXPECT_NE(err().find("is not a model id"), std::string::npos) << err();
  }
  EXPECT_EQ(run({"rm", "-f", "unsloth/g-Q4_0", "--models-dir", root}), 1);
  EXPECT_NE(err().find("Hugging Face cache"), std::string::npos) << err();
  EXPECT_TRUE(fs::exists(snap + "/g-Q4_0.gguf"));
  // Confirmation: "n" keeps it, "y" removes it.
  EXPECT_EQ(run({"rm", "Qwen/Kill-Q8_0", "--models-dir", root}, "n\n"), 1);
  EXPECT_NE(err().find("[y/N]"), std::string::npos);
  EXPECT_TRUE(fs::exists(root + "/Qwen/Kill-GGUF/Kill-Q8_0.gguf"));
  EXPECT_EQ(run({"rm", "Qwen/Kill-Q8_0", "--models-dir", root}, "y\n"), 0) << err();
  EXPECT_NE(out().find("removed Qwen/Kill-Q8_0"), std::string::npos);
  EXPECT_FALSE(fs::exists(root + "/Qwen"));
  EXPECT_EQ(run({"rm", "-f", "Qwen/Kill-Q8_0", "--models-dir", root}), 1);
  EXPECT_NE(err().find("no local model"), std::string::npos);
}

TEST_F(Cli, ShowAndEstimate) {
  ASSERT_EQ(run({"pull", "Qwen/Kill-GGUF", "--models-dir", root, "--variant", "Q8_0"}), 0) << err();
  ASSERT_EQ(run({"show", "Qwen/Kill-Q8_0", "--models-dir", root}), 0) << err();
  for (const char* s : {"Id            Qwen/Kill-Q8_0", "Architecture  llama", "Parameters", "Context       128",
                        "1 layers, hidden 16, 2 q heads, 1 kv heads, head_dim 8", "Attention     1 full",
                        "Quantization  F32 (F32 ×1)",
                        // 1 layer × K+V × head_dim 8: BF16 2·8·2 B; quantized 2·(4-byte norm + 8·bits/8)
                        "KV cache      32 B/token BF16 (default), lossless Q8 24, balanced Q6 20, aggressive Q5 18", "Chat template no", "Files         Kill-Q8_0.gguf"})
    EXPECT_NE(out().find(s), std::string::npos) << "missing '" << s << "' in\n" << out();

  // A local id (prefix accepted, as oxydLLM), a path, and a hub repo.
  // start's flags: the context is clamped to the trained 128 tokens; the pool holds 4 of them.
  ASSERT_EQ(run({"estimate", "Qwen/Kill", "--models-dir", root, "--max-context-len", "1024", "--max-num-seqs", "4",
                 "--kv-dtype", "f32"}),
            0)
      << err();
  EXPECT_NE(out().find("Model     Qwen/Kill-Q8_0"), std::string::npos) << out();
  EXPECT_NE(out().find("512-token pool (32 blocks of 16), 128 ctx, 4 seq max, F32; 1 full layers"), std::string::npos)
      << out();
  // 1 layer × K+V × 1 head × 8 dims × 4 B (F32) × 4 × 128 tokens = 32 KiB.
  EXPECT_NE(out().find("32.0 KiB"), std::string::npos) << out();
  EXPECT_NE(out().find("32768   (bytes: what `oxydllm start` with these flags allocates)"), std::string::npos) << out();
  ASSERT_EQ(run({"estimate", "Qwen/Kill", "--models-dir", root, "--context-len", "1024", "--num-sequences", "4",
                 "--kv-dtype", "f16"}),
            0)
      << err();
  EXPECT_NE(out().find("16.0 KiB"), std::string::npos) << out();
  ASSERT_EQ(run({"estimate", root + "/Qwen/Kill-GGUF/Kill-Q8_0.gguf", "--kv-quant", "aggressive"}), 0) << err();
  EXPECT_NE(out().find("aggressive 5-bit uniform + f32 scale"), std::string::npos) << out();
  ASSERT_EQ(run({"estimate", "Qwen/Kill-GGUF", "--remote", "--num-sequences", "2"}), 0) << err();
  EXPECT_NE(out().find("★ Q4_K_M"), std::string::npos) << out();
  EXPECT_NE(out().find("Q8_0"), std::string::npos);
  EXPECT_NE(out().find("KV: 256-token pool (16 blocks of 16), 128 ctx, 2 seq max, BF16"), std::string::npos) << out();
  EXPECT_EQ(run({"estimate", "Qwen/Missing-GGUF", "--models-dir", root}), 1);
  EXPECT_NE(err().find("repository not found"), std::string::npos) << err();
  EXPECT_EQ(run({"estimate", "Qwen/Kill-Q8_0", "--models-dir", root, "--kv-quant", "7bit"}), 1);
  EXPECT_NE(err().find("--kv-quant"), std::string::npos);
}

// `show` takes a path like `run` and `estimate`: a GGUF file (tensor types against gguf-py's list
// in goldens.json) and a safetensors directory (geometry against its config.json).
TEST_F(Cli, ShowPath) {
  const std::string archs = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs";
  ASSERT_EQ(run({"show", archs + "/qwen3/model-Q4_K.gguf"}), 0) << err();
  std::ifstream gin(archs + "/qwen3/goldens.json");
  const auto g = nlohmann::json::parse(gin);
  std::map<std::string, int> types;
  for (const auto& [name, type] : g["gguf"]["Q4_K"]["tensor_types"].items()) ++types[type.get<std::string>()];
  std::string expect_types;
  for (const auto& [t, n] : types) expect_types += (expect_types.empty() ? "" : ", ") + t + " ×" + std::to_string(n);
  for (const std::string& s : std::vector<std::string>{"Architecture  qwen3", "Quantization  Q4_K (" + expect_types + ")", "Files         model-Q4_K.gguf",
                              archs + "/qwen3"})
    EXPECT_NE(out().find(s), std::string::npos) << "missing '" << s << "' in\n" << out();

  std::ifstream cin_(archs + "/mistral/config.json");
  const auto c = nlohmann::json::parse(cin_);
  ASSERT_EQ(run({"show", archs + "/mistral"}), 0) << err();
  const std::string geo = std::to_string(c["num_hidden_layers"].get<int>()) + " layers, hidden " +
                          std::to_string(c["hidden_size"].get<int>()) + ", " + std::to_string(c["num_attention_heads"].get<int>()) +
                          " q heads, " + std::to_string(c["num_key_value_heads"].get<int>()) + " kv heads, head_dim " +
                          std::to_string(c["head_dim"].get<int>());
  for (const std::string& s : std::vector<std::string>{"Quantization  safetensors", geo, "window " + std::to_string(c["sliding_window"].get<int>()),
                              "Vocabulary    " + std::to_string(c["vocab_size"].get<int>()), "Files         model.safetensors"})
    EXPECT_NE(out().find(s), std::string::npos) << "missing '" << s << "' in\n" << out();

  // A multimodal wrapper (Ministral 3 with a Pixtral tower): text only, and `show` says so.
  const fs::path mm = fs::path(tmp / "ministral3");
  fs::create_directories(mm);
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(archs + "/ministral3/" + f, mm / f);
  ASSERT_EQ(run({"show", mm.string()}), 0) << err();
  EXPECT_NE(out().find("Inputs        text only; images not supported (the vision tower is not loaded)"),
            std::string::npos) << out();
  EXPECT_EQ(out().find("Inputs"), out().rfind("Inputs"));
  ASSERT_EQ(run({"show", archs + "/mistral"}), 0) << err();
  EXPECT_EQ(out().find("Inputs"), std::string::npos) << "a text-only model has no Inputs line\n" << out();

  // A folder of several models must name a file; a missing path is not mistaken for an id.
  EXPECT_EQ(run({"show", archs + "/qwen3"}), 1);
  EXPECT_NE(err().find("name a file"), std::string::npos) << err();
  EXPECT_EQ(run({"show", tmp / "nowhere/model.gguf"}), 1);
  EXPECT_FALSE(err().empty());
}

}  // namespace
}  // namespace oxyd::hub
