// Shared serving helpers and GenerationGroup (see serving.h).
#include <algorithm>
#include <cstdio>
#include <thread>

#include "server/serving.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

Clock::time_point ServingContext::deadline(std::optional<double> request_timeout) const {
  double t = request_timeout_s;
  if (request_timeout && *request_timeout > 0) t = t > 0 ? std::min(t, *request_timeout) : *request_timeout;
  if (t <= 0) return Clock::time_point::max();
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t));
}

void log_unknown_fields(const ServingContext& ctx, const char* endpoint, const std::vector<std::string>& fields) {
  if (!ctx.log_debug || fields.empty()) return;
  std::string list;
  for (const auto& f : fields) {
    // A client's key, shown safely: control bytes as '?', at most 64 bytes each, 32 keys in all.
    std::string k = f.substr(0, 64);
    for (char& c : k)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    list += (list.empty() ? "'" : ", '") + k + "'";
    if (&f - fields.data() == 31 && fields.size() > 32) {
      list += ", and " + std::to_string(fields.size() - 32) + " more";
      break;
    }
  }
  std::fprintf(stderr, "oxydllm: debug: %s: ignored unknown field(s): %s\n", endpoint, list.c_str());
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(protocol::error_body(e), "application/json");
}

json parse_json_body(const httplib::Request& req) {
  json body = protocol::parse_body(req.body);
  if (!body.is_object()) throw protocol::bad_request("the request body must be a JSON object");
  return body;
}

ApiError timeout_error(double seconds) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "the request did not finish within its timeout of %g s (--request-timeout)", seconds);
  return ApiError(408, "timeout_error", buf, "", "request_timeout");
}

ApiError shutdown_error() {
  return ApiError(503, "server_error", "the server is shutting down; retry against another instance", "",
                  "server_shutting_down");
}

ApiError client_closed_error() {
  return ApiError(StreamRecord::kClientClosed, "invalid_request_error", "the client closed the connection", "",
                  "client_closed_request");
}

bool finish_stream(StreamRecord& rec, httplib::DataSink& sink, const ApiError* error) {
  rec.finish(error ? error->status : 200);
  if (error) {
    const std::string ev = "data: " + protocol::error_body(*error) + "\n\n";
    if (!sink.write(ev.data(), ev.size())) return false;
  }
  const std::string done = protocol::sse_done();
  return sink.write(done.data(), done.size());
}

void require_model_field(const std::string& model) {
  if (model.empty())
    throw protocol::bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter");
}

namespace {
// A token's text as it appears inside generated text: decoded after an anchor token and cut
// after the anchor's text, so decoders that strip a leading space of the whole string
// (SentencePiece) keep the token's own space, matching the streamed content.
class TokenPieces {
 public:
  explicit TokenPieces(const tokenizer::Tokenizer& tok) : tok_(tok), anchor_(tok.token_to_id("a")) {
    if (anchor_ >= 0) anchor_text_ = tok.decode({anchor_}, false);
  }
  std::string operator()(int32_t id) const {
    if (anchor_ >= 0) {
      const std::string both = tok_.decode({anchor_, id}, false);
      if (both.compare(0, anchor_text_.size(), anchor_text_) == 0) return both.substr(anchor_text_.size());
    }
    return tok_.decode({id}, false);
  }

 private:
  const tokenizer::Tokenizer& tok_;
  int32_t anchor_;
  std::string anchor_text_;
};
}  // namespace

std::vector<protocol::TokenLogprob> to_logprobs(const tokenizer::Tokenizer& tok,
                                                const std::vector<sample::SampleResult>& results) {
  std::vector<protocol::TokenLogprob> out;
  if (results.empty()) return out;
  const TokenPieces piece(tok);
  out.reserve(results.size());
  for (const auto& r : results) {
    protocol::TokenLogprob t;
    t.token = piece(r.token);
    t.bytes.assign(t.token.begin(), t.token.end());
    t.logprob = r.logprob;
    for (const auto& [id, lp] : r.top_logprobs) t.top.emplace_back(piece(id), lp);
    out.push_back(std::move(t));
  }
  return out;
}

// ---- GenerationGroup -----------------------------------------------------------------------

GenerationGroup::GenerationGroup(ServingContext& ctx, engine::LLMEngine& model, std::string model_id)
    : ctx_(ctx), model_(model), model_id_(std::move(model_id)) {
  require_generation_model(model, model_id_);
}

void require_generation_model(const engine::LLMEngine& model, const std::string& id) {
  if (!model.generates())
    throw protocol::bad_request("The model '" + id + "' is an " + model.task() + " model: it does not generate "
                                "text (use /v1/" + (model.task() == "embed" ? "embeddings" : "rerank") + ").",
                                "model", "model_not_supported");
}

GenerationGroup::~GenerationGroup() {
  for (Slot& s : slots_) {
    if (!s.gen) continue;
    if (!s.ended) s.gen->abort();
    if (s.gen->queue_full()) continue;
    double tps = -1;
    const double secs = std::chrono::duration<double>(s.t_last - s.t_first).count();
    if (s.got_token && s.gen->num_completion_tokens() > 1 && secs > 0)
      tps = (s.gen->num_completion_tokens() - 1) / secs;
    ctx_.metrics.observe_generation(model_id_, s.gen->time_to_first_token_s(), tps, s.gen->num_prompt_tokens(),
                                    s.gen->num_completion_tokens());
  }
}

void GenerationGroup::add(int32_t index, int32_t prompt_idx, engine::GenerationParams params, uint64_t seed) {
  Slot s;
  s.index = index;
  s.prompt_idx = prompt_idx;
  try {
    s.gen = std::make_unique<engine::Generation>(model_, std::move(params), seed);
  } catch (const Error& e) {
    abort_all();
    throw protocol::from_error(e);
  }
  slots_.push_back(std::move(s));
}

bool GenerationGroup::poll(Slot& s, engine::GenerationChunk& out, Clock::time_point until) {
  if (s.has_pending) {
    out = std::move(s.pending);
    s.has_pending = false;
  } else {
    switch (s.gen->next(out, until)) {
      case engine::Generation::Next::CHUNK: break;
      case engine::Generation::Next::END: s.ended = true; return false;
      case engine::Generation::Next::TIMEOUT: return false;
    }
  }
  if (!out.tokens.empty()) {
    s.t_last = Clock::now();
    if (!s.got_token) s.t_first = s.t_last;
    s.got_token = true;
  }
  if (out.finish_reason != engine::FinishReason::NONE) {
    s.finish = out.finish_reason;
    s.ended = true;
  }
  return true;
}

bool GenerationGroup::client_gone() {
  if (!watch_) return false;
  const auto now = Clock::now();
  if (now < next_watch_check_) return false;
  next_watch_check_ = now + kWatchInterval;
  return watch_->client_gone();
}

// How long one blocking wait may last: up to the deadline, 200 ms at most so the drain flag is
// seen, kWatchInterval with a client watch.
Clock::time_point GenerationGroup::wait_until(Clock::time_point deadline, Clock::time_point now) const {
  return std::min(deadline, now + (watch_ ? std::chrono::milliseconds(kWatchInterval) : std::chrono::milliseconds(200)));
}

ApiError GenerationGroup::failure(const Slot& s, const std::string& error) const {
  if (s.gen && s.gen->queue_full())
    return ApiError(429, "rate_limit_error",
                    "the request queue of model " + model_id_ + " is full (--max-queued-requests); retry later", "",
                    "rate_limit_exceeded");
  if (!error.empty()) return ApiError(500, "server_error", "the model failed on this request: " + error);
  return ApiError(500, "server_error", "the engine ended the request early (model unloaded or shutdown)");
}

void GenerationGroup::start(Clock::time_point deadline, double timeout_s) {
  if (slots_.empty()) return;
  {
    Slot& s = slots_.front();
    while (!s.has_pending && !s.ended) {
      if (ctx_.drain_expired) {
        abort_all();
        throw shutdown_error();
      }
      if (client_gone()) {
        abort_all();
        throw client_closed_error();
      }
      const auto now = Clock::now();
      if (now >= deadline) {
        abort_all();
        throw timeout_error(timeout_s);
      }
      const auto until = wait_until(deadline, now);
      switch (s.gen->next(s.pending, until)) {
        case engine::Generation::Next::CHUNK: s.has_pending = true; break;
        case engine::Generation::Next::END: s.ended = true; break;
        case engine::Generation::Next::TIMEOUT: break;
      }
    }
    if (s.gen->queue_full()) {
      abort_all();
      throw failure(s, "");
    }
  }
}

GenerationGroup::Event GenerationGroup::next(size_t& slot, engine::GenerationChunk& out, Clock::time_point deadline) {
  for (;;) {
    std::vector<size_t> live;
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].ended) live.push_back(i);
    if (live.empty()) return Event::DONE;
    if (ctx_.drain_expired) return Event::SHUTDOWN;
    if (client_gone()) {
      abort_all();
      return Event::CLIENT_GONE;
    }
    const auto now = Clock::now();
    if (now >= deadline) return Event::TIMEOUT;
    if (live.size() == 1) {
      if (poll(slots_[live[0]], out, wait_until(deadline, now))) {
        slot = live[0];
        return Event::CHUNK;
      }
      continue;
    }
    // Several choices: take whatever is ready, round-robin; block briefly when nothing is.
    for (size_t k = 0; k < live.size(); ++k) {
      const size_t i = live[(rr_ + k) % live.size()];
      if (poll(slots_[i], out, now)) {
        rr_ = (rr_ + k + 1) % live.size();
        slot = i;
        return Event::CHUNK;
      }
    }
    const size_t i = live[rr_ % live.size()];
    rr_++;
    if (poll(slots_[i], out, std::min(deadline, Clock::now() + std::chrono::milliseconds(5)))) {
      slot = i;
      return Event::CHUNK;
    }
  }
}

void GenerationGroup::abort_all() {
  for (Slot& s : slots_)
    if (s.gen && !s.ended) s.gen->abort();
}

protocol::Usage GenerationGroup::usage() const {
  protocol::Usage u;
  std::vector<int32_t> seen;
  for (const Slot& s : slots_) {
    if (std::find(seen.begin(), seen.end(), s.prompt_idx) == seen.end()) {
      seen.push_back(s.prompt_idx);
      u.prompt_tokens += s.gen->num_prompt_tokens();
      u.cached_tokens += s.gen->num_cached_tokens();
    }
    u.completion_tokens += s.gen->num_completion_tokens();
  }
  return u;
}

grammar::GrammarSpec checked_grammar(engine::LLMEngine& m, const protocol::CommonParams& c) {
  if (c.grammar.empty()) return c.grammar;
  try {
    m.grammar_compiler(c.grammar.special_text).compile(c.grammar);
  } catch (const Error& e) {
    const bool schema = c.grammar.kind == grammar::GrammarSpec::Kind::JSON_SCHEMA;
    throw protocol::bad_request(std::string(schema ? "Invalid schema for '" : "Invalid grammar for '") + c.grammar_param +
                                    "': " + e.what(),
                                c.grammar_param, schema ? "invalid_json_schema" : "invalid_value");
  }
  return c.grammar;
}

}  // namespace oxyd::server
