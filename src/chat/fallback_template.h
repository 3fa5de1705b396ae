// Fallback chat templates for models that ship none (e.g. base GGUFs such as Gemma 3 270M): the
// turn format is recognised from the vocabulary alone — a vocabulary with <start_of_turn> and
// <end_of_turn> gets the Gemma turn format, one with <|im_start|> and <|im_end|> gets ChatML.
// Text-only: image parts are dropped. Not a replacement for a model's own template (no tools).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace oxyd::chat {

struct FallbackTemplate {
  std::string name;    // "gemma" | "chatml"
  std::string source;  // Jinja, rendered like any model template (apply_chat_template)
};

/// `has_token(text)`: whether the vocabulary holds `text` as one token. nullopt: no family matches.
std::optional<FallbackTemplate> fallback_chat_template(const std::function<bool(std::string_view)>& has_token);

}  // namespace oxyd::chat
