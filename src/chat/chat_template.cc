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

// Same normalisation as normalize_messages, but straight into template values (no JSON copy).
static jinja::Value messages_value(const json& messages) {
  using jinja::Value;
  if (!messages.is_array()) throw Error(ErrorCode::INVALID_ARGUMENT, "messages must be a JSON array of objects");
  if (messages.empty())
    throw Error(ErrorCode::INVALID_ARGUMENT, "Cannot apply chat template to an empty conversation. Provide at least one message.");
  std::vector<Value> out;
  out.reserve(messages.size());
  for (const auto& m : messages) {
    if (!m.is_object())
      throw Error(ErrorCode::INVALID_ARGUMENT, "Chat messages should be dicts, but got " + m.dump() + ".");
    const json* reasoning = nullptr;
    for (const char* k : {"reasoning_content", "thinking", "reasoning"}) {
      auto f = m.find(k);
      if (f != m.end() && !f->is_null()) {
        reasoning = &*f;
        break;
      }
    }
    Value msg = Value::dict();
    auto& items = msg.dict_obj().items;
    items.reserve(m.size() + 2);
    Value r;
    if (reasoning) {
      r = Value::from_json(*reasoning);
      items.emplace_back(Value::string("thinking"), r);
    }
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (it.value().is_null()) continue;
      if (reasoning && it.key() == "thinking") {  // keeps the first position, takes the message's value
        items[0].second = Value::from_json(it.value());
        continue;
      }
      items.emplace_back(Value::string(it.key()), Value::from_json(it.value()));
    }
    if (reasoning) msg.dict_obj().set(Value::string("reasoning_content"), r);
    out.push_back(std::move(msg));
  }
  return Value::list(std::move(out));
}

std::string apply_chat_template(const jinja::Template& tmpl, const ChatTemplateInputs& in,
                                const jinja::RenderOptions& opts) {
  using jinja::Value;
  std::vector<std::pair<std::string, Value>> ctx;
  if (in.kwargs.is_object())
    for (auto it = in.kwargs.begin(); it != in.kwargs.end(); ++it)
      if (tmpl.uses(it.key())) ctx.emplace_back(it.key(), Value::from_json(it.value()));
  // Later entries win, like {**special_tokens, **kwargs, messages=..., tools=...} in transformers.
  ctx.emplace_back("messages", messages_value(in.messages));
  ctx.emplace_back("tools", Value::from_json(in.tools));
  ctx.emplace_back("documents", Value::from_json(in.documents));
  ctx.emplace_back("add_generation_prompt", Value::boolean(in.add_generation_prompt));
  return tmpl.render(ctx, opts);
}

}  // namespace oxyd::chat
