// tool_choice → the grammar that enforces it (issue 25). "required" and a named function force a
// call from the first generated token: the output is one call (or, "required" with
// parallel_tool_calls, several) in the model's own syntax (chat/tool_call_shapes.h), its arguments
// valid for the tool's JSON Schema, and nothing else; the model's output parser reads it back.
// "auto" leaves text free and, once the model writes a call opener, constrains that call the same
// way (not where the request has its own grammar). Where the vocabulary holds markers as special tokens the grammar is compiled over the
// vocabulary that gives them their text (GrammarSpec::special_text); a marker that is a stop token
// ends the grammar instead (the stop ends the call, as the parsers expect).
#pragma once

#include <string>

#include "chat/output_parser.h"
#include "grammar/grammar.h"
#include "server/protocol.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::server {

struct ToolChoiceGrammar {
  grammar::GrammarSpec spec;  // empty: nothing enforced
  bool forced = false;        // "required" or a named function
};

/// The grammar for `cr`'s tools and tool_choice under `format` (the model's parser). Throws a 400
/// when a forced tool_choice cannot be enforced (a template with no tool-call syntax, or another
/// grammar on the same request). reasoning_open: the prompt ends inside a think block
/// (a forced call first closes it, empty).
ToolChoiceGrammar tool_choice_grammar(const protocol::ChatRequest& cr, const chat::OutputFormat& format,
                                      const tokenizer::Tokenizer& tok, bool reasoning_open);

}  // namespace oxyd::server
