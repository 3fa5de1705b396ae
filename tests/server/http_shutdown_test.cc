// Graceful shutdown of the real binary on SIGTERM: a stream in flight when the signal arrives
// still finishes normally (every choice gets its finish_reason, then [DONE]) and the process exits
// 0; with --shutdown-timeout 0 the stream is ended at once with an error chunk and [DONE]. After
// the signal no new connection is accepted.
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

// 64 choices of up to 100 tokens each, run one at a time (--max-num-seqs 1): seconds of work.
json long_request() {
  return {{"model", kModelId}, {"prompt", "Once"}, {"n", 64}, {"max_tokens", 100}, {"ignore_eos", true},
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
  EXPECT_EQ(finishes, 64);
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

}  // namespace
}  // namespace oxyd::server::test
