// Jinja lexer with jinja2's default delimiters and transformers' environment options
// (trim_blocks, lstrip_blocks, keep_trailing_newline=False): template text → token stream.
// Whitespace control (`-`, `+`), comments and {% raw %} are resolved here, so the parser only
// sees DATA and tag contents. Newlines are normalised as Python's str.splitlines() does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace oxyd::chat::jinja {

enum class Tok : uint8_t { DATA, VAR_BEGIN, VAR_END, BLOCK_BEGIN, BLOCK_END, NAME, STRING, INT, FLOAT, OP, END };

struct Token {
  Tok type;
  std::string value;  // DATA text, name, decoded string literal, number text, operator
  int line = 1;
  int col = 1;
};

/// Throws TemplateError(SYNTAX) with line/column on malformed input.
std::vector<Token> tokenize(std::string_view source);

}  // namespace oxyd::chat::jinja
