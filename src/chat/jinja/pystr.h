// Python str semantics on UTF-8 bytes: code-point length/index/slice, whitespace, strip/split,
// case mapping, repr quoting, float repr. Strings stay UTF-8 throughout; the helpers decode only
// where Python counts code points. Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek
// and Cyrillic (what chat content realistically contains), not all of Unicode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oxyd::chat::jinja::pystr {

/// Decodes UTF-8 into code points; invalid bytes decode as U+FFFD-free raw byte values (0xDC80+b,
/// Python's surrogateescape) so they survive a round trip.
std::vector<char32_t> decode(std::string_view s);
void encode(char32_t c, std::string& out);
std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end);
bool is_ascii(std::string_view s);
size_t length(std::string_view s);

bool is_space(char32_t c);
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_cased_upper(char32_t c);
bool is_cased_lower(char32_t c);
bool is_alpha(char32_t c);
bool is_digit(char32_t c);
bool is_alnum(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);

/// strip/lstrip/rstrip; chars == nullptr strips whitespace.
std::string strip(std::string_view s, const std::string* chars, bool left, bool right);
/// str.split(sep, maxsplit); sep == nullptr splits on whitespace runs.
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> splitlines(std::string_view s, bool keepends = false);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);

void append_repr(std::string& out, std::string_view s);
/// markupsafe.escape: & < > " ' → &amp; &lt; &gt; &#34; &#39;
std::string html_escape(std::string_view s);
/// Python float repr ("1.0", "1e+16", "nan", "inf").
std::string float_repr(double d);
/// Python JSON string escaping (json.dumps) into out, quotes included.
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii);

}  // namespace oxyd::chat::jinja::pystr
