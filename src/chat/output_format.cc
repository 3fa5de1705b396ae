// detect_output_format (see output_format.h).
#include "chat/output_format.h"

#include "chat/output_parser_detail.h"

namespace oxyd::chat {

namespace {

bool has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

}  // namespace

OutputFormat detect_output_format(std::string_view t, const std::function<bool(std::string_view)>& has_token) {
  auto vocab = [&](std::string_view tok) { return has_token && has_token(tok); };
  OutputFormat f;
  f.think_tags = has(t, "</think>");
  if (has(t, "<|channel>thought") && has(t, "<channel|>")) {  // reasoning as a "thought" channel
    f.think_tags = true;
    f.think_open = "<|channel>thought", f.think_close = "<channel|>";
  }
  if (has(t, "<|channel|>") && has(t, "<|message|>")) {
    f.tools = ToolSyntax::HARMONY;
    f.think_tags = false;
  } else if (has(t, "<function=") && has(t, "<parameter=")) {
    f.tools = ToolSyntax::TAG_XML;
  } else if (has(t, "[TOOL_CALLS]")) {
    f.tools = has(t, "[ARGS]") || vocab("[ARGS]") ? ToolSyntax::BRACKET_ARGS : ToolSyntax::BRACKET_LIST;
  } else if (has(t, "<|tool_call>call:")) {
    f.tools = ToolSyntax::CALL_COLON;
  } else if (has(t, "<|tool_call|>")) {
    f.tools = ToolSyntax::PIPE_LIST;
  } else if (has(t, "<tool_call>")) {
    f.tools = ToolSyntax::TAG_JSON;
  } else if (has(t, "<|python_tag|>") || (has(t, "{\"name\": ") && has(t, "\"parameters\": "))) {
    f.tools = ToolSyntax::PYTHON_TAG;
  }
  return f;
}

std::vector<std::string> format_markers(const OutputFormat& f) {
  std::vector<std::string> m;
  switch (f.tools) {
    case ToolSyntax::TAG_JSON:
    case ToolSyntax::TAG_XML: m = {"<tool_call>", "</tool_call>"}; break;
    case ToolSyntax::PYTHON_TAG: m = {"<|python_tag|>"}; break;
    case ToolSyntax::BRACKET_LIST: m = {"[TOOL_CALLS]"}; break;
    case ToolSyntax::BRACKET_ARGS: m = {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}; break;
    case ToolSyntax::PIPE_LIST: m = {"<|tool_call|>"}; break;
    case ToolSyntax::CALL_COLON: m = {"<|tool_call>", "<tool_call|>", "<|\"|>"}; break;
    case ToolSyntax::HARMONY: m = {"<|channel|>", "<|message|>", "<|start|>", "<|end|>"}; break;
    case ToolSyntax::NONE: break;
  }
  if (f.think_tags) m.insert(m.end(), {f.think_open, f.think_close});
  return m;
}

bool prompt_opens_think(std::string_view p, std::string_view kOpen) {
  while (!p.empty() && detail::is_ws(p.back())) p.remove_suffix(1);
  return p.size() >= kOpen.size() && p.substr(p.size() - kOpen.size()) == kOpen;
}

}  // namespace oxyd::chat
