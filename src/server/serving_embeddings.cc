// POST /v1/embeddings and POST /v1/rerank: tokenize (or take the ids), check every input against
// the model's maximum here so the answer is OpenAI's 400 context_length_exceeded naming the input
// (or cut it when the request asks, protocol_embeddings.cc), then LLMEngine::embed, which batches
// the sequences with other clients' in the model's EmbeddingQueue. A request for the wrong kind
// of model (embeddings from a generator, rerank from an embedder) is a 400 naming what it does.
#include <cmath>

#include "model/pooling.h"
#include "server/serving.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

namespace {

ApiError wrong_task(const std::string& id, const std::string& task, const char* wanted) {
  const std::string does = task == "generate" ? "generates text (use /v1/chat/completions or /v1/completions)"
                           : task == "embed"  ? "produces embeddings (use /v1/embeddings)"
                                              : "scores query/document pairs (use /v1/rerank)";
  return protocol::bad_request("The model '" + id + "' " + does + "; it cannot serve " + wanted + ".", "model",
                               "model_not_supported");
}

// Each input within the model's maximum: cut when `truncate` (the first max − keep_tail tokens
// and the last keep_tail: [SEP], or a reranker prompt's closing turn), else 400
// context_length_exceeded.
void fit(std::vector<std::vector<int32_t>>& seqs, int64_t max_len, bool truncate, const char* param,
         const std::vector<size_t>& keep_tail = {}) {
  if (max_len <= 0) return;
  for (size_t i = 0; i < seqs.size(); ++i) {
    auto& s = seqs[i];
    if (int64_t(s.size()) <= max_len) continue;
    const size_t tail = keep_tail.empty() ? 1 : keep_tail[i];
    if (!truncate || int64_t(tail) >= max_len)
      throw ApiError(400, "invalid_request_error",
                     std::string(param) + "[" + std::to_string(i) + "] has " + std::to_string(s.size()) +
                         " tokens, more than this model's maximum of " + std::to_string(max_len) +
                         " tokens. Shorten it, or pass \"truncate\": true to cut it to the maximum.",
                     param, "context_length_exceeded");
    std::copy(s.end() - long(tail), s.end(), s.begin() + (max_len - int64_t(tail)));
    s.resize(size_t(max_len));
  }
}

std::vector<float> run(engine::LLMEngine& m, engine::EmbeddingInput in) {
  try {
    return m.embed(std::move(in));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::OUT_OF_MEMORY)  // the queue is full
      throw ApiError(429, "rate_limit_error", e.message(), "", "queue_full");
    throw;
  }
}

}  // namespace

void handle_embeddings(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  protocol::EmbeddingRequest er = protocol::parse_embedding_request(body);
  info.model = er.model;
  if (ctx.draining) throw shutdown_error();
  ModelLease lease = ctx.models.acquire(er.model);
  info.model = lease.id();
  engine::LLMEngine& m = *lease;
  if (m.task() != "embed") throw wrong_task(lease.id(), m.task(), "/v1/embeddings");
  std::string prefix;
  if (!er.prompt_name.empty()) {
    const auto& prompts = m.config().embedding_prompts;
    const auto it = prompts.find(er.prompt_name);
    if (it == prompts.end())
      throw protocol::bad_request("The model '" + lease.id() + "' has no prompt named '" + er.prompt_name + "'.",
                                  "prompt_name");
    prefix = it->second;
  }
  engine::EmbeddingInput in;
  if (er.is_ids) in.ids = std::move(er.ids);
  else
    for (const std::string& t : er.texts) in.ids.push_back(m.encode_embedding_input(prefix + t));
  fit(in.ids, m.max_input_tokens(), er.truncate, "input");
  int64_t tokens = 0;
  for (const auto& s : in.ids) tokens += int64_t(s.size());
  const int64_t D = m.embedding_size();
  if (er.dimensions && *er.dimensions > D)
    throw protocol::bad_request("'dimensions' must be at most this model's " + std::to_string(D) + ", got " +
                                    std::to_string(*er.dimensions) + ".",
                                "dimensions");
  const size_t n = in.ids.size();
  std::vector<float> rows = run(m, std::move(in));
  int64_t dim = D;
  if (er.dimensions && *er.dimensions < D) {  // Matryoshka: the first d values, renormalised
    dim = *er.dimensions;
    std::vector<float> cut(n * size_t(dim));
    for (size_t i = 0; i < n; ++i) {
      std::copy_n(rows.begin() + long(i * size_t(D)), dim, cut.begin() + long(i * size_t(dim)));
      model::l2_normalize(cut.data() + i * size_t(dim), dim);
    }
    rows = std::move(cut);
  }
  send_json(res, 200, protocol::embedding_response(lease.id(), rows, dim, er.base64, tokens));
}

void handle_rerank(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  const protocol::RerankRequest rr = protocol::parse_rerank_request(body);
  info.model = rr.model;
  if (ctx.draining) throw shutdown_error();
  ModelLease lease = ctx.models.acquire(rr.model);
  info.model = lease.id();
  engine::LLMEngine& m = *lease;
  if (m.task() != "rank") throw wrong_task(lease.id(), m.task(), "/v1/rerank");
  // Each pair as the model reads one (LLMEngine::encode_rank_pair): the tokenizer's pair
  // encoding for a cross-encoder, the model's prompt for a decoder reranker.
  engine::EmbeddingInput in;
  std::vector<size_t> keep_tail;
  for (const std::string& d : rr.documents) {
    engine::LLMEngine::RankPair p = m.encode_rank_pair(rr.query, d);
    in.ids.push_back(std::move(p.ids));
    if (!p.types.empty()) in.types.push_back(std::move(p.types));
    keep_tail.push_back(p.keep_tail);
  }
  fit(in.ids, m.max_input_tokens(), rr.truncate, "documents", keep_tail);
  int64_t tokens = 0;
  for (size_t i = 0; i < in.ids.size(); ++i) {
    tokens += int64_t(in.ids[i].size());
    if (!in.types.empty()) in.types[i].resize(in.ids[i].size());  // cut with the ids (types of the tail: 1)
  }
  const int64_t labels = m.embedding_size();
  const std::vector<float> logits = run(m, std::move(in));
  // relevance_score: sigmoid of the first logit (sentence-transformers' CrossEncoder default for one
  // label); with several labels, the last one's softmax probability (the "relevant" class).
  std::vector<float> scores(rr.documents.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const float* l = logits.data() + i * size_t(labels);
    if (labels == 1) {
      scores[i] = float(1.0 / (1.0 + std::exp(-double(l[0]))));
    } else {
      double mx = l[0], sum = 0;
      for (int64_t k = 1; k < labels; ++k) mx = std::max(mx, double(l[k]));
      for (int64_t k = 0; k < labels; ++k) sum += std::exp(double(l[k]) - mx);
      scores[i] = float(std::exp(double(l[labels - 1]) - mx) / sum);
    }
  }
  send_json(res, 200, protocol::rerank_response(lease.id(), rr, scores, tokens));
}

}  // namespace oxyd::server
