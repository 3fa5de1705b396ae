// Response bodies and stream chunks in OpenAI's shapes (checked against the openai SDK's pydantic
// types: tests/data/server/openai_shapes.json from tools/gen_openai_shape_goldens.py).
// Every string is passed through sanitize_utf8: a token piece that is a partial UTF-8 character
// is sent as U+FFFD in `token`, its real bytes in `bytes`. Logprobs are written as the shortest
// decimal that reads back as the same float (-0.1f → -0.1), -inf/NaN as -9999.0 (OpenAI, vLLM).
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

namespace {

json logprob_value(float x) {
  if (!std::isfinite(x)) return -9999.0;
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf - 1, x);
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

json bytes_of(std::string_view raw) {
  json a = json::array();
  for (const char c : raw) a.push_back(static_cast<int>(static_cast<uint8_t>(c)));
  return a;
}

std::string_view raw_bytes(const TokenLogprob& t, std::string& storage) {
  if (t.bytes.empty()) return t.token;
  storage.assign(t.bytes.begin(), t.bytes.end());
  return storage;
}

json usage_json(const Usage& u) {
  return json{{"prompt_tokens", u.prompt_tokens},
              {"completion_tokens", u.completion_tokens},
              {"total_tokens", u.prompt_tokens + u.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json usage_json_chat(const Usage& u) {
  json j = usage_json(u);
  if (u.reasoning_tokens >= 0) j["completion_tokens_details"] = {{"reasoning_tokens", u.reasoning_tokens}};
  return j;
}

// Tool calls as sent: names and arguments with invalid UTF-8 replaced.
json sanitize_calls(const json& calls) {
  json out = calls;
  for (auto& c : out) {
    json& fn = c["function"];
    for (const char* k : {"name", "arguments"})
      if (fn.contains(k) && fn[k].is_string()) fn[k] = sanitize_utf8(fn[k].get<std::string>());
  }
  return out;
}

json finish(const std::string& reason) { return reason.empty() ? json(nullptr) : json(reason); }

/// Chat: {"content":[{token, logprob, bytes, top_logprobs:[{token, logprob, bytes}]}], "refusal":null}.
json chat_logprobs(const std::optional<std::vector<TokenLogprob>>& lps) {
  if (!lps) return nullptr;
  json content = json::array();
  std::string storage;
  for (const TokenLogprob& t : *lps) {
    json top = json::array();
    for (const auto& [text, lp] : t.top)
      top.push_back({{"token", sanitize_utf8(text)}, {"logprob", logprob_value(lp)}, {"bytes", bytes_of(text)}});
    content.push_back({{"token", sanitize_utf8(t.token)},
                       {"logprob", logprob_value(t.logprob)},
                       {"bytes", bytes_of(raw_bytes(t, storage))},
                       {"top_logprobs", std::move(top)}});
  }
  return json{{"content", std::move(content)}, {"refusal", nullptr}};
}

/// Legacy completions: parallel lists tokens, token_logprobs, top_logprobs ({text: logprob}; two
/// pieces that both sanitize to U+FFFD share one key, as in vLLM), text_offset.
json legacy_logprobs(const CompletionChoice& c) {
  if (!c.logprobs) return nullptr;
  json tokens = json::array(), token_lps = json::array(), tops = json::array(), offsets = json::array();
  int64_t offset = c.text_offset_start;
  for (size_t i = 0; i < c.logprobs->size(); ++i) {
    const TokenLogprob& t = (*c.logprobs)[i];
    std::string text = sanitize_utf8(t.token);
    const bool null_entry = static_cast<int64_t>(i) < c.first_logprob_null;
    token_lps.push_back(null_entry ? json(nullptr) : logprob_value(t.logprob));
    if (null_entry) {
      tops.push_back(nullptr);
    } else {
      json top = json::object();
      for (const auto& [piece, lp] : t.top) top[sanitize_utf8(piece)] = logprob_value(lp);
      tops.push_back(std::move(top));
    }
    offsets.push_back(offset);
    offset += utf8_length(text);
    tokens.push_back(std::move(text));
  }
  return json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_lps)},
              {"top_logprobs", std::move(tops)},
              {"text_offset", std::move(offsets)}};
}

json head(const std::string& id, const char* object, int64_t created, const std::string& model) {
  return json{{"id", id}, {"object", object}, {"created", created}, {"model", sanitize_utf8(model)},
              {"system_fingerprint", nullptr}};
}

json completion_choice(const CompletionChoice& c) {
  return json{{"index", c.index}, {"text", sanitize_utf8(c.text)}, {"logprobs", legacy_logprobs(c)},
              {"finish_reason", finish(c.finish_reason)}};
}

}  // namespace

json chat_completion(const std::string& id, int64_t created, const std::string& model,
                     const std::vector<ChatChoice>& choices, const Usage& usage) {
  json j = head(id, "chat.completion", created, model);
  json cs = json::array();
  for (const ChatChoice& c : choices) {
    const bool calls = c.tool_calls.is_array() && !c.tool_calls.empty();
    json message = {{"role", "assistant"},
                    {"content", calls && c.content.empty() ? json(nullptr) : json(sanitize_utf8(c.content))},
                    {"refusal", nullptr},
                    {"annotations", json::array()}};
    if (!c.reasoning.empty()) {
      message["reasoning_content"] = sanitize_utf8(c.reasoning);
      message["reasoning"] = message["reasoning_content"];
    }
    if (calls) message["tool_calls"] = sanitize_calls(c.tool_calls);
    cs.push_back({{"index", c.index}, {"message", std::move(message)}, {"logprobs", chat_logprobs(c.logprobs)},
                  {"finish_reason", finish(c.finish_reason)}});
  }
  j["choices"] = std::move(cs);
  j["usage"] = usage_json_chat(usage);
  return j;
}

json text_completion(const std::string& id, int64_t created, const std::string& model,
                     const std::vector<CompletionChoice>& choices, const Usage& usage) {
  json j = head(id, "text_completion", created, model);
  json cs = json::array();
  for (const CompletionChoice& c : choices) cs.push_back(completion_choice(c));
  j["choices"] = std::move(cs);
  j["usage"] = usage_json(usage);
  return j;
}

json chat_chunk(const std::string& id, int64_t created, const std::string& model, const ChatDelta& d,
                bool include_usage) {
  json j = head(id, "chat.completion.chunk", created, model);
  json delta = json::object();
  if (d.role) {
    delta["role"] = "assistant";
    delta["content"] = sanitize_utf8(d.content.value_or(""));
    delta["refusal"] = nullptr;
  } else if (d.content) {
    delta["content"] = sanitize_utf8(*d.content);
  }
  if (d.reasoning) {
    delta["reasoning_content"] = sanitize_utf8(*d.reasoning);
    delta["reasoning"] = delta["reasoning_content"];
  }
  if (d.tool_calls.is_array()) delta["tool_calls"] = sanitize_calls(d.tool_calls);
  j["choices"] = json::array({{{"index", d.index},
                               {"delta", std::move(delta)},
                               {"logprobs", chat_logprobs(d.logprobs)},
                               {"finish_reason", d.finish_reason ? finish(*d.finish_reason) : json(nullptr)}}});
  if (include_usage) j["usage"] = nullptr;
  return j;
}

json chat_usage_chunk(const std::string& id, int64_t created, const std::string& model, const Usage& usage) {
  json j = head(id, "chat.completion.chunk", created, model);
  j["choices"] = json::array();
  j["usage"] = usage_json_chat(usage);
  return j;
}

json completion_chunk(const std::string& id, int64_t created, const std::string& model, const CompletionChoice& c,
                      bool include_usage) {
  json j = head(id, "text_completion", created, model);
  j["choices"] = json::array({completion_choice(c)});
  if (include_usage) j["usage"] = nullptr;
  return j;
}

json completion_usage_chunk(const std::string& id, int64_t created, const std::string& model, const Usage& usage) {
  json j = head(id, "text_completion", created, model);
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return j;
}

}  // namespace oxyd::server::protocol
