// The format parsers behind make_output_parser (output_parser.h); internal to chat/.
#pragma once

#include <memory>

#include "chat/output_parser.h"

namespace oxyd::chat {

/// TAG_JSON, TAG_XML, PYTHON_TAG, BRACKET_LIST, BRACKET_ARGS, PIPE_LIST (tool_parsers.cc).
std::unique_ptr<OutputParser> make_tool_parser(ToolSyntax syntax, const ParserOptions& opts);
/// Harmony (harmony_parser.cc): analysis → reasoning, final → content, to=functions.N → a call.
std::unique_ptr<OutputParser> make_harmony_parser(const ParserOptions& opts);

}  // namespace oxyd::chat
