// Graceful shutdown of the real binary on SIGTERM: a stream in flight when the signal arrives
// still finishes normally (every choice gets its finish_reason, then [DONE]) and the process exits
// 0; with --shutdown-timeout 0 the stream is ended at once with an error chunk and [DONE]. After
// the signal no new connection is accepted.
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

// 16 choices of up to 100 tokens each, run one at a time (--max-num-seqs 1): seconds of work.
json long_request() {
  return {{"model", kModelId}, {"prompt", "Once"}, {"n", 16}, {"max_tokens", 100}, {"ignore_eos", true},
          {"stream", true}};
}

TEST(HttpShutdown, InFlightStreamFinishesThenExitZero) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                        "--max-num-seqs", "1", "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  bool signalled = false;
  const auto ev = sse_events(post_stream(c, "/v1/completions", long_request(), [&](const std::string&) {
    if (!signalled) kill(s.pid(), SIGTERM);  // after the first bytes of the stream
    signalled = true;
  }));
  ASSERT_TRUE(signalled);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev.back(), "[DONE]");
  int finishes = 0;
  for (size_t i = 0; i + 1 < ev.size(); ++i) {
    const json e = json::parse(ev[i]);
    EXPECT_FALSE(e.contains("error")) << ev[i];
    if (e.contains("choices") && !e["choices"].empty() && !e["choices"][0]["finish_reason"].is_null()) finishes++;
  }
  EXPECT_EQ(finishes, 16);
  EXPECT_EQ(s.wait_exit(60), 0) << s.stderr_text();
  EXPECT_NE(s.stderr_text().find("shutting down"), std::string::npos);
  httplib::Client after("127.0.0.1", s.port());
  EXPECT_FALSE(after.Get("/health"));
  fs::remove_all(dir);
}

TEST(HttpShutdown, ExpiredDrainEndsStreamsWithAnErrorChunk) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                        "--max-num-seqs", "1", "--shutdown-timeout", "0", "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  auto c = s.client();
  bool signalled = false;
  const auto ev = sse_events(post_stream(c, "/v1/completions", long_request(), [&](const std::string&) {
    if (!signalled) kill(s.pid(), SIGTERM);
    signalled = true;
  }));
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev.back(), "[DONE]");
  const json err = json::parse(ev[ev.size() - 2]);
  ASSERT_TRUE(err.contains("error")) << ev[ev.size() - 2];
  EXPECT_EQ(err["error"]["code"], "server_shutting_down");
  EXPECT_EQ(s.wait_exit(60), 0) << s.stderr_text();
  fs::remove_all(dir);
}

// A client that goes away mid-stream: the server's next write fails, the generations are aborted
// (the engine drains long before the ~5 s the request needs), and the server keeps serving.
TEST(HttpDisconnect, ClosedStreamAbortsItsGenerations) {
  const fs::path dir = make_store();
  ServerProcess s(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                        "--max-num-seqs", "1", "--no-pull"});
  ASSERT_GT(s.port(), 0) << s.stderr_text();
  {
    auto c = s.client();
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.set_header("Content-Type", "application/json");
    req.body = long_request().dump();
    req.content_receiver = [](const char*, size_t, uint64_t, uint64_t) { return false; };  // hang up
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    c.send(req, res, err);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto c = s.client();
  const std::regex busy("oxydllm_(running_requests|queue_depth)\\{model=\"test/tiny-llama\"\\} ([0-9]+)");
  bool idle = false;
  while (!idle && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    auto r = c.Get("/metrics");
    ASSERT_TRUE(r);
    idle = true;
    for (std::sregex_iterator it(r->body.begin(), r->body.end(), busy), end; it != end; ++it)
      if ((*it)[2] != "0") idle = false;
    if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(idle);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  auto r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
