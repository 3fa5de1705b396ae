// tool_call_grammar (see tool_grammar.h): XGrammar structural-tag JSON.
#include "grammar/tool_grammar.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace oxyd::grammar {

using json = nlohmann::ordered_json;  // keeps the schema's property order (the grammar follows it)

GrammarSpec tool_call_grammar(const ToolCallGrammar& g) {
  if (g.tags.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: no tool");
  json tags = json::array();
  for (const ToolCallTag& t : g.tags) {
    json schema = json::parse(t.parameters_schema, nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded() || !(schema.is_object() || schema.is_boolean()))
      throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: parameters of '" + t.begin + "' is not a JSON Schema");
    if (schema.is_object() && schema.empty()) schema = json{{"type", "object"}};  // no parameters: an object
    tags.push_back({{"type", "tag"},
                    {"begin", t.begin},
                    {"content", {{"type", "json_schema"}, {"json_schema", schema}}},
                    {"end", t.end}});
  }
  const bool required = g.mode == ToolCallGrammar::Mode::REQUIRED;
  json format = {{"type", "triggered_tags"},
                 {"triggers", g.triggers},
                 {"tags", tags},
                 {"at_least_one", required},
                 {"stop_after_first", !g.parallel}};
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
  for (const json& t : tools) {
    const json& fn = t.value("function", json::object());
    const std::string name = fn.value("name", "");
    if (name.empty() || (!only.empty() && name != only)) continue;
    const json params = fn.contains("parameters") && !fn["parameters"].is_null() ? fn["parameters"] : json::object();
    // The JSON the model writes: {"name": "NAME", "arguments": ARGS}, as Hermes' template shows it.
    g.tags.push_back({"<tool_call>\n{\"name\": " + json(name).dump() + ", \"arguments\": ", params.dump(), "}\n</tool_call>"});
  }
  if (g.tags.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: no tool named '" + only + "'");
  return tool_call_grammar(g);
}

}  // namespace oxyd::grammar
