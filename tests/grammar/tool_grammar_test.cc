// tool_call_grammar / hermes_tool_call_grammar: REQUIRED forces a well-formed call from the first
// byte (arguments valid for the tool's schema), a named function allows that tool only, AUTO
// leaves text free until the trigger and then constrains the call.
#include <gtest/gtest.h>

#include "core/error.h"
#include "grammar/tool_grammar.h"
#include "byte_vocabulary.h"

namespace oxyd::grammar {
namespace {

const char* kTools = R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
     "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city","unit"]}}},
  {"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{}}}}])";

const std::string kCall = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>";

bool complete(const GrammarCompiler& c, const GrammarSpec& s, const std::string& text) {
  Matcher m(c.compile(s), {});
  return m.accept_string(text) && m.is_completed();
}
bool prefix_ok(const GrammarCompiler& c, const GrammarSpec& s, const std::string& text) {
  Matcher m(c.compile(s), {});
  return m.accept_string(text);
}

TEST(ToolGrammar, RequiredForcesAValidCall) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec req = hermes_tool_call_grammar(kTools, ToolCallGrammar::Mode::REQUIRED);
  EXPECT_TRUE(complete(c, req, kCall));
  EXPECT_TRUE(complete(c, req, kCall + "\n" + kCall));  // parallel calls, as the template separates them
  EXPECT_FALSE(complete(c, req, kCall + " Done."));    // nothing but calls
  EXPECT_FALSE(prefix_ok(c, req, kCall + "\nSure"));
  EXPECT_TRUE(complete(c, req, "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(prefix_ok(c, req, "Sure"));  // no text before the call
  EXPECT_FALSE(prefix_ok(c, req, "<tool_call>\n{\"name\": \"get_time\""));  // unknown tool
  EXPECT_FALSE(prefix_ok(c, req, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 3"));
  EXPECT_FALSE(complete(c, req, ""));  // at least one call
}

TEST(ToolGrammar, NamedFunctionAllowsThatToolOnly) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec one = hermes_tool_call_grammar(kTools, ToolCallGrammar::Mode::REQUIRED, "ping");
  EXPECT_TRUE(complete(c, one, "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(prefix_ok(c, one, "<tool_call>\n{\"name\": \"get_weather\""));
  const std::string ping = "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
  EXPECT_FALSE(prefix_ok(c, one, ping + "\n<tool_call>"));  // one call only
  EXPECT_THROW(hermes_tool_call_grammar(kTools, ToolCallGrammar::Mode::REQUIRED, "nope"), Error);
}

TEST(ToolGrammar, AutoLeavesTextFreeUntilTheTrigger) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec aut = hermes_tool_call_grammar(kTools, ToolCallGrammar::Mode::AUTO);
  EXPECT_TRUE(complete(c, aut, "Just text, no call."));
  EXPECT_TRUE(complete(c, aut, "Let me check. " + kCall));
  EXPECT_FALSE(prefix_ok(c, aut, "Let me check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"town\""));
}

TEST(ToolGrammar, GenericTagsAndBadInput) {
  GrammarCompiler c(byte_vocabulary());
  ToolCallGrammar g;
  g.triggers = {"<function="};
  g.tags = {{"<function=add>", R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})", "</function>", ArgsSyntax::JSON, ""}};
  const GrammarSpec s = tool_call_grammar(g);
  EXPECT_TRUE(complete(c, s, "<function=add>{\"a\": 1}</function>"));
  EXPECT_FALSE(prefix_ok(c, s, "<function=add>{\"a\": \"x\""));
  g.tags[0].parameters_schema = "{not json";
  EXPECT_THROW(tool_call_grammar(g), Error);
  EXPECT_THROW(tool_call_grammar(ToolCallGrammar{}), Error);
}

// A think block the prompt opened is closed first, then the call: nothing else fits.
TEST(ToolGrammar, RequiredPrefixComesFirst) {
  GrammarCompiler c(byte_vocabulary());
  ToolCallGrammar g;
  g.tags = {{"[TOOL_CALLS]add[ARGS]", R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})", "", ArgsSyntax::JSON, ""}};
  g.parallel = false;
  g.prefix = "</think>\n\n";
  const GrammarSpec s = tool_call_grammar(g);
  EXPECT_TRUE(complete(c, s, "</think>\n\n[TOOL_CALLS]add[ARGS]{\"a\": 12}"));
  EXPECT_FALSE(prefix_ok(c, s, "[TOOL_CALLS]"));
  EXPECT_FALSE(complete(c, s, "</think>\n\n[TOOL_CALLS]add[ARGS]{\"a\": 12}[TOOL_CALLS]"));
}

// XGrammar bounds a string's length with a character class that lets control characters through
// (grammar.cc): the compiled grammar must not.
TEST(ToolGrammar, BoundedStringsHoldNoControlCharacter) {
  GrammarCompiler c(byte_vocabulary());
  const GrammarSpec s{GrammarSpec::Kind::JSON_SCHEMA, R"({"type":"object","properties":{"c":{"type":"string","maxLength":3}},"required":["c"]})", true};
  EXPECT_TRUE(complete(c, s, "{\"c\": \"ab\"}"));
  EXPECT_FALSE(prefix_ok(c, s, "{\"c\": \"a\x05"));
  EXPECT_FALSE(prefix_ok(c, s, "{\"c\": \"abcd"));
  ToolCallGrammar g;
  g.tags = {{"<f>", R"({"type":"object","properties":{"c":{"type":"string","minLength":1,"maxLength":3}},"required":["c"]})", "</f>", ArgsSyntax::JSON, ""}};
  const GrammarSpec t = tool_call_grammar(g);
  EXPECT_TRUE(complete(c, t, "<f>{\"c\": \"ab\"}</f>"));
  EXPECT_FALSE(prefix_ok(c, t, "<f>{\"c\": \"\x01"));
  EXPECT_FALSE(prefix_ok(c, t, "<f>{\"c\": \"\""));  // minLength 1
}

// terminate_when_complete (a request with no stop id) ends a grammar where nothing but a stop
// may follow, not as soon as it is complete: free text before a call goes on (it got one token).
TEST(ToolGrammar, TerminateWhenCompleteWaitsUntilNothingCanFollow) {
  GrammarCompiler c(byte_vocabulary());
  Matcher aut(c.compile(hermes_tool_call_grammar(kTools, ToolCallGrammar::Mode::AUTO)), {}, true);
  EXPECT_TRUE(aut.accept_string("hens"));
  EXPECT_TRUE(aut.is_completed());
  EXPECT_FALSE(aut.is_terminated());
  Matcher obj(c.compile({GrammarSpec::Kind::JSON_OBJECT, "", false}), {}, true);
  EXPECT_TRUE(obj.accept_string("{\"a\": 1"));
  EXPECT_FALSE(obj.is_terminated());
  EXPECT_TRUE(obj.accept_string("}"));
  EXPECT_TRUE(obj.is_terminated());
}

}  // namespace
}  // namespace oxyd::grammar
