// libFuzzer target for the request-head framing checks (server/http_framing.h), the code that
// reads raw client bytes before cpp-httplib does. The first byte picks how the rest arrives (in
// pieces of 1..8 bytes or all at once); the scan must end the same way either way, and a head
// check_head accepts must be unambiguous when re-read independently: every line ends in CRLF,
// all Content-Length values are the same digits, and Transfer-Encoding never comes with one.
// Also: escape_controls leaves no control byte. Seeds: fuzz/seeds/http_framing_fuzz.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http_framing.h"

using namespace oxyd::server::http;

namespace {

bool iprefix(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i)
    if ((line[i] | 0x20) != (name[i] | 0x20)) return false;
  return true;
}

// The independent re-read of an accepted head.
void verify_accepted(std::string_view head) {
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) __builtin_trap();
    if (head[i] == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) __builtin_trap();
  }
  std::string digits;
  bool cl = false, te = false;
  for (size_t at = head.find("\r\n") + 2; at < head.size();) {
    const size_t eol = head.find("\r\n", at);
    const std::string_view line = head.substr(at, eol - at);
    at = eol + 2;
    if (iprefix(line, "content-length")) {
      for (char c : line.substr(15))
        if (c != ' ' && c != '\t' && c != ',' && (c < '0' || c > '9')) __builtin_trap();
      cl = true;
    }
    if (iprefix(line, "transfer-encoding")) te = true;
  }
  if (cl && te) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  FramingLimits limits;
  limits.max_head_bytes = 4096;
  limits.max_header_lines = 32;
  limits.max_body_bytes = 1 << 20;

  HeadScan whole;
  scan_head(in, limits, whole);
  HeadScan pieces;
  std::string buf;
  const size_t step = data[0] % 9;  // 0: all at once
  for (size_t at = 0; at < in.size() && pieces.state == HeadScan::kIncomplete;) {
    const size_t n = step == 0 ? in.size() : step;
    buf.append(in, at, n);
    at += n;
    scan_head(buf, limits, pieces);
  }
  if (pieces.state != whole.state || pieces.skip != whole.skip || pieces.end != whole.end) __builtin_trap();
  if (whole.state == HeadScan::kComplete) {
    if (whole.end > in.size() || whole.skip > whole.end) __builtin_trap();
    const std::string_view head(in.data() + whole.skip, whole.end - whole.skip);
    const FramingError e = check_head(head, limits);
    if (!e) verify_accepted(head);
    else if (e.status < 400 || e.status > 505 || e.message.empty()) __builtin_trap();
  }
  for (char c : escape_controls(in))
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) __builtin_trap();
  return 0;
}
