// tool_call_grammar (see tool_grammar.h): XGrammar structural-tag JSON.
#include "grammar/tool_grammar.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace oxyd::grammar {

using json = nlohmann::ordered_json;  // keeps the schema's property order (the grammar follows it)

namespace {

json parameters(const ToolCallTag& t) {
  json schema = json::parse(t.parameters_schema, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded() || !(schema.is_object() || schema.is_boolean()))
    throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: parameters of '" + t.begin + "' is not a JSON Schema");
  if (schema.is_object() && schema.empty()) schema = json{{"type", "object"}};  // no parameters: an object
  return schema;
}

void append_text(json& elements, const std::string& text) {
  if (!text.empty()) elements.push_back({{"type", "const_string"}, {"value", text}});
}

// The arguments for the tool's schema (XGrammar's structural tags are strict: no property beyond
// `properties` unless allowed); JSON has at most one blank between tokens, as a weak model would
// otherwise spend its budget on blanks.
json arguments(const ToolCallTag& t) { return arguments_format(parameters(t), t.syntax, t.quote); }

json one_of(json elements) {
  return elements.size() == 1 ? elements[0] : json{{"type", "or"}, {"elements", std::move(elements)}};
}

json sequence(json elements) {
  return elements.size() == 1 ? elements[0] : json{{"type", "sequence"}, {"elements", std::move(elements)}};
}

// REQUIRED: prefix, call, then (parallel) any number of separator + call; nothing else.
json required_format(const ToolCallGrammar& g) {
  json calls = json::array();
  for (const ToolCallTag& t : g.tags) {
    json e = json::array();
    append_text(e, t.begin);
    e.push_back(arguments(t));
    append_text(e, t.end);
    calls.push_back(sequence(std::move(e)));
  }
  const json call = one_of(std::move(calls));
  json root = json::array();
  append_text(root, g.prefix);
  root.push_back(call);
  if (g.parallel) {
    json more = json::array();
    append_text(more, g.separator);
    more.push_back(call);
    root.push_back({{"type", "star"}, {"content", sequence(std::move(more))}});
  }
  return sequence(std::move(root));
}

}  // namespace

GrammarSpec tool_call_grammar(const ToolCallGrammar& g) {
  if (g.tags.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: no tool");
  json format;
  if (g.mode == ToolCallGrammar::Mode::REQUIRED) {
    format = required_format(g);
  } else {
    json tags = json::array();
    for (const ToolCallTag& t : g.tags)
      tags.push_back({{"type", "tag"},
                      {"begin", t.begin},
                      {"content", arguments(t)},
                      {"end", t.end}});
    format = {{"type", "triggered_tags"},
              {"triggers", g.triggers},
              {"tags", tags},
              {"at_least_one", false},
              {"stop_after_first", !g.parallel}};
  }
  return {GrammarSpec::Kind::STRUCTURAL_TAG, json{{"type", "structural_tag"}, {"format", format}}.dump(), true};
}

GrammarSpec hermes_tool_call_grammar(const std::string& tools_json, ToolCallGrammar::Mode mode, const std::string& only,
                                     bool parallel) {
  const json tools = json::parse(tools_json, nullptr, false);
  if (!tools.is_array()) throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: tools is not an array");
  ToolCallGrammar g;
  g.mode = mode;
  g.parallel = parallel && only.empty();
  g.triggers = {"<tool_call>"};
  g.separator = "\n";  // between two calls, as Hermes' template writes them
  for (const json& t : tools) {
    const json& fn = t.value("function", json::object());
    const std::string name = fn.value("name", "");
    if (name.empty() || (!only.empty() && name != only)) continue;
    const json params = fn.contains("parameters") && !fn["parameters"].is_null() ? fn["parameters"] : json::object();
    // The JSON the model writes: {"name": "NAME", "arguments": ARGS}, as Hermes' template shows it.
    g.tags.push_back({"<tool_call>\n{\"name\": " + json(name).dump() + ", \"arguments\": ", params.dump(), "}\n</tool_call>", ArgsSyntax::JSON, ""});
  }
  if (g.tags.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: no tool named '" + only + "'");
  return tool_call_grammar(g);
}

}  // namespace oxyd::grammar
