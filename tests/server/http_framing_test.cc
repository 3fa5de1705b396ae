// Request framing per RFC 9112 (§2.2 line endings, §3 request line, §5 field lines and obs-fold,
// §6.1/§6.3 Transfer-Encoding and Content-Length; RFC 9110 §8.6 Content-Length is 1*DIGIT, §5.5
// no CTL in values; §3.2 one Host): first the pure checks (server/http_framing.h), then the real
// `oxydllm start` over raw sockets: every smuggling-prone head gets its status with an OpenAI
// error body and the connection closed before a body byte is read, while well-framed requests
// (also pipelined, chunked, with a repeated identical Content-Length) are served. And control
// bytes in error messages (a %00 in a model id) come back escaped, not cutting the message short.
#include "http_raw_util.h"
#include "http_test_util.h"
#include "server/http_framing.h"
#include "server/protocol.h"

namespace oxyd::server::test {
namespace {

using http::check_head;
using http::FramingLimits;

http::FramingError check(const std::string& head, int64_t max_body = 1 << 20) {
  FramingLimits l;
  l.max_body_bytes = max_body;
  return check_head(head, l);
}

const std::string kLine = "POST /v1/completions HTTP/1.1\r\nHost: x\r\n";

TEST(HttpFraming, RefusedHeads) {
  struct Case {
    std::string head;
    int status;
    const char* says;
  };
  const std::vector<Case> cases = {
      {kLine + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", 400, "conflicting Content-Length values 5 and 6"},
      {kLine + "Content-Length: 5, 6\r\n\r\n", 400, "conflicting Content-Length"},
      {kLine + "Content-Length: -10\r\n\r\n", 400, "invalid Content-Length '-10'"},
      {kLine + "Content-Length: +5\r\n\r\n", 400, "invalid Content-Length"},
      {kLine + "Content-Length: 0x10\r\n\r\n", 400, "invalid Content-Length"},
      {kLine + "Content-Length: \r\n\r\n", 400, "invalid Content-Length"},
      {kLine + "Content-Length: 99999999999999999999\r\n\r\n", 400, "invalid Content-Length"},
      {kLine + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400,
       "Transfer-Encoding together with Content-Length"},
      {kLine + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
       "Transfer-Encoding together with Content-Length"},
      {kLine + "Transfer-Encoding: chunked, identity\r\n\r\n", 400, "must end with chunked"},
      {kLine + "Transfer-Encoding: xchunked\r\n\r\n", 400, "must end with chunked"},
      {kLine + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "not supported"},
      {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0"},
      {kLine + "X-No-Colon\r\n\r\n", 400, "header line without a colon: 'X-No-Colon'"},
      {kLine + "Content-Length : 5\r\n\r\n", 400, "invalid header name"},
      {kLine + ": v\r\n\r\n", 400, "empty name"},
      {kLine + "X-A: 1\r\n folded\r\n\r\n", 400, "obsolete line folding"},
      {kLine + "X-A: a\x01" "b\r\n\r\n", 400, "control character"},
      {kLine + std::string("X-A: a\0b\r\n\r\n", 12), 400, "control character"},
      {kLine + "X-A: 1\n\r\n", 400, "bare LF"},
      {"POST / HTTP/1.1\nHost: x\r\n\r\n", 400, "bare LF"},
      {kLine + "X-A: 1\rX-B: 2\r\n\r\n", 400, "bare CR"},
      {kLine + "Host: y\r\n\r\n", 400, "more than one Host"},
      {"POST /  HTTP/1.1\r\n\r\n", 400, "request line"},
      {"POST /\r\n\r\n", 400, "request line"},
      {"POST / HTTP/1.1 \r\n\r\n", 400, "request line"},
      {"PO(ST / HTTP/1.1\r\n\r\n", 400, "invalid method"},
      {"GET /a\x7f HTTP/1.1\r\n\r\n", 400, "control character in the request target"},
      {"GET / HTTX/1.1\r\n\r\n", 400, "invalid HTTP version"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "not supported"},
      {kLine + "Content-Length: 1048577\r\n\r\n", 413, "request body too large"},
  };
  for (const Case& c : cases) {
    const http::FramingError e = check(c.head);
    EXPECT_EQ(e.status, c.status) << c.head;
    EXPECT_NE(e.message.find(c.says), std::string::npos) << c.head << " → " << e.message;
  }
  // 101 header lines (the limit is 100): 431.
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(check(many + "\r\n").status, 431);
}

TEST(HttpFraming, AcceptedHeads) {
  for (const std::string& h : {
           kLine + "Content-Length: 5\r\n\r\n",
           kLine + "Content-Length: 5\r\ncontent-length: 5\r\n\r\n",  // the same value twice (RFC 9110 §8.6)
           kLine + "Content-Length: 5, 5\r\n\r\n",
           kLine + "Transfer-Encoding: chunked\r\n\r\n",
           kLine + "transfer-encoding:  Chunked \r\n\r\n",
           std::string("GET /v1/models HTTP/1.0\r\n\r\n"),
           std::string("GET /v1/models?a=%00 HTTP/1.1\r\nX-Tab: a\tb\r\nX-Empty:\r\nX-Utf8: \xc3\xa9\r\n\r\n"),
           kLine + "Content-Length: 1048576\r\n\r\n",  // exactly the limit
       }) {
    const http::FramingError e = check(h);
    EXPECT_EQ(e.status, 0) << h << " → " << e.message;
  }
}

TEST(HttpFraming, ScanFindsTheHeadEndAcrossPieces) {
  FramingLimits l;
  const std::string req = "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
  http::HeadScan s;
  std::string buf;
  for (char c : req) {  // a byte at a time, as a slow client sends it
    buf += c;
    http::scan_head(buf, l, s);
    if (s.state != http::HeadScan::kIncomplete) break;
  }
  ASSERT_EQ(s.state, http::HeadScan::kComplete);
  EXPECT_EQ(s.skip, 4u);  // the leading empty lines are dropped (RFC 9112 §2.2)
  EXPECT_EQ(buf.substr(s.skip, s.end - s.skip), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  // A bare-LF end is found too (then refused by check_head), so such a client gets its 400 at once.
  http::HeadScan lf;
  http::scan_head("GET / HTTP/1.1\n\n", l, lf);
  EXPECT_EQ(lf.state, http::HeadScan::kComplete);
  l.max_head_bytes = 64;
  http::HeadScan big;
  http::scan_head("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), l, big);
  EXPECT_EQ(big.state, http::HeadScan::kTooLarge);
}

TEST(HttpFraming, ControlBytesInErrorMessagesAreEscaped) {
  EXPECT_EQ(http::escape_controls(std::string("a\0b\x1f\x7f\n\xc3\xa9", 8)), "a\\x00b\\x1f\\x7f\\x0a\xc3\xa9");
  // Any message: its control bytes (here from a stop string) are escaped in the body sent.
  const json body = json::parse(protocol::error_body(protocol::bad_request("bad stop 'a\x01\r\nb'", "stop\t")));
  EXPECT_EQ(body["error"]["message"], "bad stop 'a\\x01\\x0d\\x0ab'");
  EXPECT_EQ(body["error"]["param"], "stop\\x09");
}

// ---- the server over raw sockets ------------------------------------------------------------

class HttpFramingServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_empty_store();
    server_ = new ServerProcess(dir_, {"--port", "0", "--models-dir", (dir_ / "store").string(), "--max-body-mb",
                                       "1", "--no-pull"});
    ASSERT_GT(server_->port(), 0) << server_->stderr_text();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(dir_);
  }
  static inline fs::path dir_;
  static inline ServerProcess* server_ = nullptr;
};

void expect_error_body(const RawResponse& r, int status, const std::string& says) {
  EXPECT_EQ(r.status, status) << r.head << "\n" << r.body;
  EXPECT_TRUE(r.closed) << "the connection should be closed after a framing error";
  EXPECT_NE(r.head.find("Content-Type: application/json"), std::string::npos) << r.head;
  const json j = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("error")) << r.body;
  EXPECT_EQ(j["error"]["type"], status >= 500 ? "server_error" : "invalid_request_error") << r.body;
  EXPECT_TRUE(j["error"]["param"].is_null());
  EXPECT_NE(j["error"]["message"].get<std::string>().find(says), std::string::npos) << r.body;
}

TEST_F(HttpFramingServer, SmugglingProneHeadsGet400AndClose) {
  const int port = server_->port();
  // The body is a second request: had the server taken the first Content-Length (5), it would run
  // the smuggled GET. It answers 400 once and closes instead.
  const std::string smuggled = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string post = "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  struct Case {
    std::string req;
    int status;
    const char* says;
  };
  const std::vector<Case> cases = {
      {post + "Content-Length: 5\r\nContent-Length: " + std::to_string(5 + smuggled.size()) + "\r\n\r\n{\"a\":" +
           smuggled,
       400, "conflicting Content-Length"},
      {post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, 400,
       "Transfer-Encoding together with Content-Length"},
      {post + "Content-Length : 5\r\n\r\n{\"a\":" + smuggled, 400, "invalid header name"},
      {post + "X-No-Colon-Here\r\nContent-Length: 2\r\n\r\n{}", 400, "header line without a colon"},
      {post + "Content-Length: -10\r\n\r\n{}", 400, "invalid Content-Length '-10'"},
      {post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, "not supported"},
      {"GET /health HTTP/1.1\nHost: x\n\n", 400, "bare LF"},
      // Over --max-body-mb 1 by Content-Length alone: 413 before the body is sent or read.
      {post + "Content-Length: 2097152\r\n\r\n", 413, "request body too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.req.substr(0, 120));
    const RawResponse r = raw_exchange(port, c.req);
    expect_error_body(r, c.status, c.says);
    EXPECT_EQ(r.body.find("\"object\":\"list\""), std::string::npos) << "the smuggled GET was served";
  }
  // A head larger than 64 KB: 431.
  expect_error_body(raw_exchange(port, "GET /health HTTP/1.1\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n"), 431,
                    "larger than 64 KB");
  // The server is fine afterwards.
  EXPECT_EQ(raw_exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 200);
}

TEST_F(HttpFramingServer, WellFramedRequestsAreServed) {
  const int port = server_->port();
  // Two pipelined requests on one connection (the second closes it), a repeated identical
  // Content-Length, then a chunked body: all answered.
  const std::string body = "{\"model\":\"x\",\"content\":\"a\"}";
  const std::string req = "\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /tokenize HTTP/1.1\r\nHost: x\r\n"
                          "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                          "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  const int fd = connect_local(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, req));
  bool closed = false;
  const std::string got = read_until_close(fd, 20, &closed);
  close(fd);
  EXPECT_TRUE(closed);
  ASSERT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  const size_t second = got.find("HTTP/1.1 ", 10);
  ASSERT_NE(second, std::string::npos) << got;
  // The body parsed as one JSON object: the model 'x' is unknown (404 model_not_found), not a 400.
  const RawResponse r2 = parse_raw(got.substr(second), true);
  EXPECT_EQ(r2.status, 404) << got;
  EXPECT_NE(r2.body.find("model_not_found"), std::string::npos) << r2.body;

  const std::string chunked = "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                              [&] {
                                char n[16];
                                std::snprintf(n, sizeof n, "%zx", body.size());
                                return std::string(n);
                              }() + "\r\n" + body + "\r\n0\r\n\r\n";
  const RawResponse r3 = raw_exchange(port, chunked);
  EXPECT_EQ(r3.status, 404) << r3.head << r3.body;
  EXPECT_NE(r3.body.find("model_not_found"), std::string::npos) << r3.body;
}

TEST_F(HttpFramingServer, NulInAModelIdIsEscapedNotTruncating) {
  const int port = server_->port();
  RawResponse r = raw_exchange(port, "GET /v1/models/ab%00cd%01ef HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(r.status, 404) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["error"]["message"], "The model 'ab\\x00cd\\x01ef' does not exist") << r.body;

  const std::string body = json{{"model", std::string("ab\0cd", 5)}, {"prompt", "hi"}}.dump();  // "ab\u0000cd"
  r = raw_exchange(port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  ASSERT_EQ(r.status, 404) << r.body;
  j = json::parse(r.body);
  const std::string msg = j["error"]["message"];
  EXPECT_NE(msg.find("'ab\\x00cd'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\0'), std::string::npos) << msg;
}

}  // namespace
}  // namespace oxyd::server::test
