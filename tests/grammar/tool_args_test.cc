// Arguments in the non-JSON call syntaxes (tool_args.h), forced by tool_call_grammar: the text a
// chat template writes for a call is accepted (Qwen3-Coder's tests/data/chat_templates/
// Qwen3-Coder.jinja lines 85-94: "<parameter=P>\nV\n</parameter>\n" each; Gemma 4's
// google-gemma-4-it.jinja lines 244-255 and format_argument: call:N{k:V,...}, keys dictsorted,
// strings in <|"|>), and values the schema forbids are not.
#include <gtest/gtest.h>

#include "core/error.h"
#include "grammar/tool_grammar.h"
#include "byte_vocabulary.h"

namespace oxyd::grammar {
namespace {

const char* kWeather = R"({"type":"object","properties":{
  "city":{"type":"string","maxLength":6},"unit":{"enum":["c","f"]},"days":{"type":"integer","minimum":1,"maximum":7},
  "tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":2},"note":{"type":"string"},
  "ok":{"type":"boolean"}},"required":["city","unit","days"],"additionalProperties":false})";

GrammarSpec forced(ArgsSyntax syntax, const std::string& begin, const std::string& end, const std::string& schema = kWeather) {
  ToolCallGrammar g;
  g.parallel = false;
  g.tags = {{begin, schema, end, syntax, syntax == ArgsSyntax::BARE_KEYS ? "<|\"|>" : ""}};
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

const std::string kXmlBegin = "<tool_call>\n<function=get_weather>", kXmlEnd = "</function>\n</tool_call>";
std::string xml(const std::string& params) { return kXmlBegin + "\n" + params + kXmlEnd; }
std::string param(const std::string& p, const std::string& v) { return "<parameter=" + p + ">\n" + v + "\n</parameter>\n"; }

TEST(ToolArgs, XmlParametersAcceptTheTemplatesText) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = forced(ArgsSyntax::XML_PARAMETERS, kXmlBegin, kXmlEnd);
  const std::string req = param("city", "Paris") + param("unit", "c") + param("days", "3");
  EXPECT_TRUE(complete(c, s, xml(req)));
  EXPECT_TRUE(complete(c, s, xml(req + param("tags", "[\"a\", \"bc\"]") + param("note", "two\nlines") + param("ok", "true"))));
  EXPECT_TRUE(complete(c, s, xml(req + param("ok", "false"))));  // optional ones may be left out
  EXPECT_TRUE(complete(c, s, xml(req + param("note", ""))));
}

TEST(ToolArgs, XmlParametersHoldTheSchema) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = forced(ArgsSyntax::XML_PARAMETERS, kXmlBegin, kXmlEnd);
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Parisxx"))));               // maxLength 6
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Paris") + param("unit", "k"))));  // enum
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Paris") + param("unit", "c") + param("days", "9"))));
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Paris") + param("unit", "c") + param("days", "\"3\""))));
  EXPECT_FALSE(prefix_ok(c, s, xml(param("unit", "c"))));  // city is required (and comes first)
  EXPECT_FALSE(complete(c, s, xml(param("city", "Paris") + param("unit", "c"))));  // days missing
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Paris") + param("unit", "c") + param("days", "3") + param("x", "1"))));
  EXPECT_FALSE(prefix_ok(c, s, xml(param("city", "Paris") + param("unit", "c") + param("days", "3") +
                                   param("tags", "[\"a\", \"b\", \"c\"]"))));  // maxItems 2
  EXPECT_FALSE(prefix_ok(c, s, kXmlBegin + "\n<parameter=city> Paris"));       // no blank the reader would keep
  EXPECT_FALSE(prefix_ok(c, s, "Sure. " + kXmlBegin));
}

TEST(ToolArgs, XmlParametersWithoutProperties) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = forced(ArgsSyntax::XML_PARAMETERS, "<tool_call>\n<function=ping>", kXmlEnd, R"({"type":"object"})");
  EXPECT_TRUE(complete(c, s, "<tool_call>\n<function=ping>\n" + kXmlEnd));
  EXPECT_FALSE(prefix_ok(c, s, "<tool_call>\n<function=ping>\n<parameter="));
}

const std::string kCallBegin = "<|tool_call>call:get_weather", kCallEnd = "<tool_call|>";
const std::string kQ = "<|\"|>";

TEST(ToolArgs, BareKeysAcceptTheTemplatesText) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = forced(ArgsSyntax::BARE_KEYS, kCallBegin, kCallEnd);
  const std::string base = "city:" + kQ + "Paris" + kQ + ",days:3";
  EXPECT_TRUE(complete(c, s, kCallBegin + "{" + base + ",unit:" + kQ + "c" + kQ + "}" + kCallEnd));
  EXPECT_TRUE(complete(c, s, kCallBegin + "{" + base + ",note:" + kQ + "a, b: {c}" + kQ + ",ok:true,tags:[" + kQ + "x" +
                                 kQ + "," + kQ + "yz" + kQ + "],unit:" + kQ + "f" + kQ + "}" + kCallEnd));
  EXPECT_TRUE(complete(c, s, kCallBegin + "{" + base + ",tags:[],unit:" + kQ + "c" + kQ + "}" + kCallEnd));
}

TEST(ToolArgs, BareKeysHoldTheSchema) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s = forced(ArgsSyntax::BARE_KEYS, kCallBegin, kCallEnd);
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "Parisxx"));           // maxLength 6
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:\"Paris\""));                 // strings are <|"|>-quoted
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{days:3"));                          // sorted: city first
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:8"));  // maximum 7
  EXPECT_FALSE(complete(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:3}" + kCallEnd));  // unit required
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:3,unit:" + kQ + "k"));
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:3,tags:[" + kQ + "a" + kQ + "," + kQ +
                                   "b" + kQ + "," + kQ));  // maxItems 2
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:3,ok:1"));
  EXPECT_FALSE(prefix_ok(c, s, kCallBegin + "{city:" + kQ + "P" + kQ + ",days:3,unit:" + kQ + "c" + kQ + ",zz:"));
}

TEST(ToolArgs, BareKeysNestingRefsAndAnyValues) {
  GrammarCompiler c(byte_vocabulary());
  const std::string schema = R"({"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"},
    "y":{"type":"number"}}}},"properties":{"a":{"$ref":"#/$defs/pt"},"b":{"anyOf":[{"type":"integer"},{"type":"null"}]},
    "c":{}}})";
  const GrammarSpec s = forced(ArgsSyntax::BARE_KEYS, "<|tool_call>call:f", kCallEnd, schema);
  EXPECT_TRUE(complete(c, s, "<|tool_call>call:f{}" + kCallEnd));  // nothing required
  EXPECT_TRUE(complete(c, s, "<|tool_call>call:f{a:{y:-1.5},b:null}" + kCallEnd));
  EXPECT_TRUE(complete(c, s, "<|tool_call>call:f{b:4,c:{k:[1," + kQ + "s" + kQ + ",{}]}}" + kCallEnd));
  EXPECT_FALSE(prefix_ok(c, s, "<|tool_call>call:f{a:{x:" + kQ));
  EXPECT_FALSE(prefix_ok(c, s, "<|tool_call>call:f{b:" + kQ));
  EXPECT_FALSE(prefix_ok(c, s, "<|tool_call>call:f{,"));
  ToolCallGrammar g;
  g.tags = {{"x", "{}", "", ArgsSyntax::BARE_KEYS, "'"}};  // the quote must hold '"'
  EXPECT_THROW(tool_call_grammar(g), Error);
}

}  // namespace
}  // namespace oxyd::grammar
