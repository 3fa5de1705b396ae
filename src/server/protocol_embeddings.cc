// /v1/embeddings (OpenAI's shape: input as a string, strings, token ids or lists of token ids;
// encoding_format float | base64; dimensions) and /v1/rerank (the Cohere / Jina shape llama.cpp's
// and vLLM's servers accept: query, documents, top_n, return_documents). Extensions, both
// optional: "truncate": true cuts an input over the model's maximum (its first max − 1 tokens and
// its last, so a closing [SEP] / EOS stays) instead of answering 400; "prompt_name" prepends the
// model's sentence-transformers prompt of that name (Qwen3-Embedding's "query" instruction).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

namespace {

constexpr int64_t kMaxTokenId = (int64_t{1} << 31) - 1;

std::string base64(const void* data, size_t n) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += a[v >> 18 & 63];
    out += a[v >> 12 & 63];
    out += i + 1 < n ? a[v >> 6 & 63] : '=';
    out += i + 2 < n ? a[v & 63] : '=';
  }
  return out;
}

std::vector<int32_t> id_list(const json& v, const std::string& path) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); ++i)
    ids.push_back(static_cast<int32_t>(as_int(v[i], path + "[" + std::to_string(i) + "]", 0, kMaxTokenId)));
  if (ids.empty()) throw bad_request("'" + path + "' must not be an empty list of token ids.", "input");
  return ids;
}

std::string model_field(const json& body) {
  const auto m = opt_string(body, "model", "model");
  if (!m || m->empty())
    throw bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  return *m;
}

}  // namespace

EmbeddingRequest parse_embedding_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  EmbeddingRequest r;
  r.model = model_field(body);
  const json* in = field(body, "input");
  if (!in) throw bad_request("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  const char* shapes = "'input' must be a string, a list of strings, a list of token ids or a list of lists of token ids.";
  if (in->is_string()) {
    r.texts.push_back(in->get<std::string>());
  } else if (in->is_array()) {
    if (in->empty()) throw bad_request("'input' must not be an empty list.", "input");
    const json& first = (*in)[0];
    if (first.is_string()) {
      for (size_t i = 0; i < in->size(); ++i) {
        if (!(*in)[i].is_string()) throw bad_request(shapes, "input");
        r.texts.push_back((*in)[i].get<std::string>());
      }
    } else if (first.is_number()) {
      r.is_ids = true;
      r.ids.push_back(id_list(*in, "input"));
    } else if (first.is_array()) {
      r.is_ids = true;
      for (size_t i = 0; i < in->size(); ++i) {
        if (!(*in)[i].is_array()) throw bad_request(shapes, "input");
        r.ids.push_back(id_list((*in)[i], "input[" + std::to_string(i) + "]"));
      }
    } else {
      throw bad_request(shapes, "input");
    }
  } else {
    throw bad_request(shapes, "input");
  }
  for (const std::string& t : r.texts)
    if (t.empty()) throw bad_request("'input' must not contain an empty string.", "input");
  if (auto f = opt_string(body, "encoding_format", "encoding_format")) {
    if (*f != "float" && *f != "base64")
      throw bad_request("'encoding_format' must be \"float\" or \"base64\", got " + quote_value(json(*f)) + ".",
                        "encoding_format");
    r.base64 = *f == "base64";
  }
  r.dimensions = opt_int(body, "dimensions", "dimensions", 1, kMaxTokenId);
  r.truncate = opt_bool(body, "truncate", "truncate").value_or(false);
  r.prompt_name = opt_string(body, "prompt_name", "prompt_name").value_or("");
  r.timeout_s = opt_number(body, "timeout", "timeout", 0, 1e9, true);
  if (field(body, "user") && !field(body, "user")->is_string()) throw bad_request("'user' must be a string.", "user");
  return r;
}

json embedding_response(const std::string& model, const std::vector<float>& rows, int64_t dim, bool b64,
                        int64_t prompt_tokens) {
  json data = json::array();
  const size_t n = dim > 0 ? rows.size() / size_t(dim) : 0;
  for (size_t i = 0; i < n; ++i) {
    const float* row = rows.data() + i * size_t(dim);
    json e = {{"object", "embedding"}, {"index", i}};
    if (b64) e["embedding"] = base64(row, size_t(dim) * sizeof(float));  // little-endian hosts only
    else e["embedding"] = std::vector<float>(row, row + dim);
    data.push_back(std::move(e));
  }
  return json{{"object", "list"}, {"data", std::move(data)}, {"model", model},
              {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

RerankRequest parse_rerank_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  RerankRequest r;
  r.model = model_field(body);
  const auto q = opt_string(body, "query", "query");
  if (!q) throw bad_request("Missing required parameter: 'query'.", "query", "missing_required_parameter");
  if (q->empty()) throw bad_request("'query' must not be empty.", "query");
  r.query = *q;
  const json* docs = field(body, "documents");
  if (!docs) throw bad_request("Missing required parameter: 'documents'.", "documents", "missing_required_parameter");
  if (!docs->is_array() || docs->empty())
    throw bad_request("'documents' must be a non-empty list of strings.", "documents");
  for (size_t i = 0; i < docs->size(); ++i) {
    const json& d = (*docs)[i];
    const std::string path = "documents[" + std::to_string(i) + "]";
    if (d.is_string()) r.documents.push_back(d.get<std::string>());
    else if (d.is_object() && d.contains("text") && d["text"].is_string()) r.documents.push_back(d["text"].get<std::string>());
    else throw bad_request("'" + path + "' must be a string or an object with a string 'text'.", "documents");
    if (r.documents.back().empty()) throw bad_request("'" + path + "' must not be empty.", "documents");
  }
  r.top_n = opt_int(body, "top_n", "top_n", 1, kMaxTokenId);
  r.return_documents = opt_bool(body, "return_documents", "return_documents").value_or(false);
  r.truncate = opt_bool(body, "truncate", "truncate").value_or(false);
  r.timeout_s = opt_number(body, "timeout", "timeout", 0, 1e9, true);
  return r;
}

json rerank_response(const std::string& model, const RerankRequest& r, const std::vector<float>& scores,
                     int64_t prompt_tokens) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  const size_t n = r.top_n ? std::min(order.size(), size_t(*r.top_n)) : order.size();
  json results = json::array();
  for (size_t k = 0; k < n; ++k) {
    json e = {{"index", order[k]}, {"relevance_score", scores[order[k]]}};
    if (r.return_documents) e["document"] = {{"text", r.documents[order[k]]}};
    results.push_back(std::move(e));
  }
  return json{{"id", new_id("rerank-")}, {"model", model}, {"results", std::move(results)},
              {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

}  // namespace oxyd::server::protocol
