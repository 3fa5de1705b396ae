// The server's connection sockets have TCP_NODELAY. A response is written as its header, then its
// body; with Nagle's algorithm the body waited for the client's (delayed, up to 40 ms on Linux)
// ACK of the header, so every non-streamed answer took 40 ms more than its work (an embedding of
// 15 ms answered in 58 ms, a 38 ms chat completion in 76 ms). Oracle: getsockopt on the server's
// own socket of this connection, taken from the server process with pidfd_getfd(2) (the test is
// skipped, saying why, where the kernel or its policy refuses that).
#include "http_raw_util.h"
#include "http_test_util.h"

#include <netinet/tcp.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

namespace oxyd::server::test {
namespace {

// The server process's socket whose peer is `local` (our end of the connection), as an fd of ours.
int server_end(pid_t pid, const sockaddr_in& local, std::string& why) {
  const int pidfd = int(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    why = std::string("pidfd_open: ") + std::strerror(errno);
    return -1;
  }
  int found = -1;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    const int target = std::stoi(e.path().filename().string());
    const int fd = int(syscall(SYS_pidfd_getfd, pidfd, target, 0));
    if (fd < 0) {
      why = std::string("pidfd_getfd: ") + std::strerror(errno);
      continue;
    }
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 && peer.sin_family == AF_INET &&
        peer.sin_port == local.sin_port && peer.sin_addr.s_addr == local.sin_addr.s_addr) {
      found = fd;
      break;
    }
    close(fd);
  }
  close(pidfd);
  return found;
}

TEST(HttpNoDelay, ConnectionSocketsSendWithoutNagle) {
  const fs::path dir = make_empty_store();
  {
    ServerProcess server(dir, {"--port", "0", "--models-dir", (dir / "store").string(), "--no-pull"});
    ASSERT_GT(server.port(), 0) << server.stderr_text();
    const int fd = connect_local(server.port());
    ASSERT_GE(fd, 0);
    // One exchange over keep-alive, so that the server has accepted the connection.
    ASSERT_TRUE(send_all(fd, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    char buf[512];
    ASSERT_GT(recv(fd, buf, sizeof buf, 0), 0);
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len), 0);
    std::string why;
    const int theirs = server_end(server.pid(), local, why);
    if (theirs < 0 && !why.empty()) {
      close(fd);
      GTEST_SKIP() << "cannot read the server's socket: " << why;
    }
    ASSERT_GE(theirs, 0) << "no socket of the server process has our connection's address";
    int nodelay = 0;
    socklen_t n = sizeof nodelay;
    ASSERT_EQ(getsockopt(theirs, IPPROTO_TCP, TCP_NODELAY, &nodelay, &n), 0) << std::strerror(errno);
    EXPECT_NE(nodelay, 0) << "the server's end of the connection has Nagle's algorithm on";
    close(theirs);
    close(fd);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oxyd::server::test
