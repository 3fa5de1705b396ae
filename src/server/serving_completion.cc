// POST /v1/completions (the legacy text API lm-eval and many clients use): prompts as text or
// token ids, one Generation per prompt × n (choice index = prompt * n + i, seeds seed + i),
// echo, and legacy logprobs — with echo the prompt tokens are scored too (GenerationParams.
// prompt_logprobs), the first one null, which is what lm-eval's loglikelihood reads. max_tokens
// defaults to 16 as OpenAI's; 0 with echo returns only the scored prompt.
#include <random>

#include "server/serving.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

namespace {

struct CompletionState {
  ModelLease lease;  // outlives the generations (declared first)
  std::unique_ptr<ConnectionWatch> watch;  // outlives the group that polls it
  std::unique_ptr<GenerationGroup> group;
  std::unique_ptr<StreamRecord> record;    // streams: the metrics count
  std::string id, model;
  int64_t created = 0;
  bool include_usage = false, echo = false, zero_tokens = false;
  int32_t logprobs = -1;
  std::vector<std::string> prompt_texts;       // per prompt (echo)
  std::vector<std::vector<int32_t>> prompt_ids;
  Clock::time_point deadline;
  double timeout_s = 0;
};

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool write(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }
bool ended_badly(engine::FinishReason f) {
  return f == engine::FinishReason::ABORT || f == engine::FinishReason::ERROR;
}

// The echoed prompt's logprob entries: its tokens, the first without a logprob.
std::vector<protocol::TokenLogprob> prompt_entries(const CompletionState& st, int32_t prompt_idx,
                                                   const std::vector<sample::SampleResult>& scored) {
  const auto& tok = st.lease->tokenizer();
  const auto& ids = st.prompt_ids[prompt_idx];
  std::vector<sample::SampleResult> all;
  all.reserve(ids.size());
  if (!ids.empty()) all.push_back({ids[0], 0.0f, {}});
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    sample::SampleResult r = i < scored.size() ? scored[i] : sample::SampleResult{};
    r.token = ids[i + 1];
    all.push_back(std::move(r));
  }
  return to_logprobs(tok, all);
}

// Folds one chunk into a choice (text delta and logprobs); with echo the first chunk carries the
// prompt. `first` = no chunk of this slot was seen before.
void fold(const CompletionState& st, const GenerationGroup::Slot& s, const engine::GenerationChunk& c, bool first,
          protocol::CompletionChoice& out) {
  const bool keep = !st.zero_tokens;  // max_tokens 0: the one generated token is dropped
  if (first && st.echo) {
    out.text += st.prompt_texts[s.prompt_idx];
    if (st.logprobs >= 0) {
      auto e = prompt_entries(st, s.prompt_idx, c.prompt_logprobs);
      out.logprobs->insert(out.logprobs->end(), e.begin(), e.end());
      out.first_logprob_null = 1;
    }
  }
  if (!keep) return;
  out.text += c.text;
  if (st.logprobs >= 0) {
    auto e = to_logprobs(st.lease->tokenizer(), c.tokens);
    out.logprobs->insert(out.logprobs->end(), e.begin(), e.end());
  }
}

std::string finish_name(const CompletionState& st, engine::FinishReason f) {
  return st.zero_tokens ? "length" : engine::finish_reason_name(f);
}

bool stream_completion(CompletionState& st, httplib::DataSink& sink) {
  GenerationGroup& g = *st.group;
  std::vector<bool> seen(g.slots().size(), false);
  std::vector<int64_t> chars_sent(g.slots().size(), 0);  // text_offset base (code points, as Python)
  for (;;) {
    size_t i = 0;
    engine::GenerationChunk c;
    switch (g.next(i, c, st.deadline)) {
      case GenerationGroup::Event::TIMEOUT: {
        g.abort_all();
        const ApiError e = timeout_error(st.timeout_s);
        return finish_stream(*st.record, sink, &e);
      }
      case GenerationGroup::Event::SHUTDOWN: {
        g.abort_all();
        const ApiError e = shutdown_error();
        return finish_stream(*st.record, sink, &e);
      }
      case GenerationGroup::Event::CLIENT_GONE: return false;
      case GenerationGroup::Event::DONE:
        if (st.include_usage &&
            !write(sink, protocol::sse(protocol::completion_usage_chunk(st.id, st.created, st.model, g.usage()))))
          return false;
        return finish_stream(*st.record, sink);
      case GenerationGroup::Event::CHUNK: break;
    }
    const auto& s = g.slots()[i];
    if (ended_badly(c.finish_reason)) {
      g.abort_all();
      const ApiError e = g.failure(s, c.error);
      return finish_stream(*st.record, sink, &e);
    }
    protocol::CompletionChoice ch;
    ch.index = s.index;
    if (st.logprobs >= 0) ch.logprobs.emplace();
    fold(st, s, c, !seen[i], ch);
    seen[i] = true;
    if (c.finish_reason != engine::FinishReason::NONE) ch.finish_reason = finish_name(st, c.finish_reason);
    if (ch.text.empty() && ch.finish_reason.empty() && (!ch.logprobs || ch.logprobs->empty())) continue;
    ch.text_offset_start = chars_sent[i];
    for (unsigned char b : ch.text) chars_sent[i] += (b & 0xC0) != 0x80;
    if (!write(sink, protocol::sse(protocol::completion_chunk(st.id, st.created, st.model, ch, st.include_usage))))
      return false;
  }
}

void respond_whole(CompletionState& st, httplib::Response& res) {
  GenerationGroup& g = *st.group;
  std::vector<protocol::CompletionChoice> choices(g.slots().size());
  std::vector<bool> seen(choices.size(), false);
  for (size_t i = 0; i < choices.size(); ++i) {
    choices[i].index = g.slots()[i].index;
    if (st.logprobs >= 0) choices[i].logprobs.emplace();
  }
  for (;;) {
    size_t i = 0;
    engine::GenerationChunk c;
    const auto ev = g.next(i, c, st.deadline);
    if (ev == GenerationGroup::Event::TIMEOUT) throw timeout_error(st.timeout_s);
    if (ev == GenerationGroup::Event::SHUTDOWN) throw shutdown_error();
    if (ev == GenerationGroup::Event::CLIENT_GONE) throw client_closed_error();
    if (ev == GenerationGroup::Event::DONE) break;
    if (ended_badly(c.finish_reason)) throw g.failure(g.slots()[i], c.error);
    fold(st, g.slots()[i], c, !seen[i], choices[i]);
    seen[i] = true;
  }
  for (size_t i = 0; i < choices.size(); ++i) {
    const auto f = g.slots()[i].finish;
    if (f == engine::FinishReason::NONE || ended_badly(f)) throw g.failure(g.slots()[i], "");
    choices[i].finish_reason = finish_name(st, f);
  }
  protocol::Usage u = g.usage();
  if (st.zero_tokens) u.completion_tokens = 0;
  send_json(res, 200, protocol::text_completion(st.id, st.created, st.model, choices, u));
}

}  // namespace

void handle_completion(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  protocol::CompletionRequest cr = protocol::parse_completion_request(body);
  log_unknown_fields(ctx, "/v1/completions", cr.common.unknown_fields);
  require_model_field(cr.common.model);
  info.model = cr.common.model;
  if (ctx.draining) throw shutdown_error();

  auto st = std::make_shared<CompletionState>();
  st->lease = ctx.models.acquire(cr.common.model);
  info.model = st->lease.id();
  engine::LLMEngine& m = *st->lease;
  require_generation_model(m, st->lease.id());

  st->id = protocol::new_id("cmpl-");
  st->model = cr.common.model;
  st->created = unix_now();
  st->include_usage = cr.common.stream && cr.common.include_usage;
  st->echo = cr.echo;
  st->logprobs = cr.logprobs.value_or(-1);
  const int32_t max_tokens = cr.common.max_tokens.value_or(16);
  st->zero_tokens = max_tokens == 0;
  st->timeout_s = cr.common.timeout_s && *cr.common.timeout_s > 0 ? *cr.common.timeout_s : ctx.request_timeout_s;
  if (ctx.request_timeout_s > 0) st->timeout_s = std::min(st->timeout_s, ctx.request_timeout_s);
  st->deadline = ctx.deadline(cr.common.timeout_s);
  st->group = std::make_unique<GenerationGroup>(ctx, m, st->lease.id());
  st->watch = std::make_unique<ConnectionWatch>(req);
  st->group->watch_client(st->watch.get());

  engine::GenerationParams base;
  base.sampling = cr.common.sampling;
  base.sampling.logprobs = st->logprobs;
  base.max_tokens = st->zero_tokens ? 1 : max_tokens;
  base.stop = cr.common.stop;
  base.stop_token_ids = cr.common.stop_token_ids;
  base.ignore_eos = cr.common.ignore_eos;
  base.skip_special_tokens = cr.common.skip_special_tokens;
  base.min_tokens = cr.common.min_tokens;
  base.include_stop_str_in_output = cr.common.include_stop_str_in_output;
  base.grammar = checked_grammar(m, cr.common);
  if (st->echo && st->logprobs >= 0) base.prompt_logprobs = st->logprobs;

  const uint64_t default_seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  const int32_t n = cr.common.n;
  for (size_t p = 0; p < cr.prompts.size(); ++p) {
    const auto& pr = cr.prompts[p];
    std::vector<int32_t> ids = pr.is_ids ? pr.ids : m.encode_raw_prompt(pr.text);
    if (ids.empty())
      throw protocol::bad_request("prompt " + std::to_string(p) +
                                      " is empty, and this model's tokenizer adds no beginning-of-sequence token "
                                      "to start from",
                                  "prompt");
    const int64_t vocab = m.config().vocab_size;
    for (int32_t id : ids)
      if (id >= vocab)
        throw protocol::bad_request("prompt " + std::to_string(p) + " has token id " + std::to_string(id) +
                                        ", outside the model's vocabulary of " + std::to_string(vocab) + " tokens",
                                    "prompt");
    st->prompt_texts.push_back(pr.is_ids ? m.tokenizer().decode(ids, false) : pr.text);
    st->prompt_ids.push_back(ids);
    for (int32_t i = 0; i < n; ++i) {
      engine::GenerationParams gp = base;
      gp.prompt_ids = ids;
      if (base.sampling.seed) gp.sampling.seed = engine::choice_seed(*base.sampling.seed, i);
      st->group->add(int32_t(p) * n + i, int32_t(p), std::move(gp), default_seed + uint64_t(i));
    }
  }
  st->group->start(st->deadline, st->timeout_s);

  if (!cr.common.stream) {
    respond_whole(*st, res);
    return;
  }
  st->record = std::make_unique<StreamRecord>(ctx.metrics, info);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider("text/event-stream", [st](size_t, httplib::DataSink& sink) {
    bool ok = false;
    try {
      ok = stream_completion(*st, sink);
    } catch (const std::exception& e) {
      st->group->abort_all();
      const ApiError err(500, "server_error", e.what());
      ok = finish_stream(*st->record, sink, &err);
    }
    if (!ok) {
      st->group->abort_all();
      return false;
    }
    sink.done();
    return true;
  });
}

}  // namespace oxyd::server
