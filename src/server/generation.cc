// Generation (see generation.h): validation with client-facing messages, then the engine stream
// through an OutputProcessor. A stop string found in the text aborts the engine request at once.
#include "server/generation.h"

#include <algorithm>

#include "core/error.h"

namespace oxyd::server {

Generation::Generation(LoadedModel& model, GenerationParams params, uint64_t default_seed) : model_(model) {
  auto bad = [](const std::string& m) { throw_error(ErrorCode::INVALID_ARGUMENT, m); };
  const std::vector<int32_t>& ids = params.prompt_ids;
  if (ids.empty()) bad("the prompt is empty");
  const int64_t vocab = model.config().vocab_size;
  for (int32_t t : ids)
    if (t < 0 || t >= vocab)
      bad("prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  const int32_t n = int32_t(ids.size()), ctx = model.max_context_len();
  if (n >= ctx)
    bad("This model's maximum context length is " + std::to_string(ctx) + " tokens; the prompt has " +
        std::to_string(n) + " tokens (at least one must be left for the completion)");
  if (params.max_tokens == 0 || params.max_tokens < -1)
    bad("max_tokens must be >= 1, got " + std::to_string(params.max_tokens));
  const int32_t room = ctx - n;
  max_tokens_ = params.max_tokens < 0 ? room : std::min(params.max_tokens, room);
  if (params.min_tokens < 0) bad("min_tokens must be >= 0, got " + std::to_string(params.min_tokens));
  if (params.max_tokens > 0 && params.min_tokens > params.max_tokens)
    bad("min_tokens (" + std::to_string(params.min_tokens) + ") must be less than or equal to max_tokens (" +
        std::to_string(params.max_tokens) + ")");
  num_prompt_tokens_ = n;

  engine::EngineRequest req;
  req.request_id = request_id_ = model.next_request_id();
  req.prompt_token_ids = std::move(params.prompt_ids);
  req.sampling = std::move(params.sampling);
  req.sampling.min_tokens = params.min_tokens;
  // Rows past the tokenizer's vocabulary (padding) decode to nothing: never sample them unless
  // the request names them in logit_bias.
  const int64_t num_tok = int64_t(model.tokenizer().vocab_size());
  if (num_tok > 0 && num_tok < vocab) req.sampling.num_valid_tokens = int32_t(num_tok);
  req.max_tokens = max_tokens_;
  req.stop_token_ids = std::move(params.stop_token_ids);
  if (!params.ignore_eos)
    for (int32_t t : model.tokenizer().end_of_generation_ids()) req.stop_token_ids.push_back(t);
  req.prompt_logprobs = params.prompt_logprobs;
  // The last prompt tokens give the detokenizer context, so the first word keeps its space.
  constexpr size_t kDecodeContext = 5;
  const std::vector<int32_t>& p = req.prompt_token_ids;
  const std::span<const int32_t> tail(p.data() + (p.size() - std::min(p.size(), kDecodeContext)),
                                      std::min(p.size(), kDecodeContext));
  engine::OutputOptions oo;
  oo.skip_special = params.skip_special_tokens;
  oo.min_tokens = params.min_tokens;
  oo.include_stop_str = params.include_stop_str_in_output;
  proc_ = std::make_unique<engine::OutputProcessor>(model.tokenizer(), std::move(params.stop), oo, tail);
  t_submit_ = std::chrono::steady_clock::now();
  stream_ = model.engine().submit(req, default_seed);  // throws INVALID_ARGUMENT (sampling fields, ...)
}

Generation::~Generation() {
  if (!finished_) abort();
}

void Generation::abort() {
  if (stream_) model_.engine().abort(request_id_);
}

bool Generation::queue_full() const { return stream_ && stream_->rejected_queue_full(); }

Generation::Next Generation::next(GenerationChunk& out, std::chrono::steady_clock::time_point deadline) {
  if (finished_) return Next::END;
  engine::RequestOutput o;
  switch (stream_->next_until(o, deadline)) {
    case engine::RequestStream::Wait::TIMEOUT: return Next::TIMEOUT;
    case engine::RequestStream::Wait::END: finished_ = true; return Next::END;  // no final output: cannot happen
    case engine::RequestStream::Wait::OUTPUT: break;
  }
  if (o.num_cached_tokens > 0) num_cached_tokens_ = o.num_cached_tokens;
  if (!o.new_tokens.empty() && ttft_s_ < 0)
    ttft_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_submit_).count();
  num_completion_tokens_ += int32_t(o.new_tokens.size());
  engine::TextDelta d = proc_->process(o);
  if (d.abort_engine) model_.engine().abort(request_id_);  // a stop string ended it before the engine did
  out = GenerationChunk{};
  out.text = std::move(d.text);
  out.tokens = std::move(d.tokens);
  out.finish_reason = d.finish_reason;
  out.prompt_logprobs = std::move(o.prompt_logprobs);
  out.error = std::move(o.error);
  finished_ = d.finish_reason != engine::FinishReason::NONE;
  return Next::CHUNK;
}

std::string finish_reason_name(engine::FinishReason r) {
  switch (r) {
    case engine::FinishReason::STOP: return "stop";
    case engine::FinishReason::LENGTH: return "length";
    case engine::FinishReason::ABORT: return "abort";
    case engine::FinishReason::ERROR: return "error";
    case engine::FinishReason::NONE: break;
  }
  return "";
}

}  // namespace oxyd::server
