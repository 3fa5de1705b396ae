// A small blocking HTTP(S) client over libcurl for the hub layer: GET into memory, GET with a
// byte Range, and streaming GET into a caller's sink. Redirects are followed (the hub sends LFS
// files to a CDN); an Authorization header is never forwarded to another host. It does not retry:
// callers decide what is transient (is_transient) and back off themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace oxyd::hub {

struct HttpResponse {
  long status = 0;                             // HTTP status of the last hop (0: no response)
  std::string body;                            // empty for streamed requests
  std::map<std::string, std::string> headers;  // of the last hop, names lower-cased
  std::string effective_url;                   // after redirects
  int curl_code = 0;                           // CURLcode; 0 = transfer completed
  std::string curl_error;                      // curl's message when curl_code != 0

  bool transfer_ok() const { return curl_code == 0; }
  std::string header(const std::string& lower_name) const;
};

/// True for failures worth retrying: dropped connections, truncated bodies, timeouts, 429, 5xx.
/// False for a host name that does not resolve and a refused connection: they fail at once.
bool is_transient(const HttpResponse& r);

struct HttpOptions {
  std::string bearer_token;       // sent as Authorization to the first host only
  long connect_timeout_s = 20;
  long low_speed_window_s = 30;   // abort when under 1 byte/s for this long (a stalled link)
  std::string user_agent = "oxydllm";
};

/// Receives body bytes of a 2xx response; `head` holds that response's status and headers.
/// Returns false to abort the transfer (the response then has curl_code != 0).
using BodySink = std::function<bool(const HttpResponse& head, const char* data, size_t size)>;

/// Not thread-safe; one client per thread. Each call is a fresh transfer.
class HttpClient {
 public:
  explicit HttpClient(HttpOptions opts = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// GET the whole body into memory (capped at max_body_bytes; beyond it the transfer aborts).
  HttpResponse get(const std::string& url, int64_t max_body_bytes = int64_t(64) << 20);
  /// GET bytes [first, first+count) with a Range header; a server may answer 200 with all bytes.
  HttpResponse get_range(const std::string& url, int64_t first, int64_t count);
  /// GET from byte `first` (0 = no Range header) streaming the body of a 2xx response into sink.
  /// Bodies of non-2xx responses are kept in HttpResponse::body (small error pages).
  HttpResponse get_stream(const std::string& url, int64_t first, const BodySink& sink);

 private:
  HttpResponse perform(const std::string& url, const std::string& range, const BodySink& sink,
                       int64_t max_body_bytes);
  HttpOptions opts_;
  void* curl_ = nullptr;  // CURL*
};

/// Percent-encodes a repo-relative path, keeping '/' separators.
std::string url_encode_path(const std::string& path);

}  // namespace oxyd::hub
