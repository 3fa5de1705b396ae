// GPT-2 bytes_to_unicode table, built once.
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/unicode.h"

namespace oxyd::tokenizer {

namespace {
struct ByteTables {
  std::array<std::string, 256> to_char;
  std::array<int16_t, 512> to_byte;  // indexed by code point < 512
  ByteTables() {
    to_byte.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool self = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char32_t cp = self ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      append_utf8(to_char[b], cp);
      to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};
const ByteTables& tables() {
  static const ByteTables t;
  return t;
}
}  // namespace

const std::string& byte_to_char(uint8_t b) { return tables().to_char[b]; }

int char_to_byte(char32_t c) { return c < 512 ? tables().to_byte[c] : -1; }

void bytes_to_chars(std::string_view bytes, std::string& out) {
  const auto& t = tables();
  for (char c : bytes) out.append(t.to_char[static_cast<uint8_t>(c)]);
}

}  // namespace oxyd::tokenizer
