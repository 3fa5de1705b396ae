// HttpServer (see http_server.h). Routing: real routes first, then a catch-all per method that
// answers 405 (with Allow) when the path exists under another method, else 404; CORS preflight
// when --cors is on. Handlers run inside a wrapper that turns any exception into an OpenAI error
// body and counts the request in the metrics.
#include "server/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>

#include "core/error.h"
#include "server/http_connection.h"
#include "server/serving.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

namespace {

using HandlerFn = void (*)(ServingContext&, const httplib::Request&, httplib::Response&, RequestInfo&);

struct Route {
  const char* method;
  const char* pattern;
  const char* endpoint;  // the metrics label
  HandlerFn fn;
};

void handle_health(ServingContext&, const httplib::Request&, httplib::Response& res, RequestInfo&) {
  send_json(res, 200, json{{"status", "ok"}});
}

const std::vector<Route>& routes() {
  static const std::vector<Route> r = {
      {"GET", "/health", "/health", handle_health},
      {"GET", "/metrics", "/metrics", handle_metrics},
      {"GET", "/v1/models", "/v1/models", handle_models},
      {"GET", "/v1/models/(.+)", "/v1/models/{id}", handle_model},
      {"POST", "/v1/chat/completions", "/v1/chat/completions", handle_chat},
      {"POST", "/v1/completions", "/v1/completions", handle_completion},
      {"POST", "/v1/embeddings", "/v1/embeddings", handle_embeddings},
      {"POST", "/v1/rerank", "/v1/rerank", handle_rerank},
      {"POST", "/rerank", "/rerank", handle_rerank},
      {"POST", "/tokenize", "/tokenize", handle_tokenize},
      {"POST", "/detokenize", "/detokenize", handle_detokenize},
      {"POST", "/apply-template", "/apply-template", handle_apply_template},
  };
  return r;
}

std::string allowed_methods(const std::string& path) {
  std::string allow;
  for (const Route& r : routes()) {
    if (!std::regex_match(path, std::regex(r.pattern))) continue;
    if (allow.find(r.method) != std::string::npos) continue;
    if (!allow.empty()) allow += ", ";
    allow += r.method;
  }
  return allow;
}

// Why host:port cannot be bound: binds a throwaway socket the way the server does (SO_REUSEADDR)
// and returns its errno (0 when it binds now). httplib's failed bind leaves no reliable errno.
int bind_errno(const std::string& host, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) return EADDRNOTAVAIL;
  int err = 0;
  for (addrinfo* a = res; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const bool ok = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    err = ok ? 0 : errno;
    ::close(fd);
    if (ok || err == EADDRINUSE) break;
  }
  ::freeaddrinfo(res);
  return err;
}

ConnectionOptions connection_options(const ServerOptions& o) {
  ConnectionOptions c;
  c.max_connections = o.max_connections;
  c.header_timeout_s = o.header_timeout_s;
  c.framing.max_body_bytes = o.max_body_bytes;
  return c;
}

}  // namespace

HttpServer::HttpServer(ServerOptions opts, ModelManager& models, Metrics& metrics)
    : opts_(std::move(opts)), metrics_(metrics), ctx_(new ServingContext{models, metrics}),
      svr_(std::make_unique<FramedServer>(connection_options(opts_))) {
  if (!opts_.cors_origins.empty()) opts_.cors = true;
  ctx_->request_timeout_s = opts_.request_timeout_s;
  ctx_->log_debug = opts_.log_debug;
  ctx_->chat_template_defaults = opts_.chat_template_defaults;
  svr_->set_payload_max_length(size_t(opts_.max_body_bytes));
  svr_->set_keep_alive_timeout(2);
  // httplib's default options set SO_REUSEPORT, which lets a second server bind the same port
  // and share its connections (issue 21). SO_REUSEADDR alone still rebinds over TIME_WAIT
  // sockets of a previous run but refuses a port another socket listens on.
  // TCP_NODELAY (accepted sockets inherit it from the listening one): a response goes out as its
  // header write then its body write, and with Nagle the body waited for the client's delayed ACK
  // of the header (40 ms on Linux): a 15 ms embedding request took 58 ms.
  svr_->set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    listen_fd_ = int(sock);
  });
  install_routes();
}

HttpServer::~HttpServer() {
  {
    std::lock_guard lock(mu_);
    serve_done_ = true;
  }
  cv_.notify_all();
  if (drain_.joinable()) drain_.join();
}

bool HttpServer::authorized(const std::string& authorization, const std::string& x_api_key) const {
  std::string given = x_api_key;
  static const std::string kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() && authorization.compare(0, kBearer.size(), kBearer) == 0)
    given = authorization.substr(kBearer.size());
  // Constant time in the key: every byte of the expected key is compared whatever the input.
  const std::string& want = opts_.api_key;
  unsigned diff = given.size() != want.size() ? 1u : 0u;
  for (size_t i = 0; i < want.size(); ++i) diff |= unsigned(uint8_t(want[i]) ^ uint8_t(i < given.size() ? given[i] : 0));
  return diff == 0;
}

void HttpServer::install_routes() {
  httplib::Server& s = *svr_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (opts_.api_key.empty() || req.path == "/health" || (opts_.cors && req.method == "OPTIONS"))
      return httplib::Server::HandlerResponse::Unhandled;
    if (authorized(req.get_header_value("Authorization"), req.get_header_value("X-API-Key")))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401, "authentication_error",
                             "Incorrect or missing API key. Send it as 'Authorization: Bearer KEY' or 'X-API-Key: KEY'.",
                             "", "invalid_api_key"));
    metrics_.count_request("", "auth", 401);
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!opts_.cors) return;
    if (opts_.cors_origins.empty()) {
      res.set_header("Access-Control-Allow-Origin", "*");
      return;
    }
    const std::string origin = req.get_header_value("Origin");
    for (const auto& o : opts_.cors_origins)
      if (o == origin) {
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Vary", "Origin");
      }
  });
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string type = "invalid_request_error", code, msg;
    switch (res.status) {
      case 400: msg = "malformed HTTP request"; break;
      case 404:
        msg = "Invalid URL (" + req.method + " " + http::escape_controls(req.path) + ")";
        code = "not_found";
        break;
      case 413:
        msg = http::body_too_large_message(opts_.max_body_bytes);
        code = "request_too_large";
        break;
      case 414: msg = "request URI too long"; break;
      default:
        type = res.status >= 500 ? "server_error" : "invalid_request_error";
        msg = "HTTP status " + std::to_string(res.status);
    }
    send_error(res, ApiError(res.status, type, msg, "", code));
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, "server_error", what));
  });

  for (const Route& r : routes()) {
    auto h = [this, r](const httplib::Request& req, httplib::Response& res) {
      RequestInfo info;
      info.endpoint = r.endpoint;
      try {
        r.fn(*ctx_, req, res, info);
      } catch (const ApiError& e) {
        send_error(res, e);
      } catch (const Error& e) {
        send_error(res, protocol::from_error(e));
      } catch (const std::exception& e) {
        send_error(res, ApiError(500, "server_error", e.what()));
      } catch (...) {
        send_error(res, ApiError(500, "server_error", "unknown internal error"));
      }
      if (!info.counted) metrics_.count_request(info.model, info.endpoint, res.status < 0 ? 200 : res.status);
    };
    if (std::string(r.method) == "GET") s.Get(r.pattern, h);
    else s.Post(r.pattern, h);
  }

  auto fallback = [this](const httplib::Request& req, httplib::Response& res) {
    const std::string allow = allowed_methods(req.path);
    const std::string path = http::escape_controls(req.path);  // a %00 would cut the message short
    if (req.method == "OPTIONS" && opts_.cors && !allow.empty()) {  // CORS preflight
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", allow + ", OPTIONS");
      const std::string asked = req.get_header_value("Access-Control-Request-Headers");
      res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type, X-API-Key" : asked);
      res.set_header("Access-Control-Max-Age", "86400");
      return;
    }
    if (allow.empty()) {
      send_error(res, ApiError(404, "invalid_request_error", "Invalid URL (" + req.method + " " + path + ")", "",
                               "not_found"));
    } else {
      res.set_header("Allow", allow);
      send_error(res, ApiError(405, "invalid_request_error",
                               "method " + req.method + " is not allowed on " + path + " (allowed: " + allow + ")",
                               "", "method_not_allowed"));
    }
    metrics_.count_request("", "other", res.status);
  };
  s.Get(".*", fallback);
  s.Post(".*", fallback);
  s.Put(".*", fallback);
  s.Patch(".*", fallback);
  s.Delete(".*", fallback);
  s.Options(".*", fallback);
}

int HttpServer::bind() {
  if (opts_.port == 0) {
    port_ = svr_->bind_to_any_port(opts_.host);
  } else {
    port_ = svr_->bind_to_port(opts_.host, opts_.port) ? opts_.port : -1;
  }
  if (port_ <= 0) {
    const int err = bind_errno(opts_.host, opts_.port);
    const std::string where = opts_.host + ":" + std::to_string(opts_.port);
    if (err == EADDRINUSE)
      throw_error(ErrorCode::IO, "cannot listen on " + where + ": port in use (another server listens there; "
                                                               "stop it or pass another --port)");
    throw_error(ErrorCode::IO, "cannot listen on " + where + ": " + (err ? std::strerror(err) : "bind failed") +
                                   " (is " + opts_.host + " an address of this machine?)");
  }
  // cpp-httplib listens with a backlog of 5. When 64 clients connect at once while the engine
  // keeps both cores busy, the accept queue overflowed: Linux drops the handshake's last ACK, the
  // client sends its request on a connection the server never accepts, and after the SYN-ACK
  // retry (~1 s) the connection is reset (httpx ReadError, 20-29 of 64 requests on a fresh
  // server). listen() again on the bound socket raises the backlog to the system's limit.
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  return port_;
}

void HttpServer::serve() {
  const std::string host = opts_.host.find(':') != std::string::npos ? "[" + opts_.host + "]" : opts_.host;
  std::fprintf(stderr, "oxydllm: listening on http://%s:%d\n", host.c_str(), port_);
  std::fflush(stderr);
  svr_->listen_after_bind();
  {
    std::lock_guard lock(mu_);
    serve_done_ = true;
  }
  cv_.notify_all();
  if (drain_.joinable()) drain_.join();
}

void HttpServer::shutdown() {
  std::lock_guard lock(mu_);
  if (shutdown_started_) {
    ctx_->drain_expired = true;  // asked twice: end in-flight work now
    return;
  }
  shutdown_started_ = true;
  ctx_->draining = true;
  drain_ = std::thread([this] {
    // stop() only once, and only once the accept loop runs (httplib asserts otherwise).
    std::unique_lock lock(mu_);
    while (!serve_done_ && !svr_->is_running()) cv_.wait_for(lock, std::chrono::milliseconds(10));
    if (serve_done_) return;
    svr_->stop();
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(std::max(0.0, opts_.shutdown_timeout_s)));
    cv_.wait_until(lock, until, [&] { return serve_done_; });
    ctx_->drain_expired = true;
  });
}

}  // namespace oxyd::server
