#include "hub/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace oxyd::hub {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* resp;
  const BodySink* sink;
  int64_t max_body_bytes;
  bool aborted_by_sink = false;
  bool too_big = false;
};

size_t on_header(char* buf, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(buf, size * n);
  // A new status line starts a new hop (redirects, 100-continue): keep only the last hop's headers.
  if (line.rfind("HTTP/", 0) == 0) {
    t->resp->headers.clear();
    t->resp->body.clear();  // a body before this status line belonged to a redirect
    auto sp = line.find(' ');
    t->resp->status = sp == std::string::npos ? 0 : std::atol(line.c_str() + sp + 1);
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = line.substr(colon + 1);
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  value.erase(value.begin(), std::find_if(value.begin(), value.end(), not_space));
  value.erase(std::find_if(value.rbegin(), value.rend(), not_space).base(), value.end());
  t->resp->headers[name] = value;
  return size * n;
}

size_t on_body(char* buf, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * n;
  // Stream only successful bodies; error pages (and redirect bodies) stay in memory.
  if (t->sink && t->resp->status >= 200 && t->resp->status < 300) {
    if (!(*t->sink)(*t->resp, buf, bytes)) {
      t->aborted_by_sink = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return bytes;
  }
  if (int64_t(t->resp->body.size() + bytes) > t->max_body_bytes) {
    t->too_big = true;
    return 0;
  }
  t->resp->body.append(buf, bytes);
  return bytes;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

bool is_transient(const HttpResponse& r) {
  if (!r.transfer_ok()) {
    switch (CURLcode(r.curl_code)) {
      // Not retried: a host name that does not resolve or a connection refused (no hub, no
      // network, a wrong HF_ENDPOINT) answers the same way seconds later; retrying only made the
      // user wait 31 s in silence (issue 21). A link that drops mid-transfer is retried below.
      case CURLE_PARTIAL_FILE:
      case CURLE_OPERATION_TIMEDOUT:
      case CURLE_GOT_NOTHING:
      case CURLE_SEND_ERROR:
      case CURLE_RECV_ERROR:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
        return true;
      default:
        return false;
    }
  }
  return r.status == 408 || r.status == 429 || (r.status >= 500 && r.status <= 599);
}

HttpClient::HttpClient(HttpOptions opts) : opts_(std::move(opts)) {
  global_init_once();
  curl_ = curl_easy_init();
  if (!curl_) throw_error(ErrorCode::INTERNAL, "libcurl: curl_easy_init failed");
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpClient::get(const std::string& url, int64_t max_body_bytes) {
  return perform(url, "", nullptr, max_body_bytes);
}

HttpResponse HttpClient::get_range(const std::string& url, int64_t first, int64_t count) {
  OXYD_CHECK(first >= 0 && count > 0, "bad range");
  return perform(url, std::to_string(first) + "-" + std::to_string(first + count - 1), nullptr,
                 count + (int64_t(1) << 20));
}

HttpResponse HttpClient::get_stream(const std::string& url, int64_t first, const BodySink& sink) {
  return perform(url, first > 0 ? std::to_string(first) + "-" : "", sink, int64_t(1) << 20);
}

HttpResponse HttpClient::perform(const std::string& url, const std::string& range,
                                 const BodySink& sink, int64_t max_body_bytes) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  HttpResponse resp;
  Transfer t{&resp, sink ? &sink : nullptr, max_body_bytes};
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_slist* hdrs = nullptr;
  if (!opts_.bearer_token.empty())
    hdrs = curl_slist_append(hdrs, ("Authorization: Bearer " + opts_.bearer_token).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);  // no Authorization to redirect targets
  curl_easy_setopt(c, CURLOPT_USERAGENT, opts_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, opts_.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, opts_.low_speed_window_s);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());

  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(hdrs);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  if (code) resp.status = code;
  char* eff = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff) resp.effective_url = eff;
  resp.curl_code = int(rc);
  if (rc != CURLE_OK) {
    resp.curl_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (t.aborted_by_sink) resp.curl_error = "aborted by the writer";
    if (t.too_big)
      resp.curl_error = "the response is larger than the " + std::to_string(max_body_bytes) +
                        " bytes expected (a server that ignores Range requests?); stopped reading";
  }
  return resp;
}

std::string url_encode_path(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '/') {
      out += char(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

}  // namespace oxyd::hub
