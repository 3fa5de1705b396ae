// llama.cpp-server's utility endpoints, in its shapes (tools/server in llama.cpp): /tokenize
// {content, add_special, parse_special, with_pieces} → {tokens}, /detokenize {tokens} → {content},
// /apply-template {messages...} → {prompt}. /tokenize also takes vLLM's {prompt, add_special_tokens}
// and then answers in vLLM's shape. Same error rules as the OpenAI endpoints.
#include <limits>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

TokenizeRequest parse_tokenize_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  TokenizeRequest r;
  const auto content = opt_string(body, "content", "content"), prompt = opt_string(body, "prompt", "prompt");
  if (content && prompt)
    throw bad_request("Give the text to tokenize once: 'content' (llama.cpp) or 'prompt' (vLLM), not both.", "prompt");
  if (!content && !prompt)
    throw bad_request("Missing required parameter: 'content' (or vLLM's 'prompt'): the text to tokenize.", "content",
                      "missing_required_parameter");
  r.vllm = prompt.has_value();
  r.content = content ? *content : *prompt;
  r.add_special = r.vllm;  // vLLM's add_special_tokens defaults to true, llama.cpp's add_special to false
  if (auto b = opt_bool(body, "add_special_tokens", "add_special_tokens")) r.add_special = *b;
  if (auto b = opt_bool(body, "add_special", "add_special")) r.add_special = *b;
  if (auto b = opt_bool(body, "parse_special", "parse_special")) r.parse_special = *b;
  if (auto b = opt_bool(body, "with_pieces", "with_pieces")) r.with_pieces = *b;
  return r;
}

json tokenize_response(const std::vector<int32_t>& ids, const std::vector<std::string>* pieces) {
  json tokens = json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!pieces) {
      tokens.push_back(ids[i]);
      continue;
    }
    const std::string& p = pieces->at(i);
    json piece;
    if (invalid_utf8_at(p) == std::string::npos) {
      piece = p;
    } else {
      piece = json::array();
      for (const char c : p) piece.push_back(static_cast<int>(static_cast<uint8_t>(c)));
    }
    tokens.push_back({{"id", ids[i]}, {"piece", std::move(piece)}});
  }
  return json{{"tokens", std::move(tokens)}};
}

json tokenize_response_vllm(const std::vector<int32_t>& ids, int32_t max_model_len) {
  return json{{"count", ids.size()}, {"max_model_len", max_model_len}, {"tokens", ids}, {"token_strs", nullptr}};
}

std::vector<int32_t> parse_detokenize_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  std::vector<int32_t> ids;
  const json* t = field(body, "tokens");
  if (!t) return ids;
  if (!t->is_array()) invalid_type("tokens", "an array of token ids", *t);
  ids.reserve(t->size());
  for (size_t i = 0; i < t->size(); ++i)
    ids.push_back(static_cast<int32_t>(
        as_int((*t)[i], "tokens[" + std::to_string(i) + "]", 0, std::numeric_limits<int32_t>::max())));
  return ids;
}

json detokenize_response(const std::string& content) { return json{{"content", sanitize_utf8(content)}}; }

json apply_template_response(const std::string& prompt) { return json{{"prompt", sanitize_utf8(prompt)}}; }

}  // namespace oxyd::server::protocol
