// Helpers for the HTTP tests: a model store holding the tiny Llama (tests/data/archs/llama_tok,
// transformers float64 greedy goldens) with the real Llama 2 tokenizer from tests/data/tokenizers, the real
// `oxydllm start` binary run as a child process (stderr to a file, ready line awaited), and SSE
// parsing of a raw streamed body.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace oxyd::server::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const char* kModelId = "test/tiny-llama";

inline std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// A fresh temp dir with store/test/tiny-llama (config, F16 safetensors, Llama 2 tokenizer).
inline fs::path make_store() {
  const fs::path tmp = fs::temp_directory_path() / ("oxyd_http_" + std::to_string(getpid()) + "_" +
                                                    std::to_string(std::rand()));
  const fs::path model = tmp / "store" / "test" / "tiny-llama";
  fs::create_directories(model);
  const fs::path src = fs::path(OXYD_SOURCE_DIR) / "tests" / "data" / "archs" / "llama_tok";
  for (const char* f : {"config.json", "generation_config.json", "model.safetensors"}) fs::copy_file(src / f, model / f);
  const fs::path tok = fs::path(OXYD_TEST_DATA_DIR) / "tokenizers" / "llama2";
  fs::copy_file(tok / "tokenizer.json", model / "tokenizer.json");
  fs::copy_file(tok / "tokenizer_config.json", model / "tokenizer_config.json");
  return tmp;
}

/// A ChatML-style template (no special tokens needed) for the tests' chat requests.
inline fs::path write_template(const fs::path& dir) {
  const fs::path p = dir / "chatml.jinja";
  std::ofstream(p) << "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                      "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  return p;
}

/// `oxydllm start ARGS` as a child; waits for the ready line and parses the port.
class ServerProcess {
 public:
  ServerProcess(const fs::path& dir, std::vector<std::string> args, std::vector<std::string> env = {}) {
    err_path_ = dir / ("server_" + std::to_string(counter()++) + ".err");
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(err_path_.c_str(), "w", stderr);
      (void)f;
      FILE* o = std::freopen("/dev/null", "w", stdout);
      (void)o;
      for (const auto& e : env) putenv(const_cast<char*>(strdup(e.c_str())));
      std::vector<std::string> all = {OXYD_CLI_BIN, "start"};
      all.insert(all.end(), args.begin(), args.end());
      // The tests compare with float64 goldens token for token: the F32 cache unless they choose.
      const bool chosen = std::find(args.begin(), args.end(), "--kv-dtype") != args.end() ||
                          std::find(args.begin(), args.end(), "--kv-quant") != args.end() ||
                          std::any_of(env.begin(), env.end(), [](const std::string& e) { return e.rfind("OXYDLLM_KV_", 0) == 0; });
      if (!chosen) all.insert(all.end(), {"--kv-dtype", "f32"});
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(OXYD_CLI_BIN, argv.data());
      _exit(127);
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const std::regex ready("oxydllm: listening on http://([^\\s]+):([0-9]+)");
    while (std::chrono::steady_clock::now() < until) {
      std::smatch m;
      const std::string err = stderr_text();
      if (std::regex_search(err, m, ready)) {
        port_ = std::stoi(m[2]);
        return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_status_ = status;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~ServerProcess() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string stderr_text() const { return read_file(err_path_); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    return c;
  }
  /// Waits for the process to exit; returns its exit code (-1 on a timeout or a signal).
  int wait_exit(int seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!exited_ && std::chrono::steady_clock::now() < until) {
      if (waitpid(pid_, &exit_status_, WNOHANG) == pid_) exited_ = true;
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!exited_) return -1;
    return WIFEXITED(exit_status_) ? WEXITSTATUS(exit_status_) : -1;
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  fs::path err_path_;
  pid_t pid_ = -1;
  int port_ = -1;
  bool exited_ = false;
  int exit_status_ = 0;
};

/// The `data:` payloads of an SSE body, in order; fails the test on a malformed event.
inline std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated SSE event at " << pos << ": " << body.substr(pos);
    if (end == std::string::npos) break;
    const std::string ev = body.substr(pos, end - pos);
    EXPECT_EQ(ev.rfind("data: ", 0), 0u) << "SSE event without 'data: ': " << ev;
    out.push_back(ev.substr(6));
    pos = end + 2;
  }
  return out;
}

/// POST with a streamed body read as it arrives; `on_data` sees the text so far.
inline std::string post_stream(httplib::Client& c, const std::string& path, const json& body,
                               const std::function<void(const std::string&)>& on_data = {}, int* status = nullptr) {
  std::string got;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.set_header("Content-Type", "application/json");
  req.body = body.dump();
  req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
    got.append(d, n);
    if (on_data) on_data(got);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  c.send(req, res, err);
  if (status) *status = res.status;
  return got;
}

/// The first line of a Prometheus text that starts with `prefix`, "" when none does.
inline std::string metric_line(const std::string& metrics, const std::string& prefix) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

/// The value of one exact series (`name{labels}`) in a Prometheus text, 0 when absent.
inline double metric_value(const std::string& metrics, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const size_t at = ("\n" + metrics).find(key);
  if (at == std::string::npos) return 0;
  return std::stod(metrics.substr(at + key.size() - 1));
}

}  // namespace oxyd::server::test
