// tool_call_shapes (see tool_call_shapes.h); each begin/end is what that syntax's parser reads.
#include "chat/tool_call_shapes.h"

namespace oxyd::chat {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kHarmonyCall = "<|channel|>commentary to=";
constexpr const char* kHarmonyHeaderCall = " to=functions.";

}  // namespace

std::optional<std::vector<ToolCallShape>> tool_call_shapes(ToolSyntax syntax, const json& tools, const std::string& only,
                                                           bool any_opener) {
  std::vector<ToolCallShape> out;
  if (syntax == ToolSyntax::NONE) return std::nullopt;
  if (!tools.is_array()) return out;
  for (const json& t : tools) {
    const json& fn = t["function"];
    const std::string name = fn["name"];
    if (!only.empty() && name != only) continue;
    const std::string q = json(name).dump();  // the name as a JSON string
    ToolCallShape s{name, "", "", fn.contains("parameters") ? fn["parameters"] : json{{"type", "object"}},
                    ArgsForm::JSON, ""};
    switch (syntax) {
      case ToolSyntax::TAG_JSON: s.begin = "<tool_call>\n{\"name\": " + q + ", \"arguments\": "; s.end = "}\n</tool_call>"; break;
      case ToolSyntax::TAG_XML:  // as the template writes it: "<parameter=P>\nV\n</parameter>\n" each
        s.begin = "<tool_call>\n<function=" + name + ">", s.end = "</function>\n</tool_call>";
        s.args = ArgsForm::XML_PARAMETERS;
        break;
      case ToolSyntax::PYTHON_TAG: s.begin = "{\"name\": " + q + ", \"parameters\": "; s.end = "}"; break;
      case ToolSyntax::BRACKET_LIST: s.begin = "[TOOL_CALLS] [{\"name\": " + q + ", \"arguments\": "; s.end = "}]"; break;
      case ToolSyntax::BRACKET_ARGS: s.begin = "[TOOL_CALLS]" + name + "[ARGS]"; break;
      case ToolSyntax::PIPE_LIST: s.begin = "<|tool_call|>[{\"name\": " + q + ", \"arguments\": "; s.end = "}]"; break;
      case ToolSyntax::CALL_COLON:  // the template's call:NAME{k:V,...}, keys dictsorted
        s.begin = "<|tool_call>call:" + name, s.end = "<tool_call|>";
        s.args = ArgsForm::BARE_KEYS, s.quote = "<|\"|>";
        break;
      case ToolSyntax::HARMONY:
        s.begin = std::string(kHarmonyCall) + "functions." + name + " <|constrain|>json<|message|>";
        s.end = "<|call|>";
        break;
      case ToolSyntax::NONE: return std::nullopt;
    }
    if (any_opener && syntax == ToolSyntax::HARMONY) {
      // The recipient in the role part, as the template renders a call: "assistant to=functions.N<|channel|>commentary json<|message|>".
      ToolCallShape h = s;
      h.begin = std::string(kHarmonyHeaderCall) + name + "<|channel|>commentary json<|message|>";
      out.push_back(std::move(h));
    }
    if (any_opener && syntax == ToolSyntax::PYTHON_TAG) {
      ToolCallShape p = s;
      p.begin = "<|python_tag|>" + s.begin;
      out.push_back(std::move(p));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> call_triggers(ToolSyntax s) {
  switch (s) {
    case ToolSyntax::TAG_JSON:
    case ToolSyntax::TAG_XML: return {"<tool_call>"};
    case ToolSyntax::PYTHON_TAG: return {"<|python_tag|>", "{\"name\": "};
    case ToolSyntax::BRACKET_LIST:
    case ToolSyntax::BRACKET_ARGS: return {"[TOOL_CALLS]"};
    case ToolSyntax::PIPE_LIST: return {"<|tool_call|>"};
    case ToolSyntax::CALL_COLON: return {"<|tool_call>"};
    case ToolSyntax::HARMONY: return {kHarmonyCall, kHarmonyHeaderCall};
    case ToolSyntax::NONE: break;
  }
  return {};
}

}  // namespace oxyd::chat
