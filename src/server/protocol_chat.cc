// POST /v1/chat/completions request: messages normalized for a chat template, tools and
// tool_choice validated, chat-only fields. Normalization (what a template sees):
//   - content is always a string: a list of text parts is joined with "\n", as vLLM
//     (chat_utils: "\n".join(texts)) and llama.cpp (concat_typed_text) do; OpenAI does not say.
//   - "developer" becomes "system": HF chat templates know system, not developer, and OpenAI
//     defines developer messages as the replacement of system messages.
//   - assistant content null (tool calls only) becomes ""; tool_calls[].function.arguments given as
//     a JSON string holding an object becomes that object (vLLM does the same, templates `tojson` it).
#include <algorithm>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

namespace {

constexpr int64_t kInt32Max = 2147483647;

std::string idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

bool valid_function_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

const std::string& required_string(const json& obj, const char* key, const std::string& path) {
  const json* v = field(obj, key);
  if (!v) missing(path);
  if (!v->is_string()) invalid_type(path, "a string", *v);
  return v->get_ref<const std::string&>();
}

std::string parse_content(const json& c, const std::string& role, const std::string& path) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) invalid_type(path, "a string or an array of content parts", c);
  if (c.empty()) invalid_value(path, "an array of content parts must hold at least one part.");
  std::string text;
  for (size_t i = 0; i < c.size(); ++i) {
    const json& part = c[i];
    const std::string ppath = idx(path, i);
    if (!part.is_object()) invalid_type(ppath, "an object", part);
    const std::string& type = required_string(part, "type", ppath + ".type");
    std::string piece;
    if (type == "text") {
      piece = required_string(part, "text", ppath + ".text");
    } else if (type == "refusal" && role == "assistant") {
      piece = required_string(part, "refusal", ppath + ".refusal");
    } else if (type == "image_url" || type == "input_audio" || type == "file" || type == "audio_url" ||
               type == "video_url" || type == "image" || type == "input_image") {
      not_supported(ppath + ".type", "Content parts of type '" + type +
                                         "' are not supported: this server runs text-only models. Send "
                                         "content as a string or as parts of type 'text'.");
    } else {
      invalid_value(ppath + ".type", "expected 'text', but got " + quote_value(part["type"]) + ".");
    }
    if (i > 0) text += '\n';
    text += piece;
  }
  return text;
}

json parse_tool_calls(const json& v, const std::string& path) {
  if (!v.is_array()) invalid_type(path, "an array", v);
  json out = json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = idx(path, i);
    const json& tc = v[i];
    if (!tc.is_object()) invalid_type(p, "an object", tc);
    const std::string& id = required_string(tc, "id", p + ".id");
    if (const std::string& type = required_string(tc, "type", p + ".type"); type != "function")
      invalid_value(p + ".type", "expected 'function', but got " + quote_value(json(type)) + ".");
    const json* fn = field(tc, "function");
    if (!fn) missing(p + ".function");
    if (!fn->is_object()) invalid_type(p + ".function", "an object", *fn);
    const std::string& name = required_string(*fn, "name", p + ".function.name");
    const json* args = field(*fn, "arguments");
    if (!args) missing(p + ".function.arguments");
    json arguments;
    if (args->is_string()) {
      std::optional<json> parsed = parse_json_limited(args->get<std::string>());
      arguments = parsed && parsed->is_object() ? std::move(*parsed) : *args;
    } else if (args->is_object()) {
      arguments = *args;
    } else {
      invalid_type(p + ".function.arguments", "a string (JSON-encoded arguments)", *args);
    }
    out.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}});
  }
  return out;
}

json parse_messages(const json& body) {
  const json* m = field(body, "messages");
  if (!m) missing("messages");
  if (!m->is_array()) invalid_type("messages", "an array", *m);
  if (m->empty()) invalid_value("messages", "the array must hold at least one message.");
  json out = json::array();
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string p = idx("messages", i);
    if (!msg.is_object()) invalid_type(p, "an object", msg);
    const std::string& role = required_string(msg, "role", p + ".role");
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" && role != "tool")
      invalid_value(p + ".role", "expected one of 'system', 'developer', 'user', 'assistant', 'tool', but got " +
                                     quote_value(json(role)) + ".");
    json o = json::object();
    o["role"] = role == "developer" ? "system" : role;
    const json* content = field(msg, "content");
    json tool_calls;
    if (role == "assistant") {
      if (const json* tc = field(msg, "tool_calls")) tool_calls = parse_tool_calls(*tc, p + ".tool_calls");
      if (field(msg, "function_call"))
        not_supported(p + ".function_call", "'function_call' in messages is deprecated and not supported; use "
                                            "'tool_calls'.");
      if (!content && tool_calls.empty()) missing(p + ".content");
    } else if (!content) {
      missing(p + ".content");
    }
    o["content"] = content ? parse_content(*content, role, p + ".content") : std::string();
    if (auto name = opt_string(msg, "name", p + ".name")) o["name"] = *name;
    if (role == "tool") o["tool_call_id"] = required_string(msg, "tool_call_id", p + ".tool_call_id");
    if (!tool_calls.empty()) o["tool_calls"] = std::move(tool_calls);
    if (role == "assistant")
      if (auto r = opt_string(msg, "reasoning_content", p + ".reasoning_content")) o["reasoning_content"] = *r;
    out.push_back(std::move(o));
  }
  return out;
}

json parse_tools(const json& v) {
  if (!v.is_array()) invalid_type("tools", "an array", v);
  if (v.empty()) invalid_value("tools", "the array must hold at least one tool (omit 'tools' to send none).");
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = idx("tools", i);
    const json& t = v[i];
    if (!t.is_object()) invalid_type(p, "an object", t);
    if (const std::string& type = required_string(t, "type", p + ".type"); type != "function")
      not_supported(p + ".type", "Tools of type " + quote_value(json(type)) + " are not supported; only 'function'.");
    const json* fn = field(t, "function");
    if (!fn) missing(p + ".function");
    if (!fn->is_object()) invalid_type(p + ".function", "an object", *fn);
    if (!valid_function_name(required_string(*fn, "name", p + ".function.name")))
      invalid_value(p + ".function.name", "a function name must match ^[a-zA-Z0-9_-]{1,64}$, but got " +
                                              quote_value((*fn)["name"]) + ".");
    opt_string(*fn, "description", p + ".function.description");
    if (const json* params = field(*fn, "parameters"); params && !params->is_object())
      invalid_type(p + ".function.parameters", "an object (a JSON Schema)", *params);
    opt_bool(*fn, "strict", p + ".function.strict");
  }
  return v;
}

json parse_tool_choice(const json& v, const json& tools) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s != "none" && s != "auto" && s != "required")
      invalid_value("tool_choice", "expected 'none', 'auto', 'required' or a named function, but got " +
                                       quote_value(v) + ".");
    if (s != "none" && tools.is_null())
      throw bad_request("'tool_choice' " + quote_value(v) + " is only allowed when 'tools' are specified.",
                        "tool_choice", "invalid_value");
    return v;
  }
  if (!v.is_object()) invalid_type("tool_choice", "a string or an object", v);
  const std::string& type = required_string(v, "type", "tool_choice.type");
  if (type != "function")
    not_supported("tool_choice.type", "tool_choice of type " + quote_value(json(type)) +
                                          " is not supported; use 'function' with a name, or 'none', 'auto', "
                                          "'required'.");
  const json* fn = field(v, "function");
  if (!fn) missing("tool_choice.function");
  if (!fn->is_object()) invalid_type("tool_choice.function", "an object", *fn);
  const std::string& name = required_string(*fn, "name", "tool_choice.function.name");
  const bool known = tools.is_array() && std::any_of(tools.begin(), tools.end(), [&](const json& t) {
    return t["function"]["name"] == name;
  });
  if (!known)
    invalid_value("tool_choice.function.name", "no function named " + quote_value(json(name)) + " in 'tools'.");
  return json{{"type", "function"}, {"function", {{"name", name}}}};
}

}  // namespace

ChatRequest parse_chat_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  ChatRequest r;
  parse_common(body, r.common);
  r.messages = parse_messages(body);

  // max_completion_tokens replaces the deprecated max_tokens; both are checked, the new one wins.
  auto max_tokens = opt_int(body, "max_tokens", "max_tokens", 1, kInt32Max);
  if (auto mct = opt_int(body, "max_completion_tokens", "max_completion_tokens", 1, kInt32Max)) max_tokens = mct;
  if (max_tokens) r.common.max_tokens = static_cast<int32_t>(*max_tokens);

  if (auto b = opt_bool(body, "logprobs", "logprobs")) r.logprobs = *b;
  if (auto k = opt_int(body, "top_logprobs", "top_logprobs", 0, sample::kMaxTopLogprobs)) {
    if (!r.logprobs)
      throw bad_request("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs", "invalid_value");
    r.top_logprobs = static_cast<int32_t>(*k);
  }
  if (r.logprobs) r.common.sampling.logprobs = r.top_logprobs;

  if (const json* t = field(body, "tools")) r.tools = parse_tools(*t);
  if (const json* tc = field(body, "tool_choice")) r.tool_choice = parse_tool_choice(*tc, r.tools);
  r.parallel_tool_calls = opt_bool(body, "parallel_tool_calls", "parallel_tool_calls").value_or(true);
  if (field(body, "functions"))
    not_supported("functions", "'functions' is deprecated and not supported; use 'tools'.");
  if (field(body, "function_call"))
    not_supported("function_call", "'function_call' is deprecated and not supported; use 'tool_choice'.");

  if (field(body, "audio")) not_supported("audio", "Audio output is not supported: this server returns text only.");
  if (const json* mod = field(body, "modalities")) {
    if (!mod->is_array()) invalid_type("modalities", "an array", *mod);
    for (const json& x : *mod)
      if (x != "text") not_supported("modalities", "Only the 'text' modality is supported, got " + quote_value(x) + ".");
  }

  if (const json* kw = field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) invalid_type("chat_template_kwargs", "an object", *kw);
    r.chat_template_kwargs = *kw;
  }
  // Top-level shortcuts (vLLM / llama.cpp clients send them); they override chat_template_kwargs.
  if (auto b = opt_bool(body, "enable_thinking", "enable_thinking")) r.chat_template_kwargs["enable_thinking"] = *b;
  if (auto e = opt_string(body, "reasoning_effort", "reasoning_effort")) {
    if (*e != "low" && *e != "medium" && *e != "high")
      invalid_value("reasoning_effort", "expected 'low', 'medium' or 'high', but got " + quote_value(json(*e)) + ".");
    r.chat_template_kwargs["reasoning_effort"] = *e;
  }
  if (auto b = opt_bool(body, "add_generation_prompt", "add_generation_prompt")) r.add_generation_prompt = *b;
  collect_unknown_fields(body,
                         {"messages", "max_tokens", "max_completion_tokens", "logprobs", "top_logprobs", "tools",
                          "tool_choice", "parallel_tool_calls", "functions", "function_call", "response_format", "audio",
                          "modalities", "chat_template_kwargs", "enable_thinking", "reasoning_effort",
                          "add_generation_prompt"},
                         r.common.unknown_fields);
  return r;
}

}  // namespace oxyd::server::protocol
