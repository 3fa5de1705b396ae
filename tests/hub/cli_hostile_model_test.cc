// Issue 28: the real `oxydllm show / run / estimate` on hostile model files (generated here by
// tests/loader/hostile_inputs.h) exits non-zero with a message naming the file and field, within
// 2 s and a data limit of 256 MB (RLIMIT_DATA in the child: heap and private writable mappings,
// what a hostile size would make us allocate; not the address space, which the CUDA libraries a
// CUDA build links take ~800 MB of before main), where these inputs used to crash the process
// (deep JSON) or be accepted (inconsistent counts).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "../loader/hostile_inputs.h"
#include "hub_test_util.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using namespace oxyd::hub::testing;
namespace hostile = loader::test::hostile;
using loader::GgufValue;
using loader::GgufWriter;

constexpr rlim_t kMemoryLimit = rlim_t{256} << 20;

struct Result {
  int exit_code = -1;  // -signal when killed
  double seconds = 0;
  std::string err;
};

// `oxydllm ARGS` with RLIMIT_DATA = 256 MB and a 20 s kill switch; stderr captured.
Result run_limited(const fs::path& dir, const std::vector<std::string>& args) {
  const std::string err_path = (dir / "stderr").string();
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    rlimit data{kMemoryLimit, kMemoryLimit};
    setrlimit(RLIMIT_DATA, &data);
    const int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0), dup2(out, 1), dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(OXYD_CLI_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    setenv("HOME", dir.c_str(), 1);
    execv(OXYD_CLI_BIN, argv.data());
    _exit(127);
  }
  Result r;
  int st = 0;
  const auto kill_at = t0 + std::chrono::seconds(20);
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > kill_at) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
  r.err = read_file(err_path);
  return r;
}

// Runs the CLI and checks: exit 1 (an error, not a signal), within 2 s, stderr naming each part.
void expect_clean_error(const fs::path& dir, const std::vector<std::string>& args,
                        const std::vector<std::string>& parts) {
  SCOPED_TRACE(args[0] + " " + args[1]);
  const Result r = run_limited(dir, args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(r.seconds, 2.0);
  for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << "stderr lacks '" << p << "': " << r.err;
  EXPECT_LT(r.err.size(), 2000u) << "error message of " << r.err.size() << " bytes";
}

TEST(CliHostile, GgufInconsistenciesFailShowRunEstimate) {
  TempDir tmp;
  const std::string p = tmp / "m.gguf";
  hostile::write_llama_gguf(p);
  const Result ok = run_limited(tmp.path, {"show", p});  // control: the same file without a defect
  EXPECT_EQ(ok.exit_code, 0) << ok.err;

  struct Case {
    std::function<void(GgufWriter&)> edit;
    std::vector<int64_t> extra;
    std::string field;
  };
  auto set = [](const char* key, GgufValue v) { return [key, v](GgufWriter& w) { w.metadata().set(key, v); }; };
  const std::vector<Case> cases = {
      {{}, {0, 8}, "zero dimension"},
      {set("llama.attention.head_count", GgufValue::scalar<uint32_t>(3)), {}, "llama.attention.head_count = 3"},
      {set("llama.attention.head_count_kv", GgufValue::scalar<uint32_t>(0)), {}, "llama.attention.head_count_kv = 0"},
      {set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c", "d", "e"})), {}, "token_embd.weight"},
      {set("tokenizer.ggml.tokens", GgufValue::string_array({"a", "b", "c"})), {}, "token_embd.weight"},
      {set("llama.context_length", GgufValue::scalar<uint32_t>(0)), {}, "llama.context_length = 0"},
      {set("llama.context_length", GgufValue::scalar<int32_t>(-5)), {}, "llama.context_length = -5"},
      {set("llama.context_length", GgufValue::scalar<uint64_t>(uint64_t{1} << 40)), {},
       "llama.context_length = 1099511627776"},
      {[](GgufWriter& w) {
         w.metadata().set("llama.expert_count", GgufValue::scalar<uint32_t>(4));
         w.metadata().set("llama.expert_used_count", GgufValue::scalar<uint32_t>(8));
       },
       {}, "llama.expert_used_count = 8"},
  };
  for (const Case& c : cases) {
    fs::remove(p);
    hostile::write_llama_gguf(p, c.edit, 4, c.extra);
    for (const char* verb : {"show", "estimate"}) expect_clean_error(tmp.path, {verb, p}, {"m.gguf", c.field});
    expect_clean_error(tmp.path, {"run", p, "hi", "--raw", "--max-tokens", "1"}, {"m.gguf", c.field});
  }
}

TEST(CliHostile, SafetensorsDirectories) {
  TempDir tmp;
  const fs::path d = tmp / "model";
  fs::create_directories(d);
  hostile::write_text(d / "config.json", hostile::llama_config());
  hostile::write_text(d / "model.safetensors", hostile::llama_safetensors("F32"));
  const Result ok = run_limited(tmp.path, {"show", d.string()});  // control
  EXPECT_EQ(ok.exit_code, 0) << ok.err;

  // I32 weights.
  hostile::write_text(d / "model.safetensors", hostile::llama_safetensors("I32"));
  expect_clean_error(tmp.path, {"show", d.string()}, {"model.embed_tokens.weight", "I32"});
  expect_clean_error(tmp.path, {"run", d.string(), "hi", "--raw"}, {"model.embed_tokens.weight", "I32"});
  hostile::write_text(d / "model.safetensors", hostile::llama_safetensors("F32"));

  // config.json nested 25,000 deep.
  hostile::write_text(d / "config.json", hostile::llama_config(25'000));
  expect_clean_error(tmp.path, {"show", d.string()}, {"config.json", "nested deeper than 64"});
  expect_clean_error(tmp.path, {"run", d.string(), "hi", "--raw"}, {"config.json", "nested deeper than 64"});
  hostile::write_text(d / "config.json", hostile::llama_config());

  // A safetensors shape nested 200,000 deep: a short message, not the shape.
  const std::string deep = R"({"w":{"dtype":"F32","shape":)" + hostile::nested_array(200'000) +
                           R"(,"data_offsets":[0,4]}})";
  hostile::write_text(d / "model.safetensors", hostile::safetensors_bytes(deep, 4));
  expect_clean_error(tmp.path, {"show", d.string()}, {"model.safetensors", "nested deeper"});
  expect_clean_error(tmp.path, {"run", d.string(), "hi", "--raw"}, {"model.safetensors", "nested deeper"});
  hostile::write_text(d / "model.safetensors", hostile::llama_safetensors("F32"));

  // tokenizer.json Sequences nested 30,000 deep: `run` loads the tokenizer after the weights.
  for (const char* component : {"normalizer", "pre_tokenizer", "decoder"}) {
    hostile::write_text(d / "tokenizer.json", hostile::nested_sequence_tokenizer(component, 30'000));
    expect_clean_error(tmp.path, {"run", d.string(), "hi", "--raw"}, {"tokenizer.json", "nested deeper than 64"});
  }
}

}  // namespace
}  // namespace oxyd::hub
