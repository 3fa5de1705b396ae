// The output parsers (chat/output_parser.h) against the golden corpus
// tests/data/chat/tool_calls/cases.jsonl (tools/gen_tool_goldens.py: real chat templates rendered
// by jinja2, openai-harmony's parser, and hand-written spec cases). Each case: the message from the
// whole output equals the expected OpenAI message; the message from the output split at every
// byte into two pieces, and fed byte by byte, equals it too (what streaming concatenates).
// And each template of the corpus is detected as the syntax its cases use.
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "chat/output_format.h"
#include "chat/output_parser.h"
#include "chat/tool_call_shapes.h"

namespace oxyd::chat {
namespace {

using json = nlohmann::ordered_json;

std::vector<json> load_cases() {
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/chat/tool_calls/cases.jsonl");
  std::vector<json> out;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

ToolSyntax syntax_of(const std::string& s) {
  static const std::vector<std::pair<std::string, ToolSyntax>> k = {
      {"NONE", ToolSyntax::NONE},           {"TAG_JSON", ToolSyntax::TAG_JSON},
      {"TAG_XML", ToolSyntax::TAG_XML},     {"PYTHON_TAG", ToolSyntax::PYTHON_TAG},
      {"BRACKET_LIST", ToolSyntax::BRACKET_LIST}, {"BRACKET_ARGS", ToolSyntax::BRACKET_ARGS},
      {"PIPE_LIST", ToolSyntax::PIPE_LIST}, {"HARMONY", ToolSyntax::HARMONY},
      {"CALL_COLON", ToolSyntax::CALL_COLON}};
  for (const auto& [n, v] : k)
    if (n == s) return v;
  ADD_FAILURE() << "unknown syntax " << s;
  return ToolSyntax::NONE;
}

std::unique_ptr<OutputParser> parser_for(const json& c) {
  OutputFormat f;
  f.tools = syntax_of(c["syntax"]);
  f.think_tags = c["think"].get<bool>();
  f.think_open = c.value("think_open", "<think>");
  f.think_close = c.value("think_close", "</think>");
  ParserOptions o;
  o.reasoning_open = c["reasoning_open"].get<bool>();
  o.tools = c["tools"];
  return make_output_parser(f, o);
}

std::vector<std::string> ids_of(const json& c) {
  std::vector<std::string> ids;
  for (const auto& tc : c["expected"].value("tool_calls", json::array())) ids.push_back(tc["id"]);
  return ids;
}

json parse_pieces(const json& c, const std::vector<std::string>& pieces) {
  auto p = parser_for(c);
  OutputEvents all;
  for (const auto& s : pieces)
    for (auto& e : p->feed(s)) all.push_back(std::move(e));
  for (auto& e : p->finish()) all.push_back(std::move(e));
  return build_message(all, ids_of(c));
}

// Arguments compare as JSON values when the expected text is JSON, else as text.
void expect_message(const json& got, const json& want, const std::string& name) {
  EXPECT_EQ(got["content"], want["content"]) << name;
  EXPECT_EQ(got.value("reasoning_content", json()), want.value("reasoning_content", json())) << name;
  const json gc = got.value("tool_calls", json::array()), wc = want.value("tool_calls", json::array());
  ASSERT_EQ(gc.size(), wc.size()) << name << "\n" << got.dump();
  for (size_t i = 0; i < wc.size(); ++i) {
    EXPECT_EQ(gc[i]["function"]["name"], wc[i]["function"]["name"]) << name;
    const std::string ga = gc[i]["function"]["arguments"], wa = wc[i]["function"]["arguments"];
    // Unordered: key order is the model's, not part of the value.
    const nlohmann::json wj = nlohmann::json::parse(wa, nullptr, false), gj = nlohmann::json::parse(ga, nullptr, false);
    if (!wj.is_discarded()) EXPECT_EQ(gj, wj) << name << ": " << ga << " vs " << wa;
    else EXPECT_EQ(ga, wa) << name;
  }
}

TEST(OutputParserGolden, WholeOutputGivesExpectedMessage) {
  const auto cases = load_cases();
  ASSERT_GE(cases.size(), 80u);
  for (const auto& c : cases) expect_message(parse_pieces(c, {c["output"]}), c["expected"], c["name"]);
}

TEST(OutputParserGolden, EverySplitGivesTheSameMessage) {
  for (const auto& c : load_cases()) {
    const std::string out = c["output"];
    const json whole = parse_pieces(c, {out});
    for (size_t k = 0; k <= out.size(); ++k) {
      const json m = parse_pieces(c, {out.substr(0, k), out.substr(k)});
      ASSERT_EQ(m, whole) << c["name"] << " split at " << k;
    }
    std::vector<std::string> bytes;
    for (char ch : out) bytes.emplace_back(1, ch);
    ASSERT_EQ(parse_pieces(c, bytes), whole) << c["name"] << " byte by byte";
  }
}

TEST(OutputParserGolden, ArgumentsStreamBeforeTheCallEnds) {
  // A call's arguments come out as they are generated, not at its end.
  for (const auto& c : load_cases()) {
    if (c["name"] != "Qwen-Qwen2.5-7B-Instruct/one") continue;
    auto p = parser_for(c);
    const std::string out = c["output"];
    const size_t mid = out.find("Paris");
    ASSERT_NE(mid, std::string::npos);
    const OutputEvents ev = p->feed(out.substr(0, mid + 3));
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].kind, OutputEvent::Kind::TOOL_START);
    EXPECT_EQ(ev[0].text, "get_weather");
    EXPECT_EQ(ev[1].kind, OutputEvent::Kind::TOOL_ARGS);
    EXPECT_EQ(ev[1].text, "{\"city\": \"Par");
    return;
  }
  FAIL() << "case not found";
}

TEST(OutputFormat, TemplatesOfTheCorpusAreDetected) {
  std::set<std::string> seen;
  for (const auto& c : load_cases()) {
    const std::string src = c["source"];
    if (src.rfind("template:", 0) != 0 || !seen.insert(src).second) continue;
    std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/chat_templates/" + src.substr(9));
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << src;
    const OutputFormat got = detect_output_format(text);
    EXPECT_EQ(got.tools, syntax_of(c["syntax"])) << src;
    EXPECT_EQ(got.think_tags, c["think"].get<bool>()) << src;
  }
  EXPECT_GE(seen.size(), 10u);
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/chat_templates/openai-gpt-oss-120b.jinja");
  const std::string harmony((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(detect_output_format(harmony).tools, ToolSyntax::HARMONY);
  std::ifstream g(std::string(OXYD_TEST_DATA_DIR) + "/chat_templates/google-gemma-3-it.jinja");
  const std::string plain((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_EQ(detect_output_format(plain).tools, ToolSyntax::NONE);
}

// A shape (what forced decoding would write) filled with arguments reads back as that call; the
// XML and bare-key syntaxes with the arguments as their templates write them (Qwen3-Coder.jinja,
// google-gemma-4-it.jinja), and XML raw strings also as the grammar may leave them (no newlines).
TEST(ToolCallShapes, ParsersReadEveryShapeBack) {
  const json tools = load_cases().front()["tools"];
  const std::string args = "{\"city\": \"Paris\", \"days\": 3}";
  const std::map<ArgsForm, std::vector<std::string>> texts = {
      {ArgsForm::JSON, {args}},
      {ArgsForm::XML_PARAMETERS,
       {"\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n",
        "\n<parameter=city>Paris</parameter>\n<parameter=days>\n3\n</parameter>\n"}},
      {ArgsForm::BARE_KEYS, {"{city:<|\"|>Paris<|\"|>,days:3}"}}};
  for (ToolSyntax syn : {ToolSyntax::TAG_JSON, ToolSyntax::PYTHON_TAG, ToolSyntax::BRACKET_LIST, ToolSyntax::BRACKET_ARGS,
                         ToolSyntax::PIPE_LIST, ToolSyntax::HARMONY, ToolSyntax::TAG_XML, ToolSyntax::CALL_COLON}) {
    for (const bool any_opener : {false, true}) {
      const auto shapes = tool_call_shapes(syn, tools, "get_weather", any_opener);
      ASSERT_TRUE(shapes && !shapes->empty());
      EXPECT_EQ(shapes->size(), any_opener && (syn == ToolSyntax::HARMONY || syn == ToolSyntax::PYTHON_TAG) ? 2u : 1u);
      for (const ToolCallShape& s : *shapes) {
        EXPECT_EQ(s.schema, tools[0]["function"]["parameters"]);
        bool triggered = false;
        for (const std::string& t : call_triggers(syn)) triggered |= s.begin.rfind(t, 0) == 0;
        EXPECT_TRUE(triggered) << s.begin;
        for (const std::string& a : texts.at(s.args)) {
          OutputFormat f;
          f.tools = syn;
          ParserOptions o;
          o.tools = tools;
          auto p = make_output_parser(f, o);
          // <|call|> is a stop token: not in the generated text.
          const std::string end = syn == ToolSyntax::HARMONY ? "" : s.end;
          OutputEvents ev = p->feed(s.begin + a + end);
          for (auto& e : p->finish()) ev.push_back(e);
          const json m = build_message(ev, {"id"});
          ASSERT_EQ(m["tool_calls"].size(), 1u) << int(syn) << m.dump();
          EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
          EXPECT_EQ(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()), json::parse(args)) << a;
          EXPECT_TRUE(m["content"].is_null()) << m.dump();
        }
      }
    }
  }
  EXPECT_FALSE(tool_call_shapes(ToolSyntax::NONE, tools).has_value());
  EXPECT_EQ(tool_call_shapes(ToolSyntax::TAG_JSON, tools)->size(), 2u);
}

TEST(OutputFormat, PromptOpensThink) {
  EXPECT_TRUE(prompt_opens_think("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(prompt_opens_think("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(prompt_opens_think("<|im_start|>assistant\n"));
}

}  // namespace
}  // namespace oxyd::chat
