// FramedServer (see http_connection.h). httplib's accept loop calls the virtual
// process_and_close_socket(sock) through the task queue for every accepted socket; that is the one
// place overridden. The request itself (request line, headers, Expect, body, routing, response) is
// still httplib's process_request, fed through ConnStream.
#include "server/http_connection.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "server/protocol.h"

namespace oxyd::server {

namespace {

using Clock = std::chrono::steady_clock;

// Set while the accepting thread itself runs a connection's task: the connection is over the cap.
thread_local bool t_over_cap = false;

int ms_until(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms <= 0 ? 0 : int(std::min<int64_t>(ms, 1 << 30));
}

int poll_one(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    return rc;
  }
}

const char* reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  const int rc = peer ? getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
                      : getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len);
  if (rc != 0) return;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(serv);
}

// httplib's Stream over a connection: first the bytes already in `buf` (from `off` on), then the
// socket, with httplib's read/write timeouts per call.
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(socket_t sock, std::string& buf, size_t& off, int read_ms, int write_ms)
      : sock_(sock), buf_(buf), off_(off), read_ms_(read_ms), write_ms_(write_ms) {}

  bool is_readable() const override { return off_ < buf_.size() || poll_one(sock_, POLLIN, read_ms_) > 0; }
  bool is_writable() const override {
    if (poll_one(sock_, POLLOUT, write_ms_) <= 0) return false;
    // Alive unless the peer closed: readable with nothing to read (a pipelined request is alive).
    if (poll_one(sock_, POLLIN, 0) <= 0) return true;
    char c;
    return ::recv(sock_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    if (off_ < buf_.size()) {
      const size_t n = std::min(size, buf_.size() - off_);
      std::memcpy(ptr, buf_.data() + off_, n);
      off_ += n;
      return ssize_t(n);
    }
    if (poll_one(sock_, POLLIN, read_ms_) <= 0) return -1;
    for (;;) {
      const ssize_t n = ::recv(sock_, ptr, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    for (;;) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  socket_t sock_;
  std::string& buf_;
  size_t& off_;
  int read_ms_, write_ms_;
};

bool send_all(socket_t sock, const std::string& data, int flags) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(sock, data.data() + done, data.size() - done, MSG_NOSIGNAL | flags);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// After an error response: stop sending, then read and drop what the client still sends (a body
// it sends before reading the answer) until it closes, 2 s pass without a byte or 10 s in all, so
// that closing with unread bytes does not reset the connection before the client has read the
// response (nginx's lingering close).
void linger_close(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  const auto until = Clock::now() + std::chrono::seconds(10);
  char drop[16384];
  while (poll_one(sock, POLLIN, std::min(2000, ms_until(until))) > 0) {
    const ssize_t n = ::recv(sock, drop, sizeof drop, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
  }
}

}  // namespace

void send_raw_error(socket_t sock, int status, const std::string& message, bool nonblocking) {
  const std::string type = status >= 500 ? "server_error" : "invalid_request_error";
  const std::string code = status == 413 ? "request_too_large" : status == 503 ? "server_busy" : "";
  const std::string body = protocol::error_body(protocol::ApiError(status, type, message, "", code));
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                    "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  out += "\r\n" + body;
  send_all(sock, out, nonblocking ? MSG_DONTWAIT : 0);
}

// Connections being served; the task queue checks it before starting a thread.
struct FramedServer::Counter {
  std::mutex mu;
  std::condition_variable cv;
  int64_t active = 0;
};

namespace {

// One detached thread per connection up to the cap (httplib's default is a fixed pool of 8, which
// lets 8 long streams starve every other client); beyond the cap the task runs on the accepting
// thread with t_over_cap set, which answers 503 without blocking. shutdown() waits for all.
class CappedThreadPerConnection : public httplib::TaskQueue {
 public:
  CappedThreadPerConnection(std::shared_ptr<FramedServer::Counter> st, int cap) : st_(std::move(st)), cap_(cap) {}
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lock(st_->mu);
      if (st_->active >= cap_) {
        t_over_cap = true;
      } else {
        st_->active++;
      }
    }
    if (t_over_cap) {
      fn();
      t_over_cap = false;
      return;
    }
    std::thread([st = st_, fn = std::move(fn)] {
      fn();
      std::lock_guard lock(st->mu);
      if (--st->active == 0) st->cv.notify_all();
    }).detach();
  }
  void shutdown() override {
    std::unique_lock lock(st_->mu);
    st_->cv.wait(lock, [&] { return st_->active == 0; });
  }

 private:
  std::shared_ptr<FramedServer::Counter> st_;
  int cap_;
};

}  // namespace

FramedServer::FramedServer(ConnectionOptions opts) : opts_(opts), counter_(std::make_shared<Counter>()) {
  const int cap = std::max(1, opts_.max_connections);
  new_task_queue = [st = counter_, cap] { return new CappedThreadPerConnection(st, cap); };
}

int64_t FramedServer::open_connections() const {
  std::lock_guard lock(counter_->mu);
  return counter_->active;
}

bool FramedServer::process_and_close_socket(socket_t sock) {
  if (t_over_cap) {
    send_raw_error(sock, 503,
                   "the server has " + std::to_string(opts_.max_connections) +
                       " connections open, its limit (--max-connections); retry later",
                   /*nonblocking=*/true);
    char drop[4096];
    while (::recv(sock, drop, sizeof drop, MSG_DONTWAIT) > 0) {
    }
    ::shutdown(sock, SHUT_WR);
  } else {
    serve_connection(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return true;
}

void FramedServer::serve_connection(socket_t sock) {
  const auto header_timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(0.001, opts_.header_timeout_s)));
  const int read_ms = int(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000);
  const int write_ms = int(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000);
  std::string buf;
  size_t off = 0;
  Clock::time_point head_deadline = Clock::now() + header_timeout;
  for (size_t served = 0; served < keep_alive_max_count_; ++served) {
    buf.erase(0, off);  // what httplib left: the start of a pipelined next request
    off = 0;
    if (served > 0) {  // kept alive: up to keep_alive_timeout_sec_ idle, then the head's own time
      const auto idle_until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
      while (buf.empty() && svr_sock_ != INVALID_SOCKET) {
        const int rc = poll_one(sock, POLLIN, std::min(100, ms_until(idle_until)));
        if (rc > 0) break;
        if (rc < 0 || Clock::now() >= idle_until) return;
      }
      head_deadline = Clock::now() + header_timeout;
    }
    http::HeadScan scan;
    http::scan_head(buf, opts_.framing, scan);
    while (scan.state == http::HeadScan::kIncomplete) {
      if (svr_sock_ == INVALID_SOCKET) return;  // stopping
      if (Clock::now() >= head_deadline) {
        if (!buf.empty()) {
          char secs[32];
          std::snprintf(secs, sizeof secs, "%g", opts_.header_timeout_s);
          send_raw_error(sock, 408, std::string("the request head did not arrive within ") + secs +
                                        " s (--header-timeout)");
          linger_close(sock);
        }
        return;
      }
      const int rc = poll_one(sock, POLLIN, std::min(100, ms_until(head_deadline)));
      if (rc < 0) return;
      if (rc == 0) continue;
      char chunk[16384];
      const ssize_t n = ::recv(sock, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0) return;  // closed before a whole head
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return;
      }
      buf.append(chunk, size_t(n));
      http::scan_head(buf, opts_.framing, scan);
    }
    if (scan.state == http::HeadScan::kTooLarge) {
      send_raw_error(sock, 431, "the request head is larger than " +
                                    std::to_string(opts_.framing.max_head_bytes >> 10) + " KB");
      linger_close(sock);
      return;
    }
    const std::string_view head(buf.data() + scan.skip, scan.end - scan.skip);
    if (const http::FramingError err = http::check_head(head, opts_.framing)) {
      send_raw_error(sock, err.status, err.message);
      linger_close(sock);
      return;
    }
    off = scan.skip;
    ConnStream strm(sock, buf, off, read_ms, write_ms);
    bool connection_closed = false;
    const bool last = served + 1 >= keep_alive_max_count_;
    if (!process_request(strm, last, connection_closed, nullptr) || connection_closed) return;
  }
}

}  // namespace oxyd::server
