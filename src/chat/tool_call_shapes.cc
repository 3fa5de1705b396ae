// tool_call_shapes (see tool_call_shapes.h); each begin/end is what that syntax's parser reads.
#include "chat/tool_call_shapes.h"

namespace oxyd::chat {

using json = nlohmann::ordered_json;

std::optional<std::vector<ToolCallShape>> tool_call_shapes(ToolSyntax syntax, const json& tools,
                                                           const std::string& only) {
  std::vector<ToolCallShape> out;
  if (!tools.is_array()) return out;
  for (const json& t : tools) {
    const json& fn = t["function"];
    const std::string name = fn["name"];
    if (!only.empty() && name != only) continue;
    const std::string q = json(name).dump();  // the name as a JSON string
    ToolCallShape s{name, "", "", fn.contains("parameters") ? fn["parameters"] : json{{"type", "object"}}};
    switch (syntax) {
      case ToolSyntax::TAG_JSON: s.begin = "<tool_call>\n{\"name\": " + q + ", \"arguments\": "; s.end = "}\n</tool_call>"; break;
      case ToolSyntax::PYTHON_TAG: s.begin = "{\"name\": " + q + ", \"parameters\": "; s.end = "}"; break;
      case ToolSyntax::BRACKET_LIST: s.begin = "[TOOL_CALLS] [{\"name\": " + q + ", \"arguments\": "; s.end = "}]"; break;
      case ToolSyntax::BRACKET_ARGS: s.begin = "[TOOL_CALLS]" + name + "[ARGS]"; break;
      case ToolSyntax::PIPE_LIST: s.begin = "<|tool_call|>[{\"name\": " + q + ", \"arguments\": "; s.end = "}]"; break;
      case ToolSyntax::HARMONY:
        s.begin = "<|channel|>commentary to=functions." + name + " <|constrain|>json<|message|>";
        s.end = "<|call|>";
        break;
      case ToolSyntax::TAG_XML:
      case ToolSyntax::CALL_COLON:
      case ToolSyntax::NONE: return std::nullopt;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace oxyd::chat
