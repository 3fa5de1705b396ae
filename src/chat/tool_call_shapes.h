// The text a model writes for one call of a given tool, in its template's syntax, split as
// constrained decoding needs it: a fixed `begin` (opener and function name), the arguments as a
// JSON value matching `schema` (the tool's parameters), a fixed `end`. This is the shape XGrammar's
// structural tags take (begin, schema, end); tool_choice "required" / a named function force one
// of these shapes from the first token, and the output parsers (output_parser.h) read them back.
// Syntaxes whose arguments are not one JSON value (TAG_XML, CALL_COLON) have no shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/output_parser.h"

namespace oxyd::chat {

struct ToolCallShape {
  std::string name;              // the function
  std::string begin, end;        // fixed text around the arguments
  nlohmann::ordered_json schema; // the arguments' JSON Schema ({"type":"object"} when the tool has none)
};

/// One shape per tool of `tools` (the request's, validated), or only the one named `only` when
/// given; nullopt when the syntax has no JSON-argument shape.
std::optional<std::vector<ToolCallShape>> tool_call_shapes(ToolSyntax syntax, const nlohmann::ordered_json& tools,
                                                           const std::string& only = "");

}  // namespace oxyd::chat
