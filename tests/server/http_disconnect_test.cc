// Client disconnects and stream outcomes in /metrics, against the real `oxydllm start` binary:
// a NON-streaming completion or chat whose client closes its socket mid-generation is aborted at
// once (KV blocks back to 0, counted as status 499) and the server still answers; a keep-alive
// connection whose next request arrives while the first generates is not taken for a close (both
// answers arrive whole); a stream that fails after its 200 header (error chunk) is counted with
// the error's status, a stream whose client leaves as 499. Oracle: the /metrics gauges and
// counters and the HTTP bytes.
#include "http_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace oxyd::server::test {
namespace {

using Clock = std::chrono::steady_clock;

class HttpClientGone : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_store();
    server_ = new ServerProcess(dir_, {"--port", "0", "--models-dir", (dir_ / "store").string(), "--model", kModelId,
                                       "--chat-template", write_template(dir_).string(), "--no-pull"});
    ASSERT_GT(server_->port(), 0) << server_->stderr_text();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(dir_);
  }

  static std::string metrics() {
    auto c = server_->client();
    auto r = c.Get("/metrics");
    EXPECT_TRUE(r && r->status == 200);
    return r ? r->body : "";
  }
  static std::string kv_used() { return "oxydllm_kv_blocks_used{model=\"" + std::string(kModelId) + "\"}"; }
  static std::string requests(const std::string& endpoint, int status) {
    return "oxydllm_requests_total{model=\"" + std::string(kModelId) + "\",endpoint=\"" + endpoint + "\",status=\"" +
           std::to_string(status) + "\"}";
  }

  /// A connected TCP socket to the server.
  static int connect_raw() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  static std::string post_bytes(const std::string& path, const json& body) {
    const std::string b = body.dump();
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(b.size()) + "\r\n\r\n" + b;
  }
  static void send_all(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      ASSERT_GT(n, 0);
      off += size_t(n);
    }
  }
  /// Polls /metrics until `pred` holds or `seconds` pass; returns whether it held.
  static bool wait_metrics(double seconds, const std::function<bool(const std::string&)>& pred) {
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
      if (pred(metrics())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  // Far more work than the test waits for: 128 sequences to the end of the 128-token context.
  static json long_request() {
    return {{"model", kModelId}, {"prompt", "Once upon a time"}, {"n", 128}, {"max_tokens", 120},
            {"ignore_eos", true}, {"temperature", 1.0}};
  }
  /// Sends `body` to `path` on a raw socket, closes it once the request holds KV blocks, and
  /// checks that the blocks return to 0 and the request is counted as 499, not 200, promptly.
  static void close_mid_generation(const std::string& path, const json& body) {
    const std::string m0 = metrics();
    const double aborted_before = metric_value(m0, requests(path, 499));
    const int fd = connect_raw();
    send_all(fd, post_bytes(path, body));
    ASSERT_TRUE(wait_metrics(30, [](const std::string& m) { return metric_value(m, kv_used()) > 0; }))
        << "the request never started";
    close(fd);
    const auto t0 = Clock::now();
    const bool freed = wait_metrics(30, [&](const std::string& m) {
      return metric_value(m, kv_used()) == 0 && metric_value(m, requests(path, 499)) == aborted_before + 1;
    });
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    ASSERT_TRUE(freed) << metrics();
    std::printf("[ measured ] %s: close → blocks freed and counted as 499: %.1f ms\n", path.c_str(), ms);
    // ~25 ms poll interval + one engine step; the bound leaves room for a loaded 2-core machine.
    EXPECT_LT(ms, 1500);
    EXPECT_EQ(metric_value(metrics(), requests(path, 200)), metric_value(m0, requests(path, 200)))
        << "the aborted request was counted as a success";
    auto c = server_->client();
    auto r = c.Post("/v1/completions", json{{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 3}}.dump(),
                    "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  static inline fs::path dir_;
  static inline ServerProcess* server_ = nullptr;
};

TEST_F(HttpClientGone, ClosedNonStreamingClientIsAbortedPromptly) {
  close_mid_generation("/v1/completions", long_request());
}

TEST_F(HttpClientGone, ClosedNonStreamingChatClientIsAbortedPromptly) {
  close_mid_generation("/v1/chat/completions",
                       {{"model", kModelId}, {"messages", {{{"role", "user"}, {"content", "Once upon a time"}}}},
                        {"n", 128}, {"max_tokens", 100}, {"ignore_eos", true}, {"temperature", 1.0}});
}

TEST_F(HttpClientGone, PipelinedKeepAliveRequestIsNotAClose) {
  // The next request of a keep-alive connection sent while the first one still generates: its
  // bytes wait unread on the socket and must not read as a disconnect. (Sent once the first is
  // running, so httplib, which reads each request with a fresh buffer, has not swallowed them.)
  const json first = {{"model", kModelId}, {"prompt", "Once upon a time"}, {"n", 32}, {"max_tokens", 100},
                      {"ignore_eos", true}};
  const int fd = connect_raw();
  send_all(fd, post_bytes("/v1/completions", first));
  ASSERT_TRUE(wait_metrics(30, [](const std::string& m) { return metric_value(m, kv_used()) > 0; }))
      << "the request never started";
  send_all(fd, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string got;
  char buf[65536];
  const auto until = Clock::now() + std::chrono::seconds(60);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  while (Clock::now() < until && got.find("\"status\":\"ok\"") == std::string::npos) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n > 0) got.append(buf, size_t(n));
  }
  close(fd);
  const size_t second = got.find("HTTP/1.1", 1);
  ASSERT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got.substr(0, 300);
  ASSERT_NE(second, std::string::npos) << got.substr(0, 300);
  EXPECT_EQ(got.compare(second, 12, "HTTP/1.1 200"), 0) << got.substr(second, 100);
  const std::string head = got.substr(0, second);
  const std::string body = head.substr(head.find("\r\n\r\n") + 4);
  const json j = json::parse(body);
  ASSERT_EQ(j["choices"].size(), 32u) << body.substr(0, 300);
  for (const auto& ch : j["choices"]) EXPECT_EQ(ch["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 32 * 100);
}

TEST_F(HttpClientGone, StreamOutcomesAreCounted) {
  const std::string m0 = metrics();
  // A stream that times out after its 200 header: an error chunk (408), then [DONE].
  json s = long_request();
  s["stream"] = true;
  s["timeout"] = 0.3;
  auto c = server_->client();
  int status = 0;
  const auto ev = sse_events(post_stream(c, "/v1/completions", s, {}, &status));
  EXPECT_EQ(status, 200);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(json::parse(ev[ev.size() - 2])["error"]["code"], "request_timeout");
  // A stream whose client leaves mid-way (once the aborted 128 of the first have left the
  // engine's queue, or this one could be refused with 429).
  ASSERT_TRUE(wait_metrics(30, [](const std::string& m) {
    return metric_value(m, kv_used()) == 0 &&
           metric_value(m, "oxydllm_queue_depth{model=\"" + std::string(kModelId) + "\"}") == 0;
  }));
  const int fd = connect_raw();
  json s2 = long_request();
  s2["stream"] = true;
  send_all(fd, post_bytes("/v1/completions", s2));
  char buf[4096];
  const ssize_t n = recv(fd, buf, sizeof buf, 0);  // the header (and maybe first chunks)
  ASSERT_GT(n, 0);
  ASSERT_EQ(std::string(buf, size_t(n)).rfind("HTTP/1.1 200", 0), 0u) << std::string(buf, size_t(n));
  close(fd);
  ASSERT_TRUE(wait_metrics(30, [&](const std::string& m) {
    return metric_value(m, requests("/v1/completions", 499)) ==
               metric_value(m0, requests("/v1/completions", 499)) + 1 &&
           metric_value(m, kv_used()) == 0;
  })) << metrics();
  const std::string m1 = metrics();
  const auto count = [](const std::string& m, int status) { return metric_value(m, requests("/v1/completions", status)); };
  EXPECT_EQ(count(m1, 408), count(m0, 408) + 1) << m1;
  EXPECT_EQ(count(m1, 200), count(m0, 200)) << m1;
  // A stream that ends well is still a 200.
  json ok = {{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 3}, {"stream", true}};
  const auto ev2 = sse_events(post_stream(c, "/v1/completions", ok));
  ASSERT_FALSE(ev2.empty());
  EXPECT_EQ(ev2.back(), "[DONE]");
  EXPECT_EQ(metric_value(metrics(), requests("/v1/completions", 200)),
            metric_value(m0, requests("/v1/completions", 200)) + 1);
}

}  // namespace
}  // namespace oxyd::server::test
