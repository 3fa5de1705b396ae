// The GPT-2 byte <-> printable-character map used by byte-level BPE vocabularies: bytes
// '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF map to themselves, the other 68 bytes to U+0100+n.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oxyd::tokenizer {

/// UTF-8 of the character standing for byte b.
const std::string& byte_to_char(uint8_t b);
/// The byte a character stands for, or -1 if c is not in the map.
int char_to_byte(char32_t c);
/// Maps every byte of `bytes` to its character and appends the UTF-8 to out.
void bytes_to_chars(std::string_view bytes, std::string& out);

}  // namespace oxyd::tokenizer
