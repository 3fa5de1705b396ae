// tool_choice "auto" over each syntax's shapes and triggers (chat/tool_call_shapes.h), as
// server/tool_choice.cc builds it: text stays free, and every way the template shows a call being
// opened starts the constrained call: harmony's recipient in the header (the gpt-oss template's
// "<|start|>assistant to=functions.N<|channel|>commentary json<|message|>", the prompt ending at
// "<|start|>assistant") or after the channel, Llama 3's <|python_tag|> or bare {"name": ...}.
#include <gtest/gtest.h>

#include "chat/tool_call_shapes.h"
#include "grammar/tool_grammar.h"
#include "byte_vocabulary.h"

namespace oxyd::grammar {
namespace {

using json = nlohmann::ordered_json;

const json kTools = json::parse(R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
     "properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["city","days"]}}}])");

GrammarSpec auto_grammar(chat::ToolSyntax syntax) {
  ToolCallGrammar g;
  g.mode = ToolCallGrammar::Mode::AUTO;
  g.parallel = false;
  g.triggers = chat::call_triggers(syntax);
  const auto shapes = chat::tool_call_shapes(syntax, kTools, "", /*any_opener=*/true);
  for (const chat::ToolCallShape& s : *shapes)
    g.tags.push_back({s.begin, s.schema.dump(), s.end, ArgsSyntax::JSON, ""});
  return tool_call_grammar(g);
}

bool complete(const GrammarCompiler& c, const GrammarSpec& s, const std::string& text) {
  Matcher m(c.compile(s), {});
  return m.accept_string(text) && m.is_completed();
}
bool prefix_ok(const GrammarCompiler& c, const GrammarSpec& s, const std::string& text) {
  Matcher m(c.compile(s), {});
  return m.accept_string(text);
}

TEST(ToolTriggers, HarmonyRecipientInTheHeader) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = auto_grammar(chat::ToolSyntax::HARMONY);
  const std::string args = R"({"city": "Paris", "days": 2})";
  EXPECT_TRUE(complete(c, s, " to=functions.get_weather<|channel|>commentary json<|message|>" + args + "<|call|>"));
  EXPECT_TRUE(complete(c, s, "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=functions.get_weather"
                             "<|channel|>commentary json<|message|>" + args + "<|call|>"));
  EXPECT_TRUE(complete(c, s, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + args + "<|call|>"));
  EXPECT_TRUE(complete(c, s, "<|channel|>final<|message|>It is sunny."));
  EXPECT_FALSE(prefix_ok(c, s, " to=functions.get_time"));
  EXPECT_FALSE(prefix_ok(c, s, " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": 3"));
  EXPECT_FALSE(prefix_ok(c, s, "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"days\": 0"));
}

TEST(ToolTriggers, LlamaPythonTagOpensACall) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = auto_grammar(chat::ToolSyntax::PYTHON_TAG);
  const std::string call = R"({"name": "get_weather", "parameters": {"city": "Paris", "days": 2}})";
  EXPECT_TRUE(complete(c, s, "<|python_tag|>" + call));
  EXPECT_TRUE(complete(c, s, call));
  EXPECT_TRUE(complete(c, s, "No call needed."));
  EXPECT_FALSE(prefix_ok(c, s, "<|python_tag|>{\"name\": \"get_time\""));
  EXPECT_FALSE(prefix_ok(c, s, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": 3"));
  EXPECT_FALSE(prefix_ok(c, s, "<|python_tag|>print(1)"));
}

// The XML and bare-key syntaxes are triggered by their openers too.
TEST(ToolTriggers, XmlAndBareKeyOpeners) {
  GrammarCompiler c(byte_vocabulary());
  for (const auto syntax : {chat::ToolSyntax::TAG_XML, chat::ToolSyntax::CALL_COLON}) {
    ToolCallGrammar g;
    g.mode = ToolCallGrammar::Mode::AUTO;
    g.triggers = chat::call_triggers(syntax);
    const auto shapes = chat::tool_call_shapes(syntax, kTools, "", true);
    for (const chat::ToolCallShape& sh : *shapes)
      g.tags.push_back({sh.begin, sh.schema.dump(), sh.end,
                        sh.args == chat::ArgsForm::XML_PARAMETERS ? ArgsSyntax::XML_PARAMETERS : ArgsSyntax::BARE_KEYS,
                        sh.quote});
    const GrammarSpec s = tool_call_grammar(g);
    const std::string call = syntax == chat::ToolSyntax::TAG_XML
                                 ? "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                                   "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
                                 : "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:2}<tool_call|>";
    EXPECT_TRUE(complete(c, s, "Let me look. " + call)) << call;
    EXPECT_FALSE(prefix_ok(c, s, call.substr(0, call.find("2")) + "0")) << call;  // days >= 1
  }
}

}  // namespace
}  // namespace oxyd::grammar
