// What the route handlers share: the serving context (models, metrics, timeouts, shutdown state),
// JSON/error response helpers, and GenerationGroup — the n Generations behind one request, read
// as one ordered stream of chunks under the request deadline and the shutdown drain. Internal to
// server/ (http_server.cc wires the handlers in serving_*.cc to routes).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include "engine/generation.h"
#include "server/connection_watch.h"
#include "server/metrics.h"
#include "server/model_manager.h"
#include "server/protocol.h"

namespace oxyd::server {

using Clock = std::chrono::steady_clock;

struct ServingContext {
  ModelManager& models;
  Metrics& metrics;
  double request_timeout_s = 300;     // 0 = off
  bool log_debug = false;             // --log-level debug: per-request details on stderr
  protocol::json chat_template_defaults = protocol::json::object();  // ServerOptions::chat_template_defaults
  std::atomic<bool> draining{false};  // shutdown began: new requests get 503
  std::atomic<bool> drain_expired{false};  // --shutdown-timeout passed: end in-flight work now
  /// Deadline of a request starting now (a per-request timeout field may shorten it).
  Clock::time_point deadline(std::optional<double> request_timeout_s = std::nullopt) const;
};

/// Per-request facts the transport records in metrics after the handler returns.
struct RequestInfo {
  std::string model;
  std::string endpoint;
  bool counted = false;  // a StreamRecord counts it when its stream ends (the transport must not)
};

/// The metrics count of a streamed request, made when its outcome is known: the handler returns
/// (and the 200 header goes out) before the body is written, so the transport cannot count it.
/// finish(status) counts once, before the final event is written (200, or the status of the error
/// chunk); a stream that ends without it (the client left) is counted as 499 when destroyed.
class StreamRecord {
 public:
  StreamRecord(Metrics& metrics, RequestInfo& info) : metrics_(metrics), model_(info.model), endpoint_(info.endpoint) {
    info.counted = true;
  }
  ~StreamRecord() { finish(kClientClosed); }
  StreamRecord(const StreamRecord&) = delete;
  StreamRecord& operator=(const StreamRecord&) = delete;
  void finish(int status) {
    if (done_.exchange(true)) return;
    metrics_.count_request(model_, endpoint_, status);
  }
  static constexpr int kClientClosed = 499;  // nginx's "client closed request"

 private:
  Metrics& metrics_;
  std::string model_, endpoint_;
  std::atomic<bool> done_{false};
};

/// Ends an SSE stream: counts it in `rec` (200, or the error's status), writes the error event when
/// there is one, then `data: [DONE]`. False when a write failed (the client is gone).
bool finish_stream(StreamRecord& rec, httplib::DataSink& sink, const protocol::ApiError* error = nullptr);

/// The error a request whose client disconnected ends with (status 499, never delivered: it only
/// sets the status the metrics count).
protocol::ApiError client_closed_error();

/// At debug log level, one stderr line naming the request fields the server ignored.
void log_unknown_fields(const ServingContext& ctx, const char* endpoint, const std::vector<std::string>& fields);

void send_json(httplib::Response& res, int status, const protocol::json& body);
void send_error(httplib::Response& res, const protocol::ApiError& e);
/// The parsed body, or ApiError 400 (invalid JSON / not an object).
protocol::json parse_json_body(const httplib::Request& req);

protocol::ApiError timeout_error(double seconds);
protocol::ApiError shutdown_error();
/// 400 missing_required_parameter when a generation request names no model.
void require_model_field(const std::string& model);
/// 400 model_not_supported when `model` embeds or ranks instead of generating.
void require_generation_model(const engine::LLMEngine& model, const std::string& id);
/// Compiles the request's grammar (cached, so its Generations reuse it): a schema, regex or grammar
/// the engine cannot compile is a 400 naming the field (code invalid_json_schema for a schema).
grammar::GrammarSpec checked_grammar(engine::LLMEngine& m, const protocol::CommonParams& c);

/// Token results → OpenAI logprob entries (text of each token, its bytes, top alternatives).
std::vector<protocol::TokenLogprob> to_logprobs(const tokenizer::Tokenizer& tok,
                                                const std::vector<sample::SampleResult>& results);

/// The Generations behind one request (one per prompt × n), read as one stream of chunks.
class GenerationGroup {
 public:
  struct Slot {
    int32_t index = 0;        // the choice index
    int32_t prompt_idx = 0;   // which prompt (completions with several prompts)
    std::unique_ptr<engine::Generation> gen;
    bool ended = false;       // its last chunk was returned
    engine::FinishReason finish = engine::FinishReason::NONE;
    bool has_pending = false;  // a chunk read by start() not yet returned
    engine::GenerationChunk pending;
    Clock::time_point t_first, t_last;
    bool got_token = false;
  };
  GenerationGroup(ServingContext& ctx, engine::LLMEngine& model, std::string model_id);
  ~GenerationGroup();  // aborts unfinished generations and records metrics

  /// Submits one Generation. Throws ApiError (400 for a bad request, from the engine's checks).
  void add(int32_t index, int32_t prompt_idx, engine::GenerationParams params, uint64_t seed);
  /// Waits for the first generation's first output (so a full queue is a 429 before any byte is
  /// sent); throws ApiError 429, 408 at the deadline, 503 when the shutdown drain expired. Errors
  /// abort every generation. A later choice rejected by the queue shows as an ABORT chunk.
  void start(Clock::time_point deadline, double timeout_s);

  /// Checks `watch` (every kWatchInterval while waiting) and ends the request when the client is
  /// gone: start() throws client_closed_error(), next() returns CLIENT_GONE; both abort every
  /// generation first. The watch must outlive the group's use.
  void watch_client(const ConnectionWatch* watch) { watch_ = watch && watch->found() ? watch : nullptr; }
  static constexpr std::chrono::milliseconds kWatchInterval{25};

  enum class Event { CHUNK, DONE, TIMEOUT, SHUTDOWN, CLIENT_GONE };
  /// The next chunk of any unfinished slot (`slot` = its position in slots()).
  Event next(size_t& slot, engine::GenerationChunk& out, Clock::time_point deadline);
  void abort_all();
  /// The error for a slot that ended with ABORT/ERROR: 429 when the queue rejected it.
  protocol::ApiError failure(const Slot& s, const std::string& error) const;
  std::vector<Slot>& slots() { return slots_; }
  /// Usage over the group: prompt tokens counted once per prompt, completion tokens of all.
  protocol::Usage usage() const;

 private:
  bool poll(Slot& s, engine::GenerationChunk& out, Clock::time_point until);
  bool client_gone();  // rate-limited watch_->client_gone()
  Clock::time_point wait_until(Clock::time_point deadline, Clock::time_point now) const;
  ServingContext& ctx_;
  engine::LLMEngine& model_;
  std::string model_id_;
  std::vector<Slot> slots_;
  size_t rr_ = 0;  // round-robin position
  const ConnectionWatch* watch_ = nullptr;
  Clock::time_point next_watch_check_{};
};

// Route handlers (serving_chat.cc, serving_completion.cc, serving_misc.cc). Each may throw
// ApiError / oxyd::Error; the transport turns them into error responses.
void handle_chat(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
/// What a chat request renders through the template: its messages; its tools unless tool_choice
/// is "none" (kept out of the prompt, as OpenAI does); the server's chat_template_defaults under
/// the request's chat_template_kwargs (enable_thinking, reasoning_effort).
chat::ChatTemplateInputs chat_template_inputs(const ServingContext& ctx, const protocol::ChatRequest& cr);
void handle_completion(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_models(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_model(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_tokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_detokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_apply_template(ServingContext& ctx, const httplib::Request& req, httplib::Response& res,
                           RequestInfo& info);
void handle_metrics(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
// serving_embeddings.cc
void handle_embeddings(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_rerank(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);

}  // namespace oxyd::server
