// Grammars that force or constrain tool calls, for the chat server's tool_choice handling. A call
// format is begin string + the arguments' JSON (constrained to the tool's JSON Schema) + end
// string; the parsers that read calls back out of the text live elsewhere (chat tool parsers).
// Built as XGrammar structural tags.
//   AUTO:     ("triggered_tags") free text; once a trigger is generated, the call that follows
//             must be well formed.
//   REQUIRED: (a sequence of calls) the output is `prefix`, a call, and when `parallel` more calls
//             each after `separator`; nothing else (no text before, between or after the calls).
// Markers that are special tokens are text here: the caller compiles the grammar with
// GrammarSpec::special_text (grammar.h) where the vocabulary has them.
// A named function (tool_choice {"type":"function",...}) is REQUIRED over that one tool.
#pragma once

#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/tool_args.h"

namespace oxyd::grammar {

/// One tool's call as text: `begin` + arguments matching `parameters_schema` (JSON, or the
/// syntax `syntax` names) + `end`.
/// Hermes: begin = "<tool_call>\n{\"name\": \"NAME\", \"arguments\": ", end = "}\n</tool_call>".
struct ToolCallTag {
  std::string begin;
  std::string parameters_schema = "{}";  // JSON text of the tool's parameters schema ({} = any JSON)
  std::string end;
  ArgsSyntax syntax = ArgsSyntax::JSON;  // how the arguments are written (tool_args.h)
  std::string quote;                     // BARE_KEYS: the string quote
};

struct ToolCallGrammar {
  enum class Mode { AUTO, REQUIRED };
  Mode mode = Mode::REQUIRED;
  /// Prefixes of `tags[i].begin` whose appearance switches from free text to a call ("<tool_call>").
  /// Every tag's begin must start with one of them.
  std::vector<std::string> triggers;
  std::vector<ToolCallTag> tags;
  bool parallel = true;  // more than one call allowed
  std::string separator;  // REQUIRED, parallel: the text between two calls
  std::string prefix;     // REQUIRED: fixed text before the first call ("" = none)
};

/// The request grammar (Kind::STRUCTURAL_TAG) for `g`. Throws Error(INVALID_ARGUMENT) when a
/// schema is not JSON or `tags` is empty; GrammarCompiler::compile checks the rest.
GrammarSpec tool_call_grammar(const ToolCallGrammar& g);

/// Hermes / Qwen `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>` calls over OpenAI
/// `tools` (a JSON array of {"type":"function","function":{name, parameters}}). `only` non-empty:
/// that function alone (a named tool_choice).
GrammarSpec hermes_tool_call_grammar(const std::string& tools_json, ToolCallGrammar::Mode mode,
                                     const std::string& only = "", bool parallel = true);

}  // namespace oxyd::grammar
