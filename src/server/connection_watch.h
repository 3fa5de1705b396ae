// ConnectionWatch: whether the client behind an httplib request is still connected, so a request
// whose client left can be aborted at once instead of running to its end or timeout. httplib 0.11
// hands handlers no connection handle (streams only learn of a close when a write fails), so the
// watch finds the connection's socket among this process's descriptors by the request's local and
// remote address and port (getsockname/getpeername: unique per live TCP connection), then polls
// it. Valid only while the handler (or its content provider) runs: httplib closes the socket after.
#pragma once

#include <string>

namespace httplib { struct Request; }

namespace oxyd::server {

class ConnectionWatch {
 public:
  /// Looks the socket up (a scan of /proc/self/fd). found() is false when it is not there (the
  /// peer already reset it, or no /proc): client_gone() then always answers false.
  explicit ConnectionWatch(const httplib::Request& req);
  ConnectionWatch(const std::string& local_addr, int local_port, const std::string& remote_addr, int remote_port);
  bool found() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  /// True once the client closed or reset the connection: poll() reports an error/hang-up, or the
  /// socket is readable and a peek reads end-of-stream. Unread bytes (a pipelined next request on
  /// a keep-alive connection) are not a close. A client that half-closes its sending side
  /// (shutdown(SHUT_WR)) with nothing more to send counts as gone, as nginx counts it. Never
  /// blocks or consumes data.
  bool client_gone() const;

 private:
  int fd_ = -1;
};

}  // namespace oxyd::server
