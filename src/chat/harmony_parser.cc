// Harmony output (OpenAI's format for gpt-oss) → events. The generated text (decoded with the
// markers kept) is a run of messages `HEADER<|message|>BODY<|end|>` where each later message
// starts with <|start|> (the first one's `<|start|>assistant` is in the prompt) and the last ends
// in <|call|> or <|return|> (stop tokens: not in the text). The header names the channel
// (`<|channel|>analysis`) and maybe a recipient (`to=functions.NAME`, before or after the channel).
//   analysis → reasoning; final, or no channel → content; a recipient functions.NAME → a tool call
//   NAME whose arguments are the body; commentary without a recipient (a preamble) → content;
//   another recipient (built-in tools: browser, python) → dropped.
// An output that never opens a message (the model did not speak harmony) is all content.
// openai-harmony's parse_messages_from_completion_tokens is the oracle (tools/gen_tool_goldens.py).
#include "chat/output_parser_detail.h"
#include "chat/output_parsers.h"

namespace oxyd::chat {

using namespace detail;

namespace {

const std::vector<std::string_view> kBodyEnd = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};

class HarmonyParser final : public OutputParser {
  enum class Body { CONTENT, REASONING, TOOL, DROP };
  enum class State { HEADER, BODY };

  bool step(bool at_end) override {
    const std::string_view s = rest();
    if (state_ == State::HEADER) {
      const size_t msg = s.find("<|message|>");
      if (msg == std::string_view::npos) {
        if (at_end) {
          if (!saw_message_) sink_.content(s);  // not harmony: nothing is lost
          pos_ = buf_.size();
        }
        return false;
      }
      open(s.substr(0, msg));
      pos_ += msg + 11, state_ = State::BODY, saw_message_ = true;
      return true;
    }
    const MarkerHit hit = find_marker(s, kBodyEnd);
    const size_t take = hit.at != std::string_view::npos ? hit.at : s.size() - (at_end ? 0 : partial_suffix(s, kBodyEnd));
    body(s.substr(0, take));
    pos_ += take;
    if (hit.at == std::string_view::npos) return false;
    if (hit.which != 3) pos_ += kBodyEnd[hit.which].size();  // <|start|> is read as part of the header
    state_ = State::HEADER;
    return true;
  }

  // A header: "[<|start|>]ROLE[ to=R][<|channel|>CHANNEL[ to=R]][ <|constrain|>json]".
  void open(std::string_view h) {
    if (const size_t st = h.rfind("<|start|>"); st != std::string_view::npos) h.remove_prefix(st + 9);
    std::string channel, recipient;
    if (const size_t c = h.find("<|channel|>"); c != std::string_view::npos) {
      size_t b = c + 11, e = b;
      while (e < h.size() && !is_ws(h[e]) && h[e] != '<') ++e;
      channel = std::string(h.substr(b, e - b));
    }
    if (const size_t to = h.find("to="); to != std::string_view::npos) {
      size_t b = to + 3, e = b;
      while (e < h.size() && !is_ws(h[e]) && h[e] != '<') ++e;
      recipient = std::string(h.substr(b, e - b));
    }
    constexpr std::string_view kFn = "functions.";
    if (!recipient.empty()) {
      if (recipient.compare(0, kFn.size(), kFn) == 0 && recipient.size() > kFn.size()) {
        kind_ = Body::TOOL;
        sink_.tool_start(recipient.substr(kFn.size()));
      } else {
        kind_ = Body::DROP;
      }
    } else {
      kind_ = channel == "analysis" ? Body::REASONING : Body::CONTENT;
    }
  }

  void body(std::string_view t) {
    switch (kind_) {
      case Body::CONTENT: sink_.content(t); break;
      case Body::REASONING: sink_.reasoning(t); break;
      case Body::TOOL: sink_.tool_args(t); break;
      case Body::DROP: break;
    }
  }

  State state_ = State::HEADER;
  Body kind_ = Body::CONTENT;
  bool saw_message_ = false;
};

}  // namespace

std::unique_ptr<OutputParser> make_harmony_parser(const ParserOptions&) { return std::make_unique<HarmonyParser>(); }

}  // namespace oxyd::chat
