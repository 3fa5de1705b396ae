// POST /v1/chat/completions: render the messages through the model's chat template, run one
// Generation per choice (seeds seed, seed+1, ...), answer with one chat.completion or, with
// "stream": true, SSE chunks as OpenAI sends them: a role delta per choice, content, reasoning and
// tool-call deltas, a final empty delta with finish_reason, a usage chunk only with
// stream_options.include_usage, then `data: [DONE]`. A timeout or shutdown mid-stream sends an
// error chunk, then [DONE]. Each choice's text goes through the output parser of the model's chat
// template (chat/output_format.h, server/chat_output.h): reasoning, tool calls (when the request
// has tools and tool_choice is not "none") and content; harmony models (ModelConfig::harmony_chat)
// are decoded with their markers. tool_choice "required" / a named function force a call by
// grammar, and "auto" constrains a call once opened (server/tool_choice.h).
#include <random>

#include "chat/output_format.h"
#include "server/chat_output.h"
#include "server/serving.h"
#include "server/tool_choice.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

namespace {

struct ChatState {
  ModelLease lease;                        // outlives the generations (declared first)
  std::unique_ptr<ConnectionWatch> watch;  // outlives the group that polls it
  std::unique_ptr<GenerationGroup> group;
  std::unique_ptr<StreamRecord> record;    // streams: the metrics count
  std::string id, model;
  int64_t created = 0;
  bool include_usage = false, logprobs = false;
  std::vector<ChoiceOutput> out;           // per choice index
  bool reasoning_usage = false;            // the model reasons: usage reports reasoning_tokens
  Clock::time_point deadline;
  double timeout_s = 0;
};

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Writes one SSE event; false when the client is gone.
bool write(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }

bool ended_badly(engine::FinishReason f) {
  return f == engine::FinishReason::ABORT || f == engine::FinishReason::ERROR;
}

protocol::Usage chat_usage(const ChatState& st) {
  protocol::Usage u = st.group->usage();
  if (st.reasoning_usage) {
    u.reasoning_tokens = 0;
    for (const auto& o : st.out) u.reasoning_tokens += o.reasoning_tokens();
  }
  return u;
}

// The whole stream; false when a write failed (the caller aborts the generations).
bool stream_chat(ChatState& st, httplib::DataSink& sink) {
  GenerationGroup& g = *st.group;
  const tokenizer::Tokenizer& tok = st.lease->tokenizer();
  for (const auto& s : g.slots()) {
    protocol::ChatDelta d;
    d.index = s.index;
    d.role = true;
    d.content = "";
    if (!write(sink, protocol::sse(protocol::chat_chunk(st.id, st.created, st.model, d, st.include_usage)))) return false;
  }
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
            !write(sink, protocol::sse(protocol::chat_usage_chunk(st.id, st.created, st.model, chat_usage(st)))))
          return false;
        return finish_stream(*st.record, sink);
      case GenerationGroup::Event::CHUNK: break;
    }
    const auto& s = g.slots()[i];
    std::vector<protocol::ChatDelta> deltas =
        st.out[i].feed(c.text, c.tokens.size(), c.finish_reason != engine::FinishReason::NONE);
    if (deltas.empty() && st.logprobs && !c.tokens.empty()) deltas.emplace_back().content = "";
    for (size_t k = 0; k < deltas.size(); ++k) {
      protocol::ChatDelta& d = deltas[k];
      d.index = s.index;
      if (k == 0 && st.logprobs) d.logprobs = to_logprobs(tok, c.tokens);
      if (!write(sink, protocol::sse(protocol::chat_chunk(st.id, st.created, st.model, d, st.include_usage))))
        return false;
    }
    if (ended_badly(c.finish_reason)) {
      g.abort_all();
      const ApiError e = g.failure(s, c.error);
      return finish_stream(*st.record, sink, &e);
    }
    if (c.finish_reason != engine::FinishReason::NONE) {
      protocol::ChatDelta d;
      d.index = s.index;
      d.finish_reason = chat_finish_reason(engine::finish_reason_name(c.finish_reason), st.out[i]);
      if (!write(sink, protocol::sse(protocol::chat_chunk(st.id, st.created, st.model, d, st.include_usage))))
        return false;
    }
  }
}

void respond_whole(ChatState& st, httplib::Response& res) {
  GenerationGroup& g = *st.group;
  const tokenizer::Tokenizer& tok = st.lease->tokenizer();
  std::vector<protocol::ChatChoice> choices(g.slots().size());
  for (size_t i = 0; i < choices.size(); ++i) {
    choices[i].index = g.slots()[i].index;
    if (st.logprobs) choices[i].logprobs.emplace();
  }
  for (;;) {
    size_t i = 0;
    engine::GenerationChunk c;
    const auto ev = g.next(i, c, st.deadline);
    if (ev == GenerationGroup::Event::TIMEOUT) throw timeout_error(st.timeout_s);
    if (ev == GenerationGroup::Event::SHUTDOWN) throw shutdown_error();
    if (ev == GenerationGroup::Event::CLIENT_GONE) throw client_closed_error();
    if (ev == GenerationGroup::Event::DONE) break;
    st.out[i].feed(c.text, c.tokens.size(), c.finish_reason != engine::FinishReason::NONE);
    if (st.logprobs) {
      auto lp = to_logprobs(tok, c.tokens);
      choices[i].logprobs->insert(choices[i].logprobs->end(), lp.begin(), lp.end());
    }
    if (ended_badly(c.finish_reason)) throw g.failure(g.slots()[i], c.error);
  }
  for (size_t i = 0; i < choices.size(); ++i) {
    const auto f = g.slots()[i].finish;
    if (f == engine::FinishReason::NONE || ended_badly(f)) throw g.failure(g.slots()[i], "");
    choices[i].finish_reason = chat_finish_reason(engine::finish_reason_name(f), st.out[i]);
    choices[i].content = st.out[i].content();
    choices[i].reasoning = st.out[i].reasoning();
    choices[i].tool_calls = st.out[i].tool_calls();
  }
  send_json(res, 200, protocol::chat_completion(st.id, st.created, st.model, choices, chat_usage(st)));
}

}  // namespace

chat::ChatTemplateInputs chat_template_inputs(const ServingContext& ctx, const protocol::ChatRequest& cr) {
  chat::ChatTemplateInputs in;
  in.messages = cr.messages;
  // tool_choice "none" keeps the tools out of the prompt, as OpenAI does.
  const bool tools_off = cr.tool_choice.is_string() && cr.tool_choice.get<std::string>() == "none";
  if (!cr.tools.is_null() && !tools_off) in.tools = cr.tools;
  in.add_generation_prompt = cr.add_generation_prompt;
  in.kwargs = ctx.chat_template_defaults;  // the server's defaults; the request's keys win
  for (auto it = cr.chat_template_kwargs.begin(); it != cr.chat_template_kwargs.end(); ++it)
    in.kwargs[it.key()] = it.value();
  return in;
}

void handle_chat(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  protocol::ChatRequest cr = protocol::parse_chat_request(body);
  log_unknown_fields(ctx, "/v1/chat/completions", cr.common.unknown_fields);
  require_model_field(cr.common.model);
  info.model = cr.common.model;
  if (ctx.draining) throw shutdown_error();

  auto st = std::make_shared<ChatState>();
  st->lease = ctx.models.acquire(cr.common.model);
  info.model = st->lease.id();
  engine::LLMEngine& m = *st->lease;
  require_generation_model(m, st->lease.id());

  chat::ChatTemplateInputs in = chat_template_inputs(ctx, cr);
  const bool with_tools = !in.tools.is_null();
  const std::string prompt = m.render_chat(std::move(in));

  engine::GenerationParams base;
  base.prompt_ids = m.encode_chat_prompt(prompt);
  base.sampling = cr.common.sampling;
  base.sampling.logprobs = cr.logprobs ? cr.top_logprobs : -1;
  base.max_tokens = cr.common.max_tokens.value_or(-1);
  base.stop = cr.common.stop;
  base.stop_token_ids = cr.common.stop_token_ids;
  base.ignore_eos = cr.common.ignore_eos;
  base.skip_special_tokens = cr.common.skip_special_tokens;
  chat::OutputFormat format = m.output_format();
  if (m.config().harmony_chat) format.tools = chat::ToolSyntax::HARMONY;
  chat::ParserOptions po;
  po.parse_tools = with_tools;
  po.reasoning_open = format.think_tags && chat::prompt_opens_think(prompt, format.think_open);
  po.tools = cr.tools;
  if (format.tools != chat::ToolSyntax::NONE && !with_tools && format.tools != chat::ToolSyntax::HARMONY)
    format.tools = chat::ToolSyntax::NONE;
  // Markers that are special tokens are dropped by skip_special_tokens: keep them to read them.
  for (const std::string& marker : chat::format_markers(format)) {
    const int32_t id = m.tokenizer().token_to_id(marker);
    if (id >= 0 && m.tokenizer().is_special(id)) base.skip_special_tokens = false;
  }
  const bool short_ids =
      format.tools == chat::ToolSyntax::BRACKET_LIST || format.tools == chat::ToolSyntax::BRACKET_ARGS;
  base.min_tokens = cr.common.min_tokens;
  base.include_stop_str_in_output = cr.common.include_stop_str_in_output;
  base.grammar = checked_grammar(m, cr.common);
  // tool_choice by grammar (server/tool_choice.h): forced calls, or auto's calls kept schema-valid.
  if (ToolChoiceGrammar tg = tool_choice_grammar(cr, format, m.tokenizer(), po.reasoning_open); !tg.spec.empty()) {
    protocol::CommonParams c = cr.common;
    c.grammar = std::move(tg.spec);
    c.grammar_param = "tools";
    try {
      base.grammar = checked_grammar(m, c);
    } catch (const ApiError&) {
      if (tg.forced) throw;  // auto: a tool schema XGrammar cannot compile leaves the calls unconstrained
    }
  }

  st->id = protocol::new_id("chatcmpl-");
  st->model = cr.common.model;
  st->created = unix_now();
  st->include_usage = cr.common.stream && cr.common.include_usage;
  st->logprobs = cr.logprobs;
  st->timeout_s = cr.common.timeout_s && *cr.common.timeout_s > 0 ? *cr.common.timeout_s : ctx.request_timeout_s;
  if (ctx.request_timeout_s > 0) st->timeout_s = std::min(st->timeout_s, ctx.request_timeout_s);
  st->deadline = ctx.deadline(cr.common.timeout_s);
  st->reasoning_usage = format.think_tags || format.tools == chat::ToolSyntax::HARMONY;
  for (int32_t i = 0; i < cr.common.n; ++i) st->out.emplace_back(chat::make_output_parser(format, po), short_ids);
  st->group = std::make_unique<GenerationGroup>(ctx, m, st->lease.id());
  st->watch = std::make_unique<ConnectionWatch>(req);
  st->group->watch_client(st->watch.get());

  const uint64_t default_seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  for (int32_t i = 0; i < cr.common.n; ++i) {
    engine::GenerationParams p = base;
    if (base.sampling.seed) p.sampling.seed = engine::choice_seed(*base.sampling.seed, i);
    st->group->add(i, 0, std::move(p), default_seed + uint64_t(i));
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
      ok = stream_chat(*st, sink);
    } catch (const std::exception& e) {
      st->group->abort_all();
      const ApiError err(500, "server_error", e.what());
      ok = finish_stream(*st->record, sink, &err);
    }
    if (!ok) {
      st->group->abort_all();  // client gone
      return false;
    }
    sink.done();
    return true;
  });
}

}  // namespace oxyd::server
