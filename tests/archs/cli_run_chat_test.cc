// `oxydllm run` as a chat, the real binary: one-shot (prompt argument, --system, piped stdin) and
// an interactive session driven through a pseudo-terminal (forkpty): /system, two turns whose
// history is re-sent, /clear, a """ block, Ctrl-C at the prompt, Ctrl-C during an answer, /exit.
// Oracle: the transformers float64 greedy tokens of the tiny Llama with the real Llama 2 vocabulary
// (tests/data/archs/llama_tok/goldens.json). The test's chat template (kTemplate) renders
// BOS + system + the FIRST user message + each assistant answer (which starts with its own space,
// decoded in context), so every rendered prompt is
// a golden prompt, or a golden prompt followed by golden tokens (checked with the tokenizer first):
// the second turn must print golden tokens 10..19 only if the first answer was re-sent.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "archs_util.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::model::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kTemplate =
    "{{ bos_token }}{% set ns = namespace(users=0) %}{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}{% if ns.users == 0 %}{{ m['content'] }}{% endif %}{% set ns.users = ns.users + 1 %}"
    "{% else %}{{ m['content'] }}{% endif %}{% endfor %}";
constexpr int kN = 10;  // tokens per answer (--max-tokens)

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

// The binary under a pseudo-terminal; output is collected with '\r' removed.
class PtySession {
 public:
  PtySession(const std::vector<std::string>& args, const fs::path& home) {
    struct winsize ws {};
    ws.ws_row = 50;
    ws.ws_col = 1000;  // no wrapping of the long input lines
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      setenv("TERM", "dumb", 1);
      setenv("HOME", home.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(OXYD_CLI_BIN)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(OXYD_CLI_BIN, argv.data());
      _exit(127);
    }
  }
  ~PtySession() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  bool started() const { return pid_ > 0; }
  void send(const std::string& s) { ASSERT_EQ(write(fd_, s.data(), s.size()), ssize_t(s.size())); }
  /// Position of `needle` at or after `from`, reading up to `timeout_s`; npos on timeout or EOF.
  size_t expect(const std::string& needle, size_t from, double timeout_s = 20) {
    const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const size_t at = out.find(needle, from);
      if (at != std::string::npos) return at;
      if (Clock::now() > end || !pump(50)) return std::string::npos;
    }
  }
  /// Sends `line` and Enter; returns what was printed after the echoed line up to the next prompt.
  /// (Typed-ahead text is echoed twice: by the tty, then by libedit; the answer follows the last.)
  std::string turn(const std::string& line) {
    const size_t mark = out.size();
    send(line + "\n");
    const size_t end = expect("\n>>> ", mark);
    if (end == std::string::npos) return "<no prompt>";
    const size_t echo = out.rfind(line + "\n", end);
    if (echo == std::string::npos || echo < mark) return "<no echo>";
    const size_t start = echo + line.size() + 1;
    return start > end ? "" : out.substr(start, end - start);
  }
  int wait_exit(double timeout_s = 20) {
    const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < end) {
      pump(50);
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
    }
    return -1;
  }
  std::string out;

 private:
  bool pump(int ms) {
    struct pollfd p {fd_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return true;
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the child closed the terminal
    for (ssize_t i = 0; i < n; ++i)
      if (buf[i] != '\r') out.push_back(buf[i]);
    return true;
  }
  int fd_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
};

class CliRunChat : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp = fs::temp_directory_path() / ("oxyd_cli_chat_" + std::to_string(::getpid()));
    fs::remove_all(tmp);
    const fs::path src = arch_dir("llama_tok");
    const fs::path tok = fs::path(OXYD_TEST_DATA_DIR) / "tokenizers" / "llama2";
    // model_long: the same weights with a longer position range, for an answer long enough to stop.
    for (const char* dir : {"model", "model_long"}) {
      fs::create_directories(tmp / dir);
      for (const char* f : {"config.json", "generation_config.json", "model.safetensors"})
        fs::copy_file(src / f, tmp / dir / f);
      fs::copy_file(tok / "tokenizer.json", tmp / dir / "tokenizer.json");
    }
    nlohmann::json cfg = nlohmann::json::parse(slurp(src / "config.json"));
    cfg["max_position_embeddings"] = 8192;
    std::ofstream(tmp / "model_long" / "config.json") << cfg.dump();
    std::ofstream(tmp / "template.jinja") << kTemplate;
    g = load_golden("llama_tok");
    texts = g.j["prompt_text"].get<std::vector<std::string>>();
    tk = tokenizer::Tokenizer::from_hf_files((tmp / "model" / "tokenizer.json").string(), "");
    // The rendered prompts are exactly the golden ones (BOS as the template's "<s>" text).
    for (size_t i = 0; i < texts.size(); ++i) ASSERT_EQ(tk->encode("<s>" + texts[i], false, true), g.prompts[i]);
  }
  void TearDown() override { fs::remove_all(tmp); }

  std::string golden_text(size_t p, size_t from, size_t to) const {
    // Decoded in context (prompt + earlier answer tokens), as the engine detokenizes: a
    // SentencePiece first word keeps its leading space.
    std::vector<int32_t> ctx = g.prompts[p];
    ctx.insert(ctx.end(), g.greedy[p].begin(), g.greedy[p].begin() + from);
    std::vector<int32_t> all = ctx;
    all.insert(all.end(), g.greedy[p].begin() + from, g.greedy[p].begin() + to);
    const std::string pre = tk->decode(ctx, /*skip_special=*/true), full = tk->decode(all, true);
    return full.compare(0, pre.size(), pre) == 0 ? full.substr(pre.size()) : "<context changed the text>";
  }
  std::vector<std::string> base_args(const char* dir = "model") const {
    return {"run", (tmp / dir).string(), "--chat-template", (tmp / "template.jinja").string(), "--threads", "2",
            "--kv-dtype", "f32"};  // token for token against float64 goldens: the F32 cache
  }
  // One-shot through a shell: stdin from `stdin_text` (written to a file), stdout captured.
  int run_shell(std::vector<std::string> args, const std::string& stdin_text, std::string& out, std::string& err) {
    std::ofstream(tmp / "in") << stdin_text;
    std::string cmd = quote(OXYD_CLI_BIN);
    for (const auto& a : args) cmd.append(" ").append(quote(a));
    cmd += " <" + quote((tmp / "in").string()) + " >" + quote((tmp / "out").string()) + " 2>" +
           quote((tmp / "err").string());
    const int st = std::system(cmd.c_str());
    out = slurp(tmp / "out");
    err = slurp(tmp / "err");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  fs::path tmp;
  Golden g;
  std::vector<std::string> texts;
  std::unique_ptr<tokenizer::Tokenizer> tk;
};

TEST_F(CliRunChat, OneShotArgumentSystemAndPipedStdin) {
  std::string out, err;
  auto args = base_args();
  args.insert(args.end(), {texts[0], "--max-tokens", std::to_string(kN)});
  ASSERT_EQ(run_shell(args, "", out, err), 0) << err;
  EXPECT_EQ(out, golden_text(0, 0, kN) + "\n");

  // --system is rendered before the user message: system + user = golden prompt 2.
  args = base_args();
  args.insert(args.end(), {"lage by the sea, there lived an old fisherman who told stories.", "--system",
                           "Once upon a time, in a small vil", "--max-tokens", std::to_string(kN)});
  ASSERT_EQ(run_shell(args, "", out, err), 0) << err;
  EXPECT_EQ(out, golden_text(2, 0, kN) + "\n");

  // Piped stdin (not a terminal): all of it is the prompt, trailing newlines dropped; one answer.
  args = base_args();
  args.insert(args.end(), {"--max-tokens", std::to_string(kN)});
  ASSERT_EQ(run_shell(args, texts[1] + "\n", out, err), 0) << err;
  EXPECT_EQ(out, golden_text(1, 0, kN) + "\n");

  ASSERT_EQ(run_shell(args, "\n", out, err), 1);
  EXPECT_NE(err.find("prompt is empty"), std::string::npos) << err;
}

TEST_F(CliRunChat, InteractiveSessionThroughPty) {
  // Turn 2 re-renders prompt 1 + answer 1: that must tokenize to the golden sequence.
  const std::string answer1 = golden_text(1, 0, kN);
  std::vector<int32_t> want_ids = g.prompts[1];
  want_ids.insert(want_ids.end(), g.greedy[1].begin(), g.greedy[1].begin() + kN);
  ASSERT_EQ(tk->encode("<s>" + texts[1] + answer1, false, true), want_ids);

  auto args = base_args();
  args.insert(args.end(), {"--max-tokens", std::to_string(kN)});
  PtySession s(args, tmp);
  ASSERT_TRUE(s.started());
  ASSERT_NE(s.expect(">>> ", 0), std::string::npos) << s.out;

  // A """ block: golden prompt 1 has newlines and an empty line.
  const std::string block_end = "print(add(2, 3))  # prints five, of course\"\"\"";
  s.send("\"\"\"def add(a, b):\n    return a + b\n\n");
  EXPECT_EQ(s.turn(block_end), answer1 + "\n") << s.out;
  EXPECT_EQ(s.turn("go on"), golden_text(1, kN, 2 * kN) + "\n") << s.out;  // only right with the history

  EXPECT_NE(s.turn("/clear").find("Cleared"), std::string::npos) << s.out;
  EXPECT_NE(s.turn("/system Once upon a time, in a small vil").find("System prompt set."), std::string::npos) << s.out;
  EXPECT_EQ(s.turn("lage by the sea, there lived an old fisherman who told stories."), golden_text(2, 0, kN) + "\n")
      << s.out;
  EXPECT_NE(s.turn("/system").find("System prompt removed."), std::string::npos) << s.out;

  // Ctrl-C at the prompt drops the typed text; the next line is a fresh first message.
  EXPECT_NE(s.turn("/clear").find("Cleared"), std::string::npos) << s.out;
  size_t mark = s.out.size();
  s.send("junk that must not be sent");
  ASSERT_NE(s.expect("sent", mark), std::string::npos) << s.out;
  s.send("\x03");
  ASSERT_NE(s.expect("^C\n>>> ", mark), std::string::npos) << s.out;
  EXPECT_EQ(s.turn(texts[0]), golden_text(0, 0, kN) + "\n") << s.out;

  EXPECT_NE(s.turn("/help").find("/system TEXT"), std::string::npos) << s.out;
  EXPECT_NE(s.turn("/nope").find("Unknown command /nope"), std::string::npos) << s.out;
  s.send("/exit\n");
  EXPECT_EQ(s.wait_exit(), 0) << s.out;
}

TEST_F(CliRunChat, CtrlCStopsTheAnswerNotTheChat) {
  // Up to 8192 - 22 tokens to write; Ctrl-C once the first golden token is on screen.
  auto args = base_args("model_long");
  args.insert(args.end(), {"--max-context-len", "8192"});
  PtySession s(args, tmp);
  ASSERT_TRUE(s.started());
  ASSERT_NE(s.expect(">>> ", 0), std::string::npos) << s.out;
  const size_t mark = s.out.size();
  s.send(texts[0] + "\n");
  const size_t first = s.expect(golden_text(0, 0, 1), mark);
  ASSERT_NE(first, std::string::npos) << s.out;
  s.send("\x03");
  const size_t echo = s.out.rfind(texts[0] + "\n", first);  // the last echo of the line (see turn())
  ASSERT_NE(echo, std::string::npos) << s.out;
  const size_t start = echo + texts[0].size() + 1;
  const size_t end = s.expect("\n>>> ", start, 30);
  ASSERT_NE(end, std::string::npos) << s.out.substr(0, 2000);
  std::string answer = s.out.substr(start, end - start);
  for (size_t at; (at = answer.find("^C")) != std::string::npos;) answer.erase(at, 2);  // the tty's echo
  EXPECT_TRUE(answer.starts_with(golden_text(0, 0, 1))) << answer;
  const size_t num_tokens = tk->encode(answer, false, false).size();
  EXPECT_LT(num_tokens, 4000u) << "the answer was not stopped";
  std::printf("[ info     ] Ctrl-C stopped the answer after ~%zu tokens\n", num_tokens);

  // Still chatting: a command works, then Ctrl-D on an empty line leaves with status 0.
  EXPECT_NE(s.turn("/clear").find("Cleared"), std::string::npos) << s.out;
  // A ^D typed before libedit has switched the tty out of canonical mode is swallowed by the tty
  // (it ends a read that nobody is doing yet); a person types after the prompt, so wait a little.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  s.send("\x04");
  EXPECT_EQ(s.wait_exit(), 0) << s.out.substr(s.out.size() > 2000 ? s.out.size() - 2000 : 0);
}

}  // namespace
}  // namespace oxyd::model::test
