// The text a model writes for one call of a given tool, in its template's syntax, split as
// constrained decoding needs it: a fixed `begin` (opener and function name), the arguments
// matching `schema` (the tool's parameters) in the syntax `args` names, a fixed `end`. This is the
// shape XGrammar's structural tags take (begin, content, end); tool_choice "required" / a named
// function force one of these shapes from the first token, "auto" constrains a call once the model
// writes one of call_triggers(), and the output parsers (output_parser.h) read them back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/output_parser.h"

namespace oxyd::chat {

/// How a syntax writes the arguments: one JSON value; Qwen3-Coder's <parameter=P>V</parameter>
/// list (V raw for strings, JSON else); Gemma's {k:V} with bare keys and <|"|>-quoted strings.
enum class ArgsForm { JSON, XML_PARAMETERS, BARE_KEYS };

struct ToolCallShape {
  std::string name;              // the function
  std::string begin, end;        // fixed text around the arguments
  nlohmann::ordered_json schema; // the arguments' JSON Schema ({"type":"object"} when the tool has none)
  ArgsForm args = ArgsForm::JSON;
  std::string quote;             // BARE_KEYS: the string quote
};

/// One shape per tool of `tools` (the request's, validated), or only the one named `only` when
/// given; nullopt when the syntax has no shape. any_opener: also the other ways a model may open a
/// call on its own (harmony's recipient in the header before <|channel|>, Llama 3's <|python_tag|>),
/// which "auto" must constrain too and a forced call does not need.
std::optional<std::vector<ToolCallShape>> tool_call_shapes(ToolSyntax syntax, const nlohmann::ordered_json& tools,
                                                           const std::string& only = "", bool any_opener = false);

/// The texts that start a call under "auto" (each shape's begin starts with one of them).
std::vector<std::string> call_triggers(ToolSyntax syntax);

}  // namespace oxyd::chat
