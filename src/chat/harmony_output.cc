// HarmonyFinalText (see harmony_output.h).
#include "chat/harmony_output.h"

namespace oxyd::chat {
namespace {

constexpr size_t kMaxMarker = 16;  // "<|constrain|>" is the longest harmony marker (13)

bool is_marker(std::string_view name) {
  for (const char* m : {"start", "end", "message", "channel", "constrain", "return", "call"})
    if (name == m) return true;
  return false;
}

// The channel a header names: the word after <|channel|> ("final", "analysis", "commentary to=…").
std::string channel_of(const std::string& header) {
  const size_t at = header.rfind("<|channel|>");
  if (at == std::string::npos) return "";
  size_t b = at + 11, e = b;
  while (e < header.size() && header[e] != ' ' && header[e] != '<' && header[e] != '\n') ++e;
  return header.substr(b, e - b);
}

}  // namespace

void HarmonyFinalText::plain(std::string_view text, std::string& out) {
  if (in_header_) header_ += text;
  else if (shown_) out += text;
}

void HarmonyFinalText::marker(std::string_view name) {
  if (name == "message") {
    const std::string ch = channel_of(header_);
    shown_ = ch.empty() || ch == "final";
    in_header_ = false, saw_message_ = true, header_.clear();
  } else if (name == "start" || name == "end" || name == "return" || name == "call") {
    in_header_ = true, shown_ = false, header_.clear();
  } else if (in_header_) {  // channel, constrain: part of the header
    header_ += "<|", header_ += name, header_ += "|>";
  }
}

std::string HarmonyFinalText::feed(std::string_view text) {
  raw_ += text;
  std::string s = held_ + std::string(text), out;
  held_.clear();
  size_t i = 0;
  while (i < s.size()) {
    const size_t lt = s.find("<|", i);
    if (lt == std::string::npos) {
      // A trailing '<' may start a marker.
      const size_t end = s.back() == '<' ? s.size() - 1 : s.size();
      plain(std::string_view(s).substr(i, end - i), out);
      if (end < s.size()) held_ = "<";
      break;
    }
    plain(std::string_view(s).substr(i, lt - i), out);
    const size_t gt = s.find("|>", lt + 2);
    if (gt == std::string::npos) {
      if (s.size() - lt < kMaxMarker) held_ = s.substr(lt);  // wait for the rest
      else plain(std::string_view(s).substr(lt), out);
      break;
    }
    const std::string_view name = std::string_view(s).substr(lt + 2, gt - lt - 2);
    if (name.size() < kMaxMarker && is_marker(name)) {
      marker(name);
    } else {
      plain(std::string_view(s).substr(lt, 2), out);  // "<|" of plain text; rescan after it
      i = lt + 2;
      continue;
    }
    i = gt + 2;
  }
  return out;
}

std::string HarmonyFinalText::finish() {
  std::string out;
  const std::string held = std::move(held_);
  held_.clear();
  plain(held, out);
  if (!saw_message_) return raw_;
  return out;
}

}  // namespace oxyd::chat
