// A slowloris against the real `oxydllm start` with --max-connections 100 --header-timeout 3:
// 100 connections that send nothing and one that trickles a head a byte every 100 ms hold every
// slot; 150 more connections get a 503 (OpenAI error body, Retry-After) at once and are closed;
// the idle ones are closed silently and the trickling one gets 408 once 3 s have passed since it
// connected (a per-read timeout would keep it forever); afterwards /health is served again.
// Loopback only, at most 252 sockets, about 7 s.
#include <fcntl.h>

#include "http_raw_util.h"
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(HttpConnectionLimits, SlowlorisIsCappedAndTimedOut) {
  const fs::path dir = make_empty_store();
  {
    ServerProcess server(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--no-pull",
                               "--max-connections", "100", "--header-timeout", "3"});
    ASSERT_GT(server.port(), 0) << server.stderr_text();
    const int port = server.port();
    const auto start = Clock::now();
    std::vector<int> idle;
    for (int i = 0; i < 99; ++i) {
      const int fd = connect_local(port);
      ASSERT_GE(fd, 0) << "connection " << i;
      idle.push_back(fd);
    }
    const int slow = connect_local(port);
    ASSERT_GE(slow, 0);
    // The accept loop takes connections in order: once the 101st is answered 503, all 100 before
    // it hold a slot. Over the cap, connections are answered at once (not after the timeout).
    int refused = 0;
    for (int i = 0; i < 150; ++i) {
      const RawResponse r = raw_exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 1.5);
      if (r.status == 503) {
        ++refused;
        EXPECT_NE(r.head.find("Retry-After: 1"), std::string::npos) << r.head;
        const json j = json::parse(r.body, nullptr, false);
        ASSERT_TRUE(j.is_object()) << r.body;
        EXPECT_EQ(j["error"]["type"], "server_error");
        EXPECT_EQ(j["error"]["code"], "server_busy");
        EXPECT_NE(j["error"]["message"].get<std::string>().find("--max-connections"), std::string::npos);
      }
    }
    const double refusing_took = seconds_since(start);
    EXPECT_EQ(refused, 150);
    // Trickle a head a byte every 100 ms: never complete within the 3 s.
    const std::string partial = "GET /health HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
    bool closed = false;
    std::string got;
    for (size_t i = 0; i < partial.size() && seconds_since(start) < 8; ++i) {
      if (send(slow, &partial[i], 1, MSG_NOSIGNAL) != 1) break;
      got += read_until_close(slow, 0.1, &closed);
      if (closed) break;
    }
    if (!closed) got += read_until_close(slow, 3, &closed);
    const double slow_closed_at = seconds_since(start);
    close(slow);
    EXPECT_TRUE(closed);
    const RawResponse r = parse_raw(got, closed);
    EXPECT_EQ(r.status, 408) << got;
    EXPECT_NE(r.body.find("--header-timeout"), std::string::npos) << r.body;
    EXPECT_GE(slow_closed_at, 2.9);
    EXPECT_LT(slow_closed_at, 3.0 + refusing_took + 2.0) << "the head deadline counts from the connection's start";
    // The idle connections were closed by the server without an answer.
    for (int fd : idle) {
      bool c = false;
      const std::string text = read_until_close(fd, 3, &c);
      EXPECT_TRUE(c) << "an idle connection was not closed";
      EXPECT_EQ(text, "");
      close(fd);
    }
    // Slots are free again.
    const RawResponse ok = raw_exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(ok.status, 200) << ok.head << ok.body;
  }
  fs::remove_all(dir);
}

TEST(HttpConnectionLimits, BadFlagValues) {
  const fs::path dir = make_empty_store();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--max-connections", "0"}, {"--header-timeout", "0"}, {"--header-timeout", "-1"}}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--no-pull", "--models-dir", (dir / "store").string()});
    ServerProcess s(dir, a);
    EXPECT_EQ(s.wait_exit(60), 2) << args[0];
    EXPECT_NE(s.stderr_text().find(args[0]), std::string::npos) << s.stderr_text();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
