// llama.cpp-server's utility endpoints, in its shapes (tools/server in llama.cpp): /tokenize
// {content, add_special, parse_special, with_pieces} → {tokens}, /detokenize {tokens} → {content},
// /apply-template {messages...} → {prompt}. Same error rules as the OpenAI endpoints.
#include <limits>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

TokenizeRequest parse_tokenize_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  TokenizeRequest r;
  if (auto c = opt_string(body, "content", "content")) r.content = *c;
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
