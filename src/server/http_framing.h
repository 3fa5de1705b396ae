// Request-head framing checks (RFC 9112), run on the raw bytes of a request head before
// cpp-httplib parses it and before any body byte is read. httplib 0.11 takes the first of two
// Content-Length headers, reads "-10" as 2^64-10 (413), skips header lines without a colon or
// ending in a bare LF, and reads chunked when Transfer-Encoding says so whatever Content-Length
// says: behind a proxy that frames the same bytes differently, each is a request-smuggling hole.
// Here every such head is refused (400 and the connection closed), so httplib only ever sees heads
// whose framing has one reading. Pure functions on bytes: fuzzed by fuzz/http_framing_fuzz.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace oxyd::server::http {

struct FramingLimits {
  size_t max_head_bytes = 64 << 10;  // request line + header lines (larger: 431)
  size_t max_header_lines = 100;     // (more: 431)
  int64_t max_body_bytes = int64_t(8) << 20;  // a larger Content-Length: 413 before the body is read
};

/// Where a request head ends in `buf`, the bytes read so far on a connection. Kept between calls
/// so that a head arriving a byte at a time is scanned once, not once per byte.
struct HeadScan {
  enum State { kIncomplete, kComplete, kTooLarge } state = kIncomplete;
  size_t skip = 0;  // leading empty lines (CRLF) to drop before the request line (RFC 9112 §2.2)
  size_t end = 0;   // kComplete: one past the empty line that ends the head (buf[skip, end) is it)
  size_t pos = 0, line_start = 0;  // scan state
};
/// Continues the scan of `buf` (the same bytes as before, maybe more). The head ends at the first
/// empty line: CRLF CRLF, or a bare LF that check_head then refuses.
void scan_head(std::string_view buf, const FramingLimits& limits, HeadScan& scan);

/// A refused head: the HTTP status (400, 413, 431, 501, 505) and a message for the error body.
struct FramingError {
  int status = 0;
  std::string message;
  explicit operator bool() const { return status != 0; }
};
/// Checks a complete head (the request line through the empty line). Refuses: bare CR or LF;
/// a malformed request line or a version other than HTTP/1.x; obsolete line folding; a header line
/// without a colon, with an empty or non-token name (whitespace before the colon), or with a
/// control character in its value; Content-Length values that are not all the same decimal number
/// (two headers that differ, "-10", "5, 6"); Transfer-Encoding together with Content-Length, in an
/// HTTP/1.0 request, or other than a lone "chunked" (501 for codings before chunked); a second
/// Host header; more than max_header_lines lines (431); a Content-Length over max_body_bytes (413).
FramingError check_head(std::string_view head, const FramingLimits& limits);

/// "request body too large: the limit is N MB (--max-body-mb)", the 413 message of the server.
std::string body_too_large_message(int64_t max_body_bytes);

/// `s` with control bytes (< 0x20, 0x7F) written as \xNN, so that a NUL in a model id or path
/// cannot cut an error message short or put a line break into a log line. Other bytes unchanged.
std::string escape_controls(std::string_view s);

}  // namespace oxyd::server::http
