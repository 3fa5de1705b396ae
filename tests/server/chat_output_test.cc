// Streaming tool calls and reasoning at the serving layer: scripted token streams (the golden
// corpus outputs of tests/data/chat/tool_calls, cut into pieces as a decoder would emit them) go
// through server::ChoiceOutput and protocol::chat_chunk; the chunks, accumulated the way the openai
// SDK does (strings concatenated per field, tool calls merged by index), give the same message as
// the non-streamed chat.completion from the same stream; each call's id, type and name come once,
// in its first delta; arguments come as they are generated; finish_reason is "tool_calls".
#include <fstream>

#include <gtest/gtest.h>

#include "server/chat_output.h"

namespace oxyd::server {
namespace {

using protocol::json;

std::vector<json> load_cases() {
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/chat/tool_calls/cases.jsonl");
  std::vector<json> out;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

chat::OutputFormat format_of(const json& c) {
  static const std::map<std::string, chat::ToolSyntax> k = {
      {"TAG_JSON", chat::ToolSyntax::TAG_JSON},         {"TAG_XML", chat::ToolSyntax::TAG_XML},
      {"PYTHON_TAG", chat::ToolSyntax::PYTHON_TAG},     {"BRACKET_LIST", chat::ToolSyntax::BRACKET_LIST},
      {"BRACKET_ARGS", chat::ToolSyntax::BRACKET_ARGS}, {"PIPE_LIST", chat::ToolSyntax::PIPE_LIST},
      {"HARMONY", chat::ToolSyntax::HARMONY},           {"CALL_COLON", chat::ToolSyntax::CALL_COLON}};
  chat::OutputFormat f;
  f.tools = k.at(c["syntax"]);
  f.think_tags = c["think"];
  f.think_open = c.value("think_open", "<think>");
  f.think_close = c.value("think_close", "</think>");
  return f;
}

ChoiceOutput output_for(const json& c) {
  chat::ParserOptions o;
  o.reasoning_open = c["reasoning_open"];
  o.tools = c["tools"];
  const auto f = format_of(c);
  return ChoiceOutput(chat::make_output_parser(f, o),
                      f.tools == chat::ToolSyntax::BRACKET_ARGS || f.tools == chat::ToolSyntax::BRACKET_LIST);
}

// The openai SDK's accumulate_delta (openai/lib/streaming/chat/_completions.py): strings are
// concatenated, "index" and "type" replaced, lists of objects merged by their "index".
void accumulate(json& acc, const json& delta) {
  for (auto it = delta.begin(); it != delta.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (!acc.contains(k) || acc[k].is_null() || k == "index" || k == "type") {
      acc[k] = v;
    } else if (acc[k].is_string() && v.is_string()) {
      acc[k] = acc[k].get<std::string>() + v.get<std::string>();
    } else if (acc[k].is_object() && v.is_object()) {
      accumulate(acc[k], v);
    } else if (acc[k].is_array() && v.is_array()) {
      for (const json& e : v) {
        bool merged = false;
        for (json& a : acc[k])
          if (a["index"] == e["index"]) accumulate(a, e), merged = true;
        if (!merged) acc[k].push_back(e);
      }
    }
  }
}

struct Streamed {
  json message = json::object();
  std::vector<json> tool_deltas;  // every delta.tool_calls entry, in order
  std::string finish;
  size_t args_chunks_before_last = 0;
};

Streamed stream(const json& c, size_t piece) {
  ChoiceOutput out = output_for(c);
  const std::string text = c["output"];
  Streamed s;
  std::vector<json> chunks;
  // Pieces end on character boundaries, as the detokenizer emits them.
  for (size_t at = 0, n = 0; at < text.size(); at += n) {
    n = std::min(piece, text.size() - at);
    while (at + n < text.size() && (static_cast<unsigned char>(text[at + n]) & 0xC0) == 0x80) ++n;
    const bool last = at + n >= text.size();
    for (auto& d : out.feed(text.substr(at, n), 1, last))
      chunks.push_back(protocol::chat_chunk("id", 0, "m", d, false));
    if (last) {
      protocol::ChatDelta f;
      f.finish_reason = chat_finish_reason("stop", out);
      chunks.push_back(protocol::chat_chunk("id", 0, "m", f, false));
    } else {
      for (const json& ch : chunks)
        if (ch["choices"][0]["delta"].contains("tool_calls")) ++s.args_chunks_before_last;
    }
  }
  for (const json& ch : chunks) {
    const json& choice = ch["choices"][0];
    accumulate(s.message, choice["delta"]);
    if (choice["delta"].contains("tool_calls"))
      for (const json& t : choice["delta"]["tool_calls"]) s.tool_deltas.push_back(t);
    if (!choice["finish_reason"].is_null()) s.finish = choice["finish_reason"];
  }
  return s;
}

json whole(const json& c) {
  ChoiceOutput out = output_for(c);
  out.feed(c["output"], 1, true);
  protocol::ChatChoice ch;
  ch.content = out.content();
  ch.reasoning = out.reasoning();
  ch.tool_calls = out.tool_calls();
  ch.finish_reason = chat_finish_reason("stop", out);
  return protocol::chat_completion("id", 0, "m", {ch}, {})["choices"][0];
}

TEST(ChatOutputStream, DeltasAccumulateToTheWholeMessage) {
  const auto cases = load_cases();
  ASSERT_GE(cases.size(), 80u);
  for (const json& c : cases) {
    const json w = whole(c);
    const json& wm = w["message"];
    for (size_t piece : {1, 3, 7, 1000}) {
      const Streamed s = stream(c, piece);
      const std::string name = c["name"].get<std::string>() + " piece " + std::to_string(piece);
      EXPECT_EQ(s.finish, w["finish_reason"]) << name;
      EXPECT_EQ(s.message.value("content", json("")), wm["content"].is_null() ? json("") : wm["content"]) << name;
      EXPECT_EQ(s.message.value("reasoning_content", json()), wm.value("reasoning_content", json())) << name;
      EXPECT_EQ(s.message.value("reasoning", json()), wm.value("reasoning", json())) << name;
      const json sc = s.message.value("tool_calls", json::array()), wc = wm.value("tool_calls", json::array());
      ASSERT_EQ(sc.size(), wc.size()) << name;
      for (size_t i = 0; i < wc.size(); ++i) {
        EXPECT_EQ(sc[i]["index"], i) << name;
        EXPECT_EQ(sc[i]["type"], "function") << name;
        EXPECT_EQ(sc[i]["function"]["name"], wc[i]["function"]["name"]) << name;
        EXPECT_EQ(sc[i]["function"]["arguments"], wc[i]["function"]["arguments"]) << name;
        const size_t id_len = format_of(c).tools == chat::ToolSyntax::BRACKET_ARGS ||
                                      format_of(c).tools == chat::ToolSyntax::BRACKET_LIST
                                  ? 9
                                  : 29;
        EXPECT_EQ(sc[i]["id"].get<std::string>().size(), id_len) << name;
      }
      // id, type and name once per call, in its first delta.
      std::set<int> opened;
      for (const json& t : s.tool_deltas) {
        const int idx = t["index"];
        const bool first = opened.insert(idx).second;
        EXPECT_EQ(t.contains("id"), first) << name;
        EXPECT_EQ(t.contains("type"), first) << name;
        EXPECT_EQ(t["function"].contains("name"), first) << name;
      }
    }
  }
}

TEST(ChatOutputStream, ArgumentsStreamAsGenerated) {
  for (const json& c : load_cases()) {
    if (c["name"] != "Qwen3-Coder/parallel" && c["name"] != "harmony/2") continue;
    const Streamed s = stream(c, 2);
    EXPECT_GE(s.tool_deltas.size(), 5u) << c["name"];  // many fragments, not one at the end
    EXPECT_EQ(s.finish, "tool_calls");
  }
}

TEST(ChatOutputStream, ReasoningTokensCountReasoningChunks) {
  chat::OutputFormat f;
  f.think_tags = true;
  ChoiceOutput out(chat::make_output_parser(f, {}), false);
  out.feed("<think>", 1, false);  // held, then read as the opener: no text yet
  out.feed("a b", 2, false);
  out.feed(" c", 1, false);
  out.feed("</think>", 1, false);
  out.feed("Hi", 1, true);
  EXPECT_EQ(out.reasoning(), "a b c");
  EXPECT_EQ(out.content(), "Hi");
  EXPECT_EQ(out.reasoning_tokens(), 4);  // "a b", " c" and the closing tag; not the opener (no text yet)
}

}  // namespace
}  // namespace oxyd::server
