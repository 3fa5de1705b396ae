// Raw-socket HTTP for the framing and connection-limit tests: connect to 127.0.0.1:PORT, send
// bytes as given (no client library that would fix them up), read the answer until the server
// closes or a time limit passes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace oxyd::server::test {

/// A fresh temp dir holding an empty model store (dir/store): these tests need no model.
inline std::filesystem::path make_empty_store() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("oxyd_raw_" + std::to_string(getpid()) + "_" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir / "store");
  return dir;
}

/// A connected blocking socket, or -1.
inline int connect_local(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

/// Reads until EOF, a reset, or `seconds`; `closed` says whether the server closed.
inline std::string read_until_close(int fd, double seconds, bool* closed = nullptr) {
  std::string got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
  if (closed) *closed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return got;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) return got;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      return got;
    }
    got.append(buf, size_t(n));
  }
}

struct RawResponse {
  int status = 0;       // 0: no status line
  std::string head;     // status line + headers
  std::string body;
  bool closed = false;  // the server closed the connection
};

inline RawResponse parse_raw(const std::string& got, bool closed) {
  RawResponse r;
  r.closed = closed;
  const size_t end = got.find("\r\n\r\n");
  if (got.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos || got.size() < 12) return r;
  r.status = std::atoi(got.substr(9, 3).c_str());
  r.head = got.substr(0, end);
  r.body = got.substr(end + 4);
  return r;
}

/// One exchange on a fresh connection: send `request`, read until close (at most `seconds`).
inline RawResponse raw_exchange(int port, const std::string& request, double seconds = 10) {
  const int fd = connect_local(port);
  if (fd < 0) return {};
  send_all(fd, request);
  bool closed = false;
  const std::string got = read_until_close(fd, seconds, &closed);
  close(fd);
  return parse_raw(got, closed);
}

}  // namespace oxyd::server::test
