// apply_chat_template (see chat_template.h); mirrors transformers 5.x chat_template_utils.
#include "chat/chat_template.h"

namespace oxyd::chat {

using json = nlohmann::ordered_json;

json normalize_messages(const json& messages) {
  if (!messages.is_array()) throw Error(ErrorCode::INVALID_ARGUMENT, "messages must be a JSON array of objects");
  if (messages.empty())
    throw Error(ErrorCode::INVALID_ARGUMENT, "Cannot apply chat template to an empty conversation. Provide at least one message.");
  json out = json::array();
  for (const auto& m : messages) {
    if (!m.is_object())
      throw Error(ErrorCode::INVALID_ARGUMENT, "Chat messages should be dicts, but got " + m.dump() + ".");
    json msg = json::object();
    for (auto it = m.begin(); it != m.end(); ++it)
      if (!it.value().is_null()) msg[it.key()] = it.value();
    // {"thinking": r, **message, "reasoning_content": r} for the first present reasoning field.
    const json* reasoning = nullptr;
    for (const char* k : {"reasoning_content", "thinking", "reasoning"}) {
      auto f = msg.find(k);
      if (f != msg.end() && !f->is_null()) {
        reasoning = &*f;
        break;
      }
    }
    if (reasoning) {
      json r = *reasoning;
      json aliased = json::object();
      aliased["thinking"] = r;
      for (auto it = msg.begin(); it != msg.end(); ++it) aliased[it.key()] = it.value();
      aliased["reasoning_content"] = r;
      msg = std::move(aliased);
    }
    out.push_back(std::move(msg));
  }
  return out;
}

std::string apply_chat_template(const jinja::Template& tmpl, const ChatTemplateInputs& in,
                                const jinja::RenderOptions& opts) {
  json ctx = json::object();
  if (in.kwargs.is_object())
    for (auto it = in.kwargs.begin(); it != in.kwargs.end(); ++it) ctx[it.key()] = it.value();
  ctx["messages"] = normalize_messages(in.messages);
  ctx["tools"] = in.tools;
  ctx["documents"] = in.documents;
  ctx["add_generation_prompt"] = in.add_generation_prompt;
  return tmpl.render(ctx, opts);
}

}  // namespace oxyd::chat
