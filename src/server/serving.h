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

#include "server/generation.h"
#include "server/metrics.h"
#include "server/model_manager.h"
#include "server/protocol.h"

namespace oxyd::server {

using Clock = std::chrono::steady_clock;

struct ServingContext {
  ModelManager& models;
  Metrics& metrics;
  double request_timeout_s = 300;     // 0 = off
  std::atomic<bool> draining{false};  // shutdown began: new requests get 503
  std::atomic<bool> drain_expired{false};  // --shutdown-timeout passed: end in-flight work now
  /// Deadline of a request starting now (a per-request timeout field may shorten it).
  Clock::time_point deadline(std::optional<double> request_timeout_s = std::nullopt) const;
};

/// Per-request facts the transport records in metrics after the handler returns.
struct RequestInfo {
  std::string model;
  std::string endpoint;
};

void send_json(httplib::Response& res, int status, const protocol::json& body);
void send_error(httplib::Response& res, const protocol::ApiError& e);
/// The parsed body, or ApiError 400 (invalid JSON / not an object).
protocol::json parse_json_body(const httplib::Request& req);

protocol::ApiError timeout_error(double seconds);
protocol::ApiError shutdown_error();

/// Token results → OpenAI logprob entries (text of each token, its bytes, top alternatives).
std::vector<protocol::TokenLogprob> to_logprobs(const tokenizer::Tokenizer& tok,
                                                const std::vector<sample::SampleResult>& results);

/// The Generations behind one request (one per prompt × n), read as one stream of chunks.
class GenerationGroup {
 public:
  struct Slot {
    int32_t index = 0;        // the choice index
    int32_t prompt_idx = 0;   // which prompt (completions with several prompts)
    std::unique_ptr<Generation> gen;
    bool ended = false;       // its last chunk was returned
    engine::FinishReason finish = engine::FinishReason::NONE;
    bool has_pending = false;  // a chunk read by start() not yet returned
    GenerationChunk pending;
    Clock::time_point t_first, t_last;
    bool got_token = false;
  };
  GenerationGroup(ServingContext& ctx, LoadedModel& model, std::string model_id);
  ~GenerationGroup();  // aborts unfinished generations and records metrics

  /// Submits one Generation. Throws ApiError (400 for a bad request, from the engine's checks).
  void add(int32_t index, int32_t prompt_idx, GenerationParams params, uint64_t seed);
  /// Waits for the first generation's first output (so a full queue is a 429 before any byte is
  /// sent); throws ApiError 429, 408 at the deadline, 503 when the shutdown drain expired. Errors
  /// abort every generation. A later choice rejected by the queue shows as an ABORT chunk.
  void start(Clock::time_point deadline, double timeout_s);

  enum class Event { CHUNK, DONE, TIMEOUT, SHUTDOWN };
  /// The next chunk of any unfinished slot (`slot` = its position in slots()).
  Event next(size_t& slot, GenerationChunk& out, Clock::time_point deadline);
  void abort_all();
  /// The error for a slot that ended with ABORT/ERROR: 429 when the queue rejected it.
  protocol::ApiError failure(const Slot& s, const std::string& error) const;
  std::vector<Slot>& slots() { return slots_; }
  /// Usage over the group: prompt tokens counted once per prompt, completion tokens of all.
  protocol::Usage usage() const;

 private:
  bool poll(Slot& s, GenerationChunk& out, Clock::time_point until);
  ServingContext& ctx_;
  LoadedModel& model_;
  std::string model_id_;
  std::vector<Slot> slots_;
  size_t rr_ = 0;  // round-robin position
};

// Route handlers (serving_chat.cc, serving_completion.cc, serving_misc.cc). Each may throw
// ApiError / oxyd::Error; the transport turns them into error responses.
void handle_chat(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_completion(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_models(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_model(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_tokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_detokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);
void handle_apply_template(ServingContext& ctx, const httplib::Request& req, httplib::Response& res,
                           RequestInfo& info);
void handle_metrics(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info);

}  // namespace oxyd::server
