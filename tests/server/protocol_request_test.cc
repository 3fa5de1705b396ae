// server/protocol request parsing: the body parser's guards, the mapping of every accepted field,
// and one 400 naming the right param for each invalid field. The allowed ranges are those of the
// OpenAI API reference (chat/create, completions/create) and vLLM's documented extensions; the
// expected param names are the request's own field paths.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <thread>

#include "server/protocol.h"

namespace oxyd::server::protocol {
namespace {

ApiError expect_400(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError thrown";
  return ApiError(0, "", "");
}

const char* kMsgs = R"("messages":[{"role":"user","content":"hi"}])";

json chat_body(const std::string& extra) {
  return json::parse("{" + std::string(kMsgs) + (extra.empty() ? "" : "," + extra) + "}");
}

TEST(ProtocolBody, RejectsMalformedBodies) {
  ApiError e = expect_400([] { parse_body("{\"a\": 1,"); });
  EXPECT_EQ(e.status, 400);
  EXPECT_NE(std::string(e.what()).find("line 1, column"), std::string::npos) << e.what();
  EXPECT_EQ(expect_400([] { parse_body(""); }).status, 400);
  e = expect_400([] { parse_body("[1, 2]"); });
  EXPECT_NE(std::string(e.what()).find("must be a JSON object"), std::string::npos) << e.what();
  e = expect_400([] { parse_body("{\"a\": \"caf\xc3\"}"); });
  EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("byte offset 10"), std::string::npos) << e.what();
  EXPECT_EQ(expect_400([] { parse_body(R"({"a": "\ud800"})"); }).status, 400);  // lone surrogate escape
  EXPECT_EQ(expect_400([] { parse_body(R"({"a": 1e999})"); }).status, 400);
  // Error bodies for these are valid JSON.
  EXPECT_TRUE(json::accept(error_body(e)));
  EXPECT_EQ(parse_body(R"({"a": [1, {"b": null}], "c": "\u00e9"})")["c"], "\xc3\xa9");
  // An unterminated 1 MB string: the message names the position, without echoing the megabyte.
  e = expect_400([] { parse_body("{\"a\": \"" + std::string(1 << 20, 'x')); });
  EXPECT_LT(std::string(e.what()).size(), 500u);
  EXPECT_NE(std::string(e.what()).find("line 1, column"), std::string::npos) << e.what();
}

std::string nested(int depth) {  // `depth` nested containers: {"a":[[...]]}
  return "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
}

TEST(ProtocolBody, NestingLimitIs64) {
  EXPECT_NO_THROW(parse_body(nested(64)));
  const ApiError e = expect_400([] { parse_body(nested(65)); });
  EXPECT_NE(std::string(e.what()).find("deeper than 64"), std::string::npos) << e.what();
  // 10 MB of '[' stops at the limit without recursion.
  EXPECT_EQ(expect_400([] { parse_body(std::string(10 << 20, '[')); }).status, 400);
}

TEST(ProtocolChat, MapsEveryField) {
  const ChatRequest r = parse_chat_request(chat_body(R"(
    "model": "m", "temperature": 0.5, "top_p": 0.9, "presence_penalty": -1.5, "frequency_penalty": 2,
    "logit_bias": {"42": -100, "7": 3.5}, "seed": -1, "top_k": -1, "min_p": 0.1, "typical_p": 0.8,
    "repetition_penalty": 1.2, "n": 3, "stop": ["a", "bb"], "stop_token_ids": [5, 6], "ignore_eos": true,
    "skip_special_tokens": false, "stream": true, "stream_options": {"include_usage": true}, "timeout": 2.5,
    "max_tokens": 10, "max_completion_tokens": 20, "logprobs": true, "top_logprobs": 5,
    "chat_template_kwargs": {"enable_thinking": true, "x": 1}, "enable_thinking": false,
    "reasoning_effort": "high", "add_generation_prompt": false, "user": "u", "unknown_field": [1])"));
  const CommonParams& c = r.common;
  EXPECT_EQ(c.model, "m");
  EXPECT_FLOAT_EQ(c.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(c.sampling.top_p, 0.9f);
  EXPECT_FLOAT_EQ(c.sampling.presence_penalty, -1.5f);
  EXPECT_FLOAT_EQ(c.sampling.frequency_penalty, 2.f);
  ASSERT_EQ(c.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(c.sampling.logit_bias[0], (std::pair<int32_t, float>{42, -100.f}));
  EXPECT_EQ(c.sampling.logit_bias[1], (std::pair<int32_t, float>{7, 3.5f}));
  EXPECT_EQ(c.sampling.seed, std::optional<uint64_t>(~uint64_t{0}));
  EXPECT_EQ(c.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(c.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(c.sampling.typical_p, 0.8f);
  EXPECT_FLOAT_EQ(c.sampling.repetition_penalty, 1.2f);
  EXPECT_EQ(c.sampling.logprobs, 5);
  EXPECT_EQ(c.n, 3);
  EXPECT_EQ(c.stop, (std::vector<std::string>{"a", "bb"}));
  EXPECT_EQ(c.stop_token_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_TRUE(c.ignore_eos);
  EXPECT_FALSE(c.skip_special_tokens);
  EXPECT_TRUE(c.stream);
  EXPECT_TRUE(c.include_usage);
  EXPECT_EQ(c.timeout_s, std::optional<double>(2.5));
  EXPECT_EQ(c.max_tokens, std::optional<int32_t>(20));  // max_completion_tokens beats max_tokens
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 5);
  EXPECT_EQ(r.chat_template_kwargs, json::parse(R"({"enable_thinking": false, "x": 1, "reasoning_effort": "high"})"));
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_TRUE(r.tools.is_null());
  EXPECT_TRUE(r.tool_choice.is_null());
}

TEST(ProtocolChat, DefaultsAndNulls) {
  // JSON null means "not given" for every optional field, as in the OpenAI API.
  const ChatRequest r = parse_chat_request(chat_body(
      R"("temperature": null, "top_p": null, "n": null, "stop": null, "max_tokens": null, "stream": null,
         "stream_options": null, "logprobs": null, "top_logprobs": null, "tools": null, "tool_choice": null,
         "response_format": null, "seed": null, "logit_bias": null)"));
  const CommonParams& c = r.common;
  EXPECT_EQ(c.model, "");
  EXPECT_FLOAT_EQ(c.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(c.sampling.top_p, 1.0f);
  EXPECT_EQ(c.sampling.logprobs, -1);
  EXPECT_FALSE(c.sampling.seed.has_value());
  EXPECT_EQ(c.n, 1);
  EXPECT_FALSE(c.max_tokens.has_value());
  EXPECT_FALSE(c.stream);
  EXPECT_FALSE(c.include_usage);
  EXPECT_TRUE(c.stop.empty());
  EXPECT_TRUE(c.skip_special_tokens);
  EXPECT_TRUE(r.add_generation_prompt);
  EXPECT_EQ(r.chat_template_kwargs, json::object());
  EXPECT_EQ(parse_chat_request(chat_body(R"("stop": "END")")).common.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(parse_chat_request(chat_body(R"("logprobs": true)")).common.sampling.logprobs, 0);
  EXPECT_EQ(parse_chat_request(chat_body(R"("top_k": 40)")).common.sampling.top_k, 40);
  EXPECT_EQ(parse_chat_request(chat_body(R"("response_format": {"type": "text"})")).common.n, 1);
}

TEST(ProtocolChat, NormalizesMessages) {
  const ChatRequest r = parse_chat_request(json::parse(R"({"messages": [
    {"role": "developer", "content": "be brief"},
    {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "user", "content": "q", "name": "bob", "extra": 1},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "sunny"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "refusal", "refusal": "y"}],
     "reasoning_content": "think"}],
    "tools": [{"type": "function", "function": {"name": "get", "description": "d",
               "parameters": {"type": "object"}}}],
    "tool_choice": {"type": "function", "function": {"name": "get"}}})"));
  const json expected = json::parse(R"([
    {"role": "system", "content": "be brief"},
    {"role": "system", "content": "a\nb"},
    {"role": "user", "content": "q", "name": "bob"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
    {"role": "assistant", "content": "x\ny", "reasoning_content": "think"}])");
  EXPECT_EQ(r.messages, expected) << r.messages.dump();
  EXPECT_EQ(r.tools[0]["function"]["name"], "get");
  EXPECT_EQ(r.tool_choice, json::parse(R"({"type": "function", "function": {"name": "get"}})"));
  // Arguments that are not a JSON object stay the string the client sent.
  const ChatRequest r2 = parse_chat_request(json::parse(R"({"messages": [{"role": "assistant", "tool_calls": [
    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "not json"}}]}],
    "tool_choice": "none"})"));
  EXPECT_EQ(r2.messages[0]["tool_calls"][0]["function"]["arguments"], "not json");
  EXPECT_EQ(r2.tool_choice, "none");
}

struct BadCase {
  const char* extra;  // fields added to a valid chat body (or a whole body when it starts with '{')
  const char* param;
};

TEST(ProtocolChat, EveryInvalidFieldIs400NamingIt) {
  const BadCase cases[] = {
      {R"("model": 3)", "model"},
      {R"("temperature": "hot")", "temperature"}, {R"("temperature": -0.1)", "temperature"},
      {R"("temperature": 2.01)", "temperature"}, {R"("top_p": -0.1)", "top_p"}, {R"("top_p": 1.5)", "top_p"},
      {R"("top_p": true)", "top_p"}, {R"("n": 0)", "n"}, {R"("n": 129)", "n"}, {R"("n": 2.0)", "n"},
      {R"("max_tokens": 0)", "max_tokens"}, {R"("max_tokens": -5)", "max_tokens"},
      {R"("max_tokens": 1.5)", "max_tokens"}, {R"("max_tokens": 4294967296)", "max_tokens"},
      {R"("max_completion_tokens": 0)", "max_completion_tokens"},
      {R"("presence_penalty": 2.5)", "presence_penalty"}, {R"("frequency_penalty": -3)", "frequency_penalty"},
      {R"("logit_bias": [1])", "logit_bias"}, {R"("logit_bias": {"abc": 1})", "logit_bias"},
      {R"("logit_bias": {"-1": 1})", "logit_bias"}, {R"("logit_bias": {"1": 101})", "logit_bias"},
      {R"("logit_bias": {"1": "x"})", "logit_bias"}, {R"("logit_bias": {"99999999999": 1})", "logit_bias"},
      {R"("seed": "1")", "seed"}, {R"("seed": 1.5)", "seed"},
      {R"("stop": 1)", "stop"}, {R"("stop": "")", "stop"}, {R"("stop": ["a", ""])", "stop[1]"},
      {R"("stop": ["a", 2])", "stop[1]"},
      {R"("stop": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"])", "stop"},
      {R"("stop_token_ids": 3)", "stop_token_ids"}, {R"("stop_token_ids": [1, -2])", "stop_token_ids[1]"},
      {R"("stream": "yes")", "stream"}, {R"("stream_options": {"include_usage": true})", "stream_options"},
      {R"("stream": true, "stream_options": 1)", "stream_options"},
      {R"("stream": true, "stream_options": {"include_usage": 1})", "stream_options.include_usage"},
      {R"("logprobs": 1)", "logprobs"}, {R"("top_logprobs": 2)", "top_logprobs"},
      {R"("logprobs": false, "top_logprobs": 0)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": 21)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": -1)", "top_logprobs"},
      {R"("top_k": -2)", "top_k"}, {R"("min_p": 1.5)", "min_p"}, {R"("typical_p": 0)", "typical_p"},
      {R"("repetition_penalty": 0)", "repetition_penalty"}, {R"("ignore_eos": 1)", "ignore_eos"},
      {R"("skip_special_tokens": "no")", "skip_special_tokens"}, {R"("timeout": 0)", "timeout"},
      {R"("user": 5)", "user"},
      {R"("response_format": {"type": "json_schema"})", "response_format.json_schema"},
      {R"("response_format": {"type": "json_schema", "json_schema": {"schema": {}}})", "response_format.json_schema.name"},
      {R"("response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": 3}})",
       "response_format.json_schema.schema"},
      {R"("response_format": {"type": "json_object"}, "guided_regex": "a")", "guided_regex"},
      {R"("guided_choice": [])", "guided_choice"}, {R"("guided_regex": 1)", "guided_regex"},
      {R"("response_format": {"type": "yaml"})", "response_format.type"},
      {R"("response_format": "text")", "response_format"},
      {R"("chat_template_kwargs": [1])", "chat_template_kwargs"}, {R"("enable_thinking": "on")", "enable_thinking"},
      {R"("reasoning_effort": "max")", "reasoning_effort"}, {R"("reasoning_effort": 1)", "reasoning_effort"},
      {R"("add_generation_prompt": 0)", "add_generation_prompt"},
      {R"("functions": [{"name": "f"}])", "functions"}, {R"("function_call": "auto")", "function_call"},
      {R"("audio": {"voice": "x"})", "audio"}, {R"("modalities": ["text", "audio"])", "modalities"},
      {R"("tools": {})", "tools"}, {R"("tools": [])", "tools"}, {R"("tools": [1])", "tools[0]"},
      {R"("tools": [{"type": "retrieval"}])", "tools[0].type"}, {R"("tools": [{"type": "function"}])", "tools[0].function"},
      {R"("tools": [{"type": "function", "function": {}}])", "tools[0].function.name"},
      {R"("tools": [{"type": "function", "function": {"name": "bad name"}}])", "tools[0].function.name"},
      {R"("tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}])",
       "tools[0].function.parameters"},
      {R"("tool_choice": "always")", "tool_choice"}, {R"("tool_choice": "auto")", "tool_choice"},
      {R"("tool_choice": 1)", "tool_choice"},
      {R"("tools": [{"type": "function", "function": {"name": "f"}}],
          "tool_choice": {"type": "function", "function": {"name": "g"}})", "tool_choice.function.name"},
      {R"("tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "allowed_tools"})",
       "tool_choice.type"},
      {R"({})", "messages"}, {R"({"messages": []})", "messages"}, {R"({"messages": {}})", "messages"},
      {R"({"messages": ["hi"]})", "messages[0]"}, {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "bot", "content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "function", "content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": []}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]})", "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "refusal", "refusal": "x"}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "messages[0].content[0].text"},
      {R"({"messages": [{"role": "user", "content": ["x"]}]})", "messages[0].content[0]"},
      {R"({"messages": [{"role": "user", "content": "x", "name": 1}]})", "messages[0].name"},
      {R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0].tool_call_id"},
      {R"({"messages": [{"role": "assistant"}]})", "messages[0].content"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}]})",
       "messages[0].tool_calls[0].function"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "f", "arguments": 3}}]}]})", "messages[0].tool_calls[0].function.arguments"},
      {R"({"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": null}]})",
       "messages[1].content"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.extra);
    const json body = c.extra[0] == '{' ? json::parse(c.extra) : chat_body(c.extra);
    const ApiError e = expect_400([&] { parse_chat_request(body); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.param, c.param) << e.what();
    EXPECT_EQ(json::parse(error_body(e))["error"]["param"], c.param);
  }
}

TEST(ProtocolChat, MessagesSayWhatIsAllowed) {
  auto msg = [](const char* extra) {
    return std::string(expect_400([&] { parse_chat_request(chat_body(extra)); }).what());
  };
  EXPECT_EQ(msg(R"("temperature": 3)"),
            "Invalid 'temperature': decimal above maximum value. Expected a value in [0, 2], but got 3 instead.");
  EXPECT_EQ(msg(R"("max_tokens": 0)"),
            "Invalid 'max_tokens': integer below minimum value. Expected a value in [1, 2147483647], but got 0 "
            "instead.");
  EXPECT_EQ(msg(R"("top_p": "x")"), "Invalid type for 'top_p': expected a number, but got a string instead.");
  {  // structured output: the grammar each field asks for (compiled later, against the model's vocabulary)
    using K = grammar::GrammarSpec::Kind;
    auto g = [](const char* extra) { return parse_chat_request(chat_body(extra)).common.grammar; };
    EXPECT_EQ(g(R"("response_format": {"type": "json_object"})").kind, K::JSON_OBJECT);
    const auto js = g(R"("response_format": {"type": "json_schema", "json_schema": {"name": "x", "strict": true,
                      "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})");
    EXPECT_EQ(js.kind, K::JSON_SCHEMA);
    EXPECT_TRUE(js.strict);
    EXPECT_EQ(js.text, R"({"type":"object","properties":{"b":{},"a":{}}})");  // property order kept
    EXPECT_FALSE(g(R"("response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}})").strict);
    EXPECT_EQ(g(R"("guided_regex": "[a-z]+")").kind, K::REGEX);
    EXPECT_EQ(g(R"("guided_choice": ["a", "b c"])").text, R"(root ::= "a" | "b c")");
    EXPECT_EQ(g(R"("structured_outputs": {"grammar": "root ::= [a-z]+"})").kind, K::EBNF);
    EXPECT_TRUE(g(R"("response_format": {"type": "text"})").empty());
    EXPECT_EQ(parse_completion_request(json::parse(R"({"prompt": "x", "guided_json": {"type": "integer"}})")).common.grammar.kind,
              K::JSON_SCHEMA);
  }
  EXPECT_NE(msg(R"("stream_options": {})").find("only allowed when 'stream' is enabled"), std::string::npos);
}

// A NUL quoted from the request (here in a role) must not cut the error body short: what() of a
// std::exception stops at the first NUL, so error_body reads the whole message.
TEST(ProtocolChat, NulInQuotedRequestTextKeepsTheWholeMessage) {
  const json body = json::parse(R"({"messages": [{"role": "us\u0000er", "content": "hi"}]})");
  const ApiError e = expect_400([&] { parse_chat_request(body); });
  const json err = json::parse(error_body(e))["error"];
  const std::string m = err["message"];
  EXPECT_NE(m.find("us\\x00er"), std::string::npos) << m;
  EXPECT_EQ(m.back(), '.') << m;  // the sentence after the quoted role is there too
  const ApiError from_core = from_error(Error(ErrorCode::INVALID_ARGUMENT, std::string("a\0b tail", 8)));
  EXPECT_EQ(json::parse(error_body(from_core))["error"]["message"], "a\\x00b tail");
}

TEST(ProtocolCompletion, PromptShapesAndFields) {
  auto parse = [](const char* s) { return parse_completion_request(json::parse(s)); };
  CompletionRequest r = parse(R"({"model": "m", "prompt": "Once"})");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0].text, "Once");
  EXPECT_FALSE(r.prompts[0].is_ids);
  EXPECT_EQ(r.common.max_tokens, std::optional<int32_t>(16));  // OpenAI's default for completions
  EXPECT_FALSE(r.logprobs.has_value());
  EXPECT_EQ(r.common.sampling.logprobs, -1);

  r = parse(R"({"prompt": ["a", "b"], "max_tokens": null, "logprobs": 3, "echo": true, "suffix": "",
               "best_of": 1})");
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].text, "b");
  EXPECT_FALSE(r.common.max_tokens.has_value());  // explicit null: up to the context
  EXPECT_EQ(r.logprobs, std::optional<int32_t>(3));
  EXPECT_EQ(r.common.sampling.logprobs, 3);
  EXPECT_TRUE(r.echo);

  r = parse(R"({"prompt": ["", "b"]})");  // an empty string is a prompt (the model's BOS alone)
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[0].text, "");
  EXPECT_FALSE(r.prompts[0].is_ids);

  r = parse(R"({"prompt": [1, 2, 3], "max_tokens": 0, "echo": true})");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_TRUE(r.prompts[0].is_ids);
  EXPECT_EQ(r.prompts[0].ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.common.max_tokens, std::optional<int32_t>(0));

  r = parse(R"({"prompt": [[1], [0, 2]], "n": 2, "temperature": 0})");
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].ids, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(r.common.n, 2);
  EXPECT_TRUE(r.common.sampling.greedy());
}

TEST(ProtocolCompletion, EveryInvalidFieldIs400NamingIt) {
  const BadCase cases[] = {
      {R"({})", "prompt"}, {R"({"prompt": null})", "prompt"},
      {R"({"prompt": []})", "prompt"}, {R"({"prompt": 5})", "prompt"}, {R"({"prompt": {"a": 1}})", "prompt"},
      {R"({"prompt": [[]]})", "prompt[0]"},
      {R"({"prompt": [1, -1]})", "prompt[1]"}, {R"({"prompt": [1, 1.5]})", "prompt[1]"},
      {R"({"prompt": [1, "a"]})", "prompt[1]"}, {R"({"prompt": ["a", 1]})", "prompt[1]"},
      {R"({"prompt": [[1], "a"]})", "prompt[1]"}, {R"({"prompt": [[1], [2, -3]]})", "prompt[1][1]"},
      {R"({"prompt": [true]})", "prompt[0]"}, {R"({"prompt": [2147483648]})", "prompt[0]"},
      {R"({"prompt": "a", "max_tokens": 0})", "max_tokens"}, {R"({"prompt": "a", "max_tokens": -1})", "max_tokens"},
      {R"({"prompt": "a", "logprobs": 21})", "logprobs"}, {R"({"prompt": "a", "logprobs": true})", "logprobs"},
      {R"({"prompt": "a", "echo": "yes"})", "echo"}, {R"({"prompt": "a", "suffix": "end"})", "suffix"},
      {R"({"prompt": "a", "suffix": 1})", "suffix"}, {R"({"prompt": "a", "best_of": 2})", "best_of"},
      {R"({"prompt": "a", "best_of": 0})", "best_of"}, {R"({"prompt": "a", "temperature": 5})", "temperature"},
      {R"({"prompt": "a", "stream_options": {"include_usage": true}})", "stream_options"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.extra);
    const ApiError e = expect_400([&] { parse_completion_request(json::parse(c.extra)); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, c.param) << e.what();
  }
}

TEST(ProtocolIds, UniqueAcrossThreads) {
  std::vector<std::vector<std::string>> per(4);
  std::vector<std::thread> ts;
  for (auto& v : per)
    ts.emplace_back([&v] {
      for (int i = 0; i < 2000; ++i) v.push_back(new_id("cmpl"));
    });
  for (auto& t : ts) t.join();
  std::set<std::string> all;
  for (const auto& v : per) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 8000u);
}

}  // namespace
}  // namespace oxyd::server::protocol
