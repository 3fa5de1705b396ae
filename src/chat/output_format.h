// Which output parser (output_parser.h) a model gets, read from its chat template's text and its
// vocabulary: the template writes the tool-call syntax it taught the model (an assistant turn with
// tool_calls, or the instructions it puts in the system prompt), and <think> when it has
// reasoning. Never from a model name.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output_parser.h"

namespace oxyd::chat {

/// has_token(text): whether the vocabulary holds a token with that text (may be null).
OutputFormat detect_output_format(std::string_view template_src,
                                  const std::function<bool(std::string_view)>& has_token = nullptr);

/// The marker texts of a format's syntax: the server decodes with special tokens kept when one of
/// them is a special token (else it would never appear in the text).
std::vector<std::string> format_markers(const OutputFormat& format);

/// Whether a rendered prompt ends inside a think block the template opened (ends with `open`).
bool prompt_opens_think(std::string_view prompt, std::string_view open = "<think>");

}  // namespace oxyd::chat
