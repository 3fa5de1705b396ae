// apply_chat_template: what transformers' PreTrainedTokenizerBase.apply_chat_template does around
// the Jinja render — drop None-valued message keys, alias reasoning fields (reasoning_content /
// thinking / reasoning), pass messages, tools, documents, add_generation_prompt and the special
// tokens plus extra kwargs (enable_thinking, reasoning_effort, ...) as template variables.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja/template.h"

namespace oxyd::chat {

struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;      // null or array of JSON-schema tool definitions
  nlohmann::ordered_json documents;  // null or array
  bool add_generation_prompt = false;
  /// Special tokens (bos_token, eos_token, ...) and chat_template_kwargs; later keys win.
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
};

/// transformers' _normalize_chat_messages + _alias_reasoning_fields. Throws oxyd::Error when a
/// message is not an object or the conversation is empty.
nlohmann::ordered_json normalize_messages(const nlohmann::ordered_json& messages);

std::string apply_chat_template(const jinja::Template& tmpl, const ChatTemplateInputs& in,
                                const jinja::RenderOptions& opts = {});

}  // namespace oxyd::chat
