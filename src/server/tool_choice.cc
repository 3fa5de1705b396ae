// tool_choice_grammar (see tool_choice.h).
#include "server/tool_choice.h"

#include "chat/output_format.h"
#include "chat/tool_call_shapes.h"
#include "grammar/tool_grammar.h"

namespace oxyd::server {

using protocol::json;
using chat::ToolSyntax;

namespace {

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

}  // namespace

ToolChoiceGrammar tool_choice_grammar(const protocol::ChatRequest& cr, const chat::OutputFormat& format,
                                      const tokenizer::Tokenizer& tok, bool reasoning_open) {
  ToolChoiceGrammar out;
  const json& tc = cr.tool_choice;
  if (cr.tools.is_null() || cr.tools.empty() || (tc.is_string() && tc.get<std::string>() == "none")) return out;
  out.forced = tc.is_object() || (tc.is_string() && tc.get<std::string>() == "required");
  const std::string only = tc.is_object() ? tc["function"]["name"].get<std::string>() : "";
  if (out.forced && !cr.common.grammar.empty())
    throw protocol::bad_request("'" + cr.common.grammar_param + "' cannot be combined with a forced tool_choice "
                                "(both constrain the whole output).", "tool_choice", "invalid_value");
  if (!out.forced && !cr.common.grammar.empty()) return out;  // the request's own grammar wins

  const auto shapes = chat::tool_call_shapes(format.tools, cr.tools, only, /*any_opener=*/!out.forced);
  if (!shapes || shapes->empty()) {
    if (!out.forced) return out;
    throw protocol::bad_request("tool_choice " + tc.dump() + " cannot be enforced for this model: its template "
                                "shows no tool-call syntax the grammar can force; use \"auto\".",
                                "tool_choice", "unsupported_value");
  }

  // Markers the tokenizer writes as one special token: the grammar needs the vocabulary where
  // they are text; one that is a stop token ends the call instead.
  std::vector<std::string> markers = chat::format_markers(format);
  markers.insert(markers.end(), {"<|constrain|>", "<|call|>", "<|return|>", "<|python_tag|>"});
  grammar::ToolCallGrammar g;
  std::vector<std::string> stop_markers;
  bool special_text = false;
  for (const std::string& mk : markers) {
    const int32_t id = tok.token_to_id(mk);
    if (id < 0 || !tok.is_special(id)) continue;
    if (tok.is_end_of_generation(id)) stop_markers.push_back(mk);
    else special_text = true;
  }
  for (const chat::ToolCallShape& s : *shapes) {
    std::string end = s.end;
    for (const std::string& mk : stop_markers)
      if (ends_with(end, mk)) end.resize(end.size() - mk.size());
    const grammar::ArgsSyntax args = s.args == chat::ArgsForm::XML_PARAMETERS ? grammar::ArgsSyntax::XML_PARAMETERS
                                     : s.args == chat::ArgsForm::BARE_KEYS    ? grammar::ArgsSyntax::BARE_KEYS
                                                                              : grammar::ArgsSyntax::JSON;
    g.tags.push_back({s.begin, s.schema.dump(), end, args, s.quote});
  }
  // Several calls only where each call stands alone in the text (the list syntaxes hold one list;
  // harmony's call ends the turn, and text after a Llama 3 JSON call would not be a call).
  g.parallel = cr.parallel_tool_calls && only.empty() &&
               (format.tools == ToolSyntax::TAG_JSON || format.tools == ToolSyntax::TAG_XML ||
                format.tools == ToolSyntax::BRACKET_ARGS || format.tools == ToolSyntax::CALL_COLON);
  if (!out.forced) {
    g.mode = grammar::ToolCallGrammar::Mode::AUTO;
    g.triggers = chat::call_triggers(format.tools);
    out.spec = grammar::tool_call_grammar(g);
    out.spec.special_text = special_text;
    return out;
  }
  g.mode = grammar::ToolCallGrammar::Mode::REQUIRED;
  g.separator = format.tools == ToolSyntax::TAG_JSON || format.tools == ToolSyntax::TAG_XML ? "\n" : "";
  if (reasoning_open) g.prefix = format.think_close + "\n\n";
  out.spec = grammar::tool_call_grammar(g);
  out.spec.special_text = special_text;
  return out;
}

}  // namespace oxyd::server
