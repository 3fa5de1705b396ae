// HttpServer: the transport. cpp-httplib with our connection loop (http_connection.h: a thread
// per connection up to max_connections, a request-head timeout, strict framing checked before
// httplib parses a head); routes to the handlers in serving_*.cc; API-key auth (Bearer or
// X-API-Key, constant-time compare; /health open); optional CORS; a body limit (413);
// OpenAI-shaped errors for everything (unknown route 404, wrong method 405, exceptions 500);
// graceful shutdown: stop accepting, let in-flight requests finish for up to shutdown_timeout_s,
// then end them (streams get an error chunk + [DONE]).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/metrics.h"
#include "server/model_manager.h"

namespace httplib { class Server; }

namespace oxyd::server {

struct ServingContext;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 11313;                       // 0 = any free port
  std::string api_key;                    // "" = no auth
  bool cors = false;
  std::vector<std::string> cors_origins;  // allowed origins; empty with cors = "*"
  int64_t max_body_bytes = int64_t(8) << 20;
  double request_timeout_s = 300;         // 0 = off
  double shutdown_timeout_s = 30;
  bool log_debug = false;                 // --log-level debug
  int max_connections = 512;              // served at once; more get 503 and are closed
  double header_timeout_s = 10;           // to receive a whole request head (else 408, closed)
  /// Chat defaults a request's chat_template_kwargs / enable_thinking / reasoning_effort override:
  /// "enable_thinking" (bool), "reasoning_effort" ("low" | "medium" | "high"); empty = the template's.
  nlohmann::ordered_json chat_template_defaults = nlohmann::ordered_json::object();
};

class HttpServer {
 public:
  HttpServer(ServerOptions opts, ModelManager& models, Metrics& metrics);
  ~HttpServer();

  /// Binds host:port. Returns the bound port. Throws Error(IO) naming the address.
  int bind();
  /// Prints the ready line `oxydllm: listening on http://HOST:PORT` to stderr and serves until a
  /// shutdown() has drained. Call after bind().
  void serve();
  /// Begins the graceful shutdown (thread-safe). A second call ends in-flight requests at once.
  void shutdown();

 private:
  void install_routes();
  bool authorized(const std::string& authorization, const std::string& x_api_key) const;

  ServerOptions opts_;
  Metrics& metrics_;
  std::unique_ptr<ServingContext> ctx_;
  std::unique_ptr<httplib::Server> svr_;
  int port_ = -1;
  int listen_fd_ = -1;  // the listening socket, to raise httplib's listen backlog of 5
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_started_ = false, serve_done_ = false;
  std::thread drain_;
};

}  // namespace oxyd::server
