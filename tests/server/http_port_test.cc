// A second `oxydllm start` on a port another server listens on must fail with "port in use" and a
// non-zero exit, not share the port (httplib's default SO_REUSEPORT let two servers split the
// connections; issue 21 §5.1). A port that was only recently closed still binds (SO_REUSEADDR).
#include "http_test_util.h"

namespace oxyd::server::test {
namespace {

fs::path empty_dir() {
  const fs::path d = fs::temp_directory_path() / ("oxyd_port_" + std::to_string(getpid()) + "_" +
                                                  std::to_string(std::rand()));
  fs::create_directories(d / "store");
  return d;
}

TEST(HttpPort, SecondServerOnAUsedPortFails) {
  const fs::path dir = empty_dir();
  const std::vector<std::string> common = {"--models-dir", (dir / "store").string(), "--no-pull"};
  std::vector<std::string> a1 = {"--port", "0"};
  a1.insert(a1.end(), common.begin(), common.end());
  ServerProcess first(dir, a1);
  ASSERT_GT(first.port(), 0) << first.stderr_text();

  std::vector<std::string> a2 = {"--port", std::to_string(first.port())};
  a2.insert(a2.end(), common.begin(), common.end());
  ServerProcess second(dir, a2);
  EXPECT_LT(second.port(), 0) << "a second server started on the same port " << first.port();
  EXPECT_NE(second.wait_exit(30), 0);
  EXPECT_NE(second.stderr_text().find("port in use"), std::string::npos) << second.stderr_text();

  // The first server still answers every request (none went to a second listener).
  auto c = first.client();
  for (int i = 0; i < 4; ++i) {
    auto r = c.Get("/health");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  fs::remove_all(dir);
}

TEST(HttpPort, RestartOnTheSamePortBinds) {
  const fs::path dir = empty_dir();
  int port = -1;
  {
    ServerProcess first(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--no-pull"});
    ASSERT_GT(first.port(), 0) << first.stderr_text();
    port = first.port();
    auto c = first.client();
    auto r = c.Get("/health");  // a connection, so the port has a TIME_WAIT socket after the kill
    ASSERT_TRUE(r);
  }
  ServerProcess again(dir, {"--port", std::to_string(port), "--models-dir", (dir / "store").string(), "--no-pull"});
  EXPECT_EQ(again.port(), port) << again.stderr_text();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
