// UTF-8 and Unicode helpers for the tokenizer: decoding with the "maximal subpart" replacement rule
// (the one Python's errors="replace" and Rust's from_utf8_lossy use), character categories and
// normalization forms through utf8proc. Everything here works on UTF-8 byte strings; invalid input
// never reads out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oxyd::tokenizer {

/// Length in bytes of the valid UTF-8 sequence starting at s[pos], or 0 if it is invalid there.
size_t valid_utf8_len(std::string_view s, size_t pos);

/// Decodes the (assumed valid) code point at s[pos] and advances pos. Invalid bytes yield U+FFFD
/// and advance by one.
char32_t next_code_point(std::string_view s, size_t& pos);

/// Appends the UTF-8 encoding of cp.
void append_utf8(std::string& out, char32_t cp);

/// True if s is entirely valid UTF-8.
bool is_valid_utf8(std::string_view s);

/// Returns s with every maximal invalid subpart replaced by U+FFFD (Rust from_utf8_lossy rules).
std::string utf8_lossy(std::string_view s);

/// Byte length of the last character of s if it is a valid complete one; used to step back.
size_t last_char_len(std::string_view s);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
std::string normalize_form(std::string_view s, NormalForm form);

// Character classes (Unicode 15 via utf8proc).
bool is_whitespace(char32_t c);      // Unicode White_Space (Rust char::is_whitespace)
bool is_alphanumeric(char32_t c);    // Rust char::is_alphanumeric: L* or N*
bool is_numeric(char32_t c);         // Nd, Nl, No
bool is_punctuation(char32_t c);     // P*
bool is_mark_nonspacing(char32_t c); // Mn
bool is_combining_mark(char32_t c);  // Mn, Mc, Me
bool is_other(char32_t c);           // Cc, Cf, Cs, Co (not Cn, as in tokenizers)
/// Appends Rust's char::to_lowercase(c) (simple mapping plus U+0130 -> "i\u0307").
void append_lowercase(std::string& out, char32_t c);

}  // namespace oxyd::tokenizer
