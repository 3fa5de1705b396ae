// FramedServer: cpp-httplib's Server with our own per-connection loop. httplib 0.11 runs one
// thread per connection with no cap, waits up to 5 s per read with no limit on a whole request
// head (a client sending a byte every 4 s holds a thread forever), and parses heads leniently
// (see http_framing.h). Here:
//   - at most max_connections connections are served at once; a connection beyond that gets a
//     503 (OpenAI error body, Retry-After: 1) from the accepting thread and is closed, no thread
//     started;
//   - a request head must arrive complete within header_timeout_s of the connection's start (or,
//     on a kept-alive connection, of its first byte); otherwise 408 (if any byte came) and close;
//   - the head is read into our buffer and checked (http::check_head) before httplib sees it;
//     a refused head gets its 4xx/5xx and the connection is closed, no body byte read as a body;
//   - the checked bytes (and whatever followed them) are then handed to httplib's own request
//     processing through a Stream that reads our buffer first, then the socket.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/http_framing.h"

namespace oxyd::server {

struct ConnectionOptions {
  int max_connections = 512;      // served at once; more: 503 and closed
  double header_timeout_s = 10;   // to receive a whole request head
  http::FramingLimits framing;
};

class FramedServer : public httplib::Server {
 public:
  explicit FramedServer(ConnectionOptions opts);
  /// Connections being served now (not counting the ones refused over the cap).
  int64_t open_connections() const;
  struct Counter;  // the count of connections served, shared with the task queue

 private:
  bool process_and_close_socket(socket_t sock) override;
  void serve_connection(socket_t sock);

  ConnectionOptions opts_;
  std::shared_ptr<Counter> counter_;
};

/// Writes a whole error response (OpenAI body, Connection: close) to a socket; best effort.
void send_raw_error(socket_t sock, int status, const std::string& message, bool nonblocking = false);

}  // namespace oxyd::server
