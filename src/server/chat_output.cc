// ChoiceOutput (see chat_output.h).
#include "server/chat_output.h"

namespace oxyd::server {

using protocol::json;
using Kind = chat::OutputEvent::Kind;

std::vector<protocol::ChatDelta> ChoiceOutput::feed(const std::string& text, size_t num_tokens, bool finished) {
  chat::OutputEvents ev = parser_->feed(text);
  if (finished)
    for (auto& e : parser_->finish()) ev.push_back(std::move(e));
  bool reasoning = ev.empty() ? last_reasoning_ : true;
  std::vector<protocol::ChatDelta> out;
  for (auto& e : ev) {
    protocol::ChatDelta d;
    reasoning = reasoning && e.kind == Kind::REASONING;
    switch (e.kind) {
      case Kind::CONTENT:
        content_ += e.text;
        d.content = std::move(e.text);
        break;
      case Kind::REASONING:
        reasoning_ += e.text;
        d.reasoning = std::move(e.text);
        break;
      case Kind::TOOL_START: {
        if (!tool_calls_.is_array()) tool_calls_ = json::array();
        const std::string id = short_ids_ ? protocol::new_id("").substr(0, 9) : "call_" + protocol::new_id("");
        tool_calls_.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", e.text}, {"arguments", ""}}}});
        d.tool_calls = json::array({{{"index", e.tool_index},
                                     {"id", id},
                                     {"type", "function"},
                                     {"function", {{"name", e.text}, {"arguments", ""}}}}});
        break;
      }
      case Kind::TOOL_ARGS: {
        json& args = tool_calls_.at(size_t(e.tool_index))["function"]["arguments"];
        args = args.get<std::string>() + e.text;
        d.tool_calls = json::array({{{"index", e.tool_index}, {"function", {{"arguments", e.text}}}}});
        break;
      }
    }
    out.push_back(std::move(d));
  }
  if (!ev.empty()) last_reasoning_ = ev.back().kind == Kind::REASONING;
  if (reasoning) reasoning_tokens_ += int64_t(num_tokens);
  return out;
}

std::string chat_finish_reason(const std::string& reason, const ChoiceOutput& out) {
  if (reason == "stop" && out.tool_calls().is_array() && !out.tool_calls().empty()) return "tool_calls";
  return reason;
}

}  // namespace oxyd::server
