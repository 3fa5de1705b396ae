// 64 clients connecting at once while the server cannot accept (it is stopped with SIGSTOP, as a
// server whose cores are busy with the engine may be for a moment) are all answered once it runs
// again: the listening socket's backlog holds them. With cpp-httplib's default backlog of 5 the
// handshakes beyond the queue were dropped and such clients got their connection reset (httpx
// ReadError in bench/serving_bench.py at 64 clients). Oracle: the HTTP status line of each answer.
#include "http_test_util.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

namespace oxyd::server::test {
namespace {

TEST(HttpBacklog, SixtyFourSimultaneousConnectionsAreAllAnswered) {
  const fs::path dir = make_store();
  {
    ServerProcess server(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--model", kModelId,
                               "--chat-template", write_template(dir).string(), "--no-pull"});
    ASSERT_GT(server.port(), 0) << server.stderr_text();
    const std::string body = json{{"model", kModelId}, {"prompt", "Hi"}, {"max_tokens", 2}}.dump();
    const std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Content-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    constexpr int kClients = 64;
    std::vector<int> fds;
    ASSERT_EQ(kill(server.pid(), SIGSTOP), 0);
    // Non-blocking connects: a handshake the server's queue drops must fail the test, not hang it.
    for (int i = 0; i < kClients; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(uint16_t(server.port()));
      inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
      const int rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
      EXPECT_TRUE(rc == 0 || errno == EINPROGRESS) << "client " << i << ": " << std::strerror(errno);
      fds.push_back(fd);
    }
    // Each request is sent once its connection is up (the kernel completes queued handshakes
    // while the server is stopped); at most 10 s for all.
    std::vector<bool> sent(kClients, false);
    for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         std::count(sent.begin(), sent.end(), true) < kClients && std::chrono::steady_clock::now() < until;) {
      for (int i = 0; i < kClients; ++i) {
        pollfd pf{fds[size_t(i)], POLLOUT, 0};
        if (sent[size_t(i)] || poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLOUT)) continue;
        sent[size_t(i)] = send(fds[size_t(i)], req.data(), req.size(), MSG_NOSIGNAL) == ssize_t(req.size());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(std::count(sent.begin(), sent.end(), true), kClients) << "requests sent";
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the SYN-ACK retry
    ASSERT_EQ(kill(server.pid(), SIGCONT), 0);
    // Read every answer to its end (Connection: close), all sockets at once, for at most 60 s.
    std::vector<std::string> got(kClients);
    std::vector<pollfd> live;
    for (int fd : fds) live.push_back({fd, POLLIN, 0});
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!live.empty() && std::chrono::steady_clock::now() < until) {
      if (poll(live.data(), live.size(), 100) <= 0) continue;
      for (size_t j = 0; j < live.size();) {
        char buf[4096];
        const ssize_t n = live[j].revents ? recv(live[j].fd, buf, sizeof buf, MSG_DONTWAIT) : -1;
        if (n > 0) {
          const size_t i = size_t(std::find(fds.begin(), fds.end(), live[j].fd) - fds.begin());
          got[i].append(buf, size_t(n));
        }
        if (n == 0 || (n < 0 && live[j].revents && errno != EAGAIN)) {  // EOF or reset: done
          live.erase(live.begin() + std::ptrdiff_t(j));
          continue;
        }
        ++j;
      }
    }
    int answered = 0;
    for (int i = 0; i < kClients; ++i) {
      close(fds[size_t(i)]);
      const std::string& g = got[size_t(i)];
      const bool ok = g.rfind("HTTP/1.1 200", 0) == 0 && g.find("\"text_completion\"") != std::string::npos;
      EXPECT_TRUE(ok) << "client " << i << " got " << g.size() << " bytes: " << g.substr(0, 200);
      answered += ok;
    }
    std::printf("[ measured ] %d of %d simultaneous clients answered\n", answered, kClients);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
