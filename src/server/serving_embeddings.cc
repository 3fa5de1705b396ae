// POST /v1/embeddings and POST /v1/rerank: tokenize (or take the ids), check every input against
// the model's maximum here so the answer is OpenAI's 400 context_length_exceeded naming the input
// (or cut it when the request asks, protocol_embeddings.cc), then LLMEngine::embed, which batches
// the sequences with other clients' in the model's EmbeddingQueue. A request for the wrong kind
// of model (embeddings from a generator, rerank from an embedder) is a 400 naming what it does.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <memory>
#include <optional>

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

// Queues `in` and waits for its rows under the request deadline (--request-timeout, or the body's
// "timeout" if shorter): past it 408; the client gone or the shutdown drain expired, the request is
// cancelled in the queue (never run) and the wait ends at once.
std::vector<float> run(ServingContext& ctx, const httplib::Request& req, engine::LLMEngine& m,
                       engine::EmbeddingInput in, std::optional<double> timeout) {
  double timeout_s = timeout && *timeout > 0 ? *timeout : ctx.request_timeout_s;
  if (ctx.request_timeout_s > 0) timeout_s = std::min(timeout_s, ctx.request_timeout_s);
  const Clock::time_point deadline = ctx.deadline(timeout);
  in.deadline = deadline;
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  in.cancelled = cancelled;
  std::future<std::vector<float>> f;
  try {
    f = m.submit_embed(std::move(in));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::OUT_OF_MEMORY)  // the queue is full
      throw ApiError(429, "rate_limit_error", e.message(), "", "queue_full");
    throw;
  }
  std::optional<ConnectionWatch> watch;  // looked up only for a request that waits (a /proc scan)
  for (;;) {
    const auto now = Clock::now();
    const auto step = std::min(deadline, now + std::chrono::milliseconds(50));
    if (f.wait_until(step) == std::future_status::ready) {
      try {
        return f.get();
      } catch (const Error&) {
        if (Clock::now() >= deadline) throw timeout_error(timeout_s);  // dropped by the queue at its deadline
        throw;
      }
    }
    auto give_up = [&](ApiError e) {
      cancelled->store(true);
      throw e;
    };
    if (ctx.drain_expired) give_up(shutdown_error());
    if (!watch) watch.emplace(req);
    if (watch->found() && watch->client_gone()) give_up(client_closed_error());
    if (Clock::now() >= deadline) give_up(timeout_error(timeout_s));
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
  if (er.is_ids) {
    // Ids must be this model's own. A client that tokenizes for OpenAI's models (LangChain's
    // OpenAIEmbeddings by default: tiktoken cl100k_base ids) sends ids of another vocabulary; those
    // past ours are caught here, those within it cannot be told apart (docs/architecture.md).
    const int64_t vocab = m.config().vocab_size;
    for (size_t i = 0; i < er.ids.size(); ++i)
      for (int32_t t : er.ids[i])
        if (t >= vocab)
          throw protocol::bad_request(
              "input[" + std::to_string(i) + "] has token id " + std::to_string(t) + ", outside this model's vocabulary [0, " +
                  std::to_string(vocab) + "). Token ids must come from this model's tokenizer; a client that " +
                  "tokenizes with tiktoken (LangChain's OpenAIEmbeddings by default) should send text instead " +
                  "(check_embedding_ctx_length=False).",
              "input");
    in.ids = std::move(er.ids);
  } else
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
  std::vector<float> rows = run(ctx, req, m, std::move(in), er.timeout_s);
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
  const std::vector<float> logits = run(ctx, req, m, std::move(in), rr.timeout_s);
  // relevance_score: sigmoid of the first logit (sentence-transformers' CrossEncoder default for one
  // label); with several labels, one label's softmax probability (ModelConfig::rank_score_label:
  // an HF checkpoint's last, the "relevant" class; a GGUF's first, as llama.cpp's server scores it).
  const int64_t pick = m.config().rank_score_label >= 0 ? std::min(m.config().rank_score_label, labels - 1) : labels - 1;
  std::vector<float> scores(rr.documents.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const float* l = logits.data() + i * size_t(labels);
    if (labels == 1) {
      scores[i] = float(1.0 / (1.0 + std::exp(-double(l[0]))));
    } else {
      double mx = l[0], sum = 0;
      for (int64_t k = 1; k < labels; ++k) mx = std::max(mx, double(l[k]));
      for (int64_t k = 0; k < labels; ++k) sum += std::exp(double(l[k]) - mx);
      scores[i] = float(std::exp(double(l[pick]) - mx) / sum);
    }
  }
  send_json(res, 200, protocol::rerank_response(lease.id(), rr, scores, tokens));
}

}  // namespace oxyd::server
