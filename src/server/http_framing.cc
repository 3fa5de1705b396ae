// Request-head framing checks (see http_framing.h). Grammar from RFC 9112 §2-§7 and RFC 9110 §5.
#include "server/http_framing.h"

#include <vector>

namespace oxyd::server::http {

namespace {

bool is_tchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool is_ctl(unsigned char c) { return c < 0x20 || c == 0x7F; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x | 0x20);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y | 0x20);
    if (x != y) return false;
  }
  return true;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Comma-separated list members, each trimmed; empty members kept (the callers refuse them).
std::vector<std::string_view> split_list(std::string_view v) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t comma = v.find(',');
    out.push_back(trim_ows(v.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    v.remove_prefix(comma + 1);
  }
}

// For messages: at most 40 bytes of what the client sent, control bytes escaped.
std::string quote(std::string_view s) {
  const bool cut = s.size() > 40;
  return "'" + escape_controls(s.substr(0, 40)) + (cut ? "...'" : "'");
}

FramingError bad(std::string message) { return {400, "malformed HTTP request: " + std::move(message)}; }

// 1*DIGIT, at most 18 digits (fits int64); -1 when not.
int64_t parse_length(std::string_view s) {
  if (s.empty() || s.size() > 18) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

void scan_head(std::string_view buf, const FramingLimits& limits, HeadScan& r) {
  if (r.state != HeadScan::kIncomplete) return;
  if (r.pos == 0) {
    while (buf.size() - r.skip >= 2 && buf[r.skip] == '\r' && buf[r.skip + 1] == '\n') r.skip += 2;
    // Only CRLFs so far (or a lone CR): wait for more before deciding where the request line starts.
    if (buf.size() - r.skip <= 1) return;
    r.pos = r.line_start = r.skip;
  }
  for (; r.pos < buf.size(); ++r.pos) {
    if (r.pos - r.skip >= limits.max_head_bytes) {
      r.state = HeadScan::kTooLarge;
      return;
    }
    if (buf[r.pos] != '\n') continue;
    const size_t len = r.pos - r.line_start;
    if (len == 0 || (len == 1 && buf[r.line_start] == '\r')) {
      r.state = HeadScan::kComplete;
      r.end = r.pos + 1;
      return;
    }
    r.line_start = r.pos + 1;
  }
}

FramingError check_head(std::string_view head, const FramingLimits& limits) {
  // Lines end in CRLF, and CR and LF appear nowhere else (RFC 9112 §2.2: a bare CR must be
  // refused; a bare LF may be accepted, but httplib would skip such a line, so it is refused too).
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\r' && (i + 1 == head.size() || head[i + 1] != '\n')) return bad("bare CR in the request head");
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) return bad("line ended by a bare LF instead of CRLF");
  }
  std::vector<std::string_view> lines;
  for (std::string_view rest = head; !rest.empty();) {
    const size_t eol = rest.find("\r\n");
    if (eol == std::string_view::npos) return bad("the request head does not end with an empty line");
    lines.push_back(rest.substr(0, eol));
    rest.remove_prefix(eol + 2);
  }
  if (lines.empty() || lines.back().size() != 0) return bad("the request head does not end with an empty line");
  lines.pop_back();
  if (lines.empty()) return bad("empty request line");

  // request-line = method SP request-target SP HTTP-version
  const std::string_view rl = lines[0];
  const size_t sp1 = rl.find(' '), sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
    return bad("the request line is not 'METHOD TARGET HTTP/1.1': " + quote(rl));
  const std::string_view method = rl.substr(0, sp1), target = rl.substr(sp1 + 1, sp2 - sp1 - 1),
                         version = rl.substr(sp2 + 1);
  if (method.empty() || target.empty()) return bad("the request line is not 'METHOD TARGET HTTP/1.1': " + quote(rl));
  for (char c : method)
    if (!is_tchar(static_cast<unsigned char>(c))) return bad("invalid method " + quote(method));
  for (char c : target)
    if (is_ctl(static_cast<unsigned char>(c))) return bad("control character in the request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9')
    return bad("invalid HTTP version " + quote(version));
  if (version[5] != '1') return {505, "HTTP version " + std::string(version) + " is not supported (use HTTP/1.1)"};
  const bool http10 = version[7] == '0';

  if (lines.size() - 1 > limits.max_header_lines)
    return {431, "too many header lines: " + std::to_string(lines.size() - 1) + " (the limit is " +
                     std::to_string(limits.max_header_lines) + ")"};
  int64_t content_length = -1;
  bool has_content_length = false, has_te = false;
  std::vector<std::string_view> codings;
  int hosts = 0;
  for (size_t n = 1; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    if (line.front() == ' ' || line.front() == '\t')
      return bad("obsolete line folding (a header line starting with whitespace): " + quote(line));
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return bad("header line without a colon: " + quote(line));
    const std::string_view name = line.substr(0, colon), value = trim_ows(line.substr(colon + 1));
    if (name.empty()) return bad("header line with an empty name: " + quote(line));
    for (char c : name)
      if (!is_tchar(static_cast<unsigned char>(c)))
        return bad("invalid header name " + quote(name) + " (no whitespace is allowed before the colon)");
    for (char c : value)
      if (is_ctl(static_cast<unsigned char>(c)) && c != '\t')
        return bad("control character in the value of header " + quote(name));
    if (iequals(name, "Content-Length")) {
      for (std::string_view member : split_list(value)) {
        const int64_t v = parse_length(member);
        if (v < 0) return bad("invalid Content-Length " + quote(value) + " (must be a non-negative decimal number)");
        if (has_content_length && v != content_length)
          return bad("conflicting Content-Length values " + std::to_string(content_length) + " and " +
                     std::to_string(v));
        has_content_length = true;
        content_length = v;
      }
    } else if (iequals(name, "Transfer-Encoding")) {
      has_te = true;
      for (std::string_view c : split_list(value)) codings.push_back(c);
    } else if (iequals(name, "Host")) {
      if (++hosts > 1) return bad("more than one Host header");
    }
  }
  if (has_te) {
    if (has_content_length) return bad("Transfer-Encoding together with Content-Length");
    if (http10) return bad("Transfer-Encoding in an HTTP/1.0 request");
    for (std::string_view c : codings)
      if (c.empty()) return bad("empty Transfer-Encoding");
    if (!iequals(codings.back(), "chunked")) return bad("Transfer-Encoding must end with chunked");
    if (codings.size() > 1)
      return {501, "Transfer-Encoding " + quote(codings.front()) + " is not supported (only chunked)"};
  }
  if (has_content_length && content_length > limits.max_body_bytes)
    return {413, body_too_large_message(limits.max_body_bytes)};
  return {};
}

std::string body_too_large_message(int64_t max_body_bytes) {
  return "request body too large: the limit is " + std::to_string(max_body_bytes >> 20) + " MB (--max-body-mb)";
}

std::string escape_controls(std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (is_ctl(u)) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace oxyd::server::http
