// Multi-turn tool use through the server's request normalisation (protocol_chat.cc) and our Jinja
// engine, against jinja2: an OpenAI body with an assistant turn holding tool_calls (JSON-string
// arguments, null content) and a role tool message with tool_call_id, rendered by real chat
// templates; the expected prompt is transformers' render of the same conversation normalised as
// protocol_chat.cc documents (tests/data/chat/tool_calls/multiturn.jsonl, tools/gen_tool_goldens.py).
#include <ctime>
#include <fstream>

#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/jinja/template.h"
#include "server/protocol.h"

namespace oxyd::server::protocol {
namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(ProtocolMultiTurn, ToolRoundTripRendersAsJinja2) {
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/chat/tool_calls/multiturn.jsonl");
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.empty()) continue;
    const json c = json::parse(line);
    const ChatRequest r = parse_chat_request(c["body"]);
    const std::string src = read(std::string(OXYD_TEST_DATA_DIR) + "/chat_templates/" + c["template"].get<std::string>());
    const auto tmpl = chat::jinja::Template::parse(src);
    chat::ChatTemplateInputs in;
    in.messages = r.messages;
    in.tools = r.tools;
    in.add_generation_prompt = r.add_generation_prompt;
    in.kwargs = {{"bos_token", c["bos_token"]}, {"eos_token", c["eos_token"]}};
    chat::jinja::RenderOptions opts;
    opts.hooks.now = [] {  // the generator pins strftime_now to 2025-07-26 (a Saturday)
      std::tm tm{};
      tm.tm_year = 2025 - 1900, tm.tm_mon = 6, tm.tm_mday = 26, tm.tm_wday = 6, tm.tm_yday = 206;
      return tm;
    };
    EXPECT_EQ(chat::apply_chat_template(tmpl, in, opts), c["expected"].get<std::string>()) << c["name"];
    ++n;
  }
  EXPECT_GE(n, 20);
}

}  // namespace
}  // namespace oxyd::server::protocol
