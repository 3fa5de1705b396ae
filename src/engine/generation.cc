// Generation (see generation.h): an engine request (validated by the engine) and its stream
// through an OutputProcessor. A stop string found in the text aborts the engine request at once.
#include "engine/generation.h"

#include <algorithm>

#include "core/error.h"
#include "core/splitmix64.h"

namespace oxyd::engine {

Generation::Generation(LLMEngine& model, GenerationParams params, uint64_t default_seed) : model_(model) {
  // Every limit (vocabulary, context, max_tokens, min_tokens, sampling fields) is checked once, by
  // AsyncEngine::submit → EngineCore::validate, before anything is queued.
  const int32_t n = int32_t(params.prompt_ids.size()), ctx = model.max_context_len();
  const int64_t vocab = model.config().vocab_size;
  num_prompt_tokens_ = n;

  EngineRequest req;
  req.request_id = request_id_ = model.next_request_id();
  req.prompt_token_ids = std::move(params.prompt_ids);
  req.sampling = std::move(params.sampling);
  req.sampling.min_tokens = params.min_tokens;
  // Rows past the tokenizer's vocabulary (padding) decode to nothing: never sample them unless
  // the request names them in logit_bias.
  const int64_t num_tok = int64_t(model.tokenizer().vocab_size());
  if (num_tok > 0 && num_tok < vocab) req.sampling.num_valid_tokens = int32_t(num_tok);
  req.max_tokens = params.max_tokens;  // -1: up to the context (the scheduler clamps)
  req.stop_token_ids = std::move(params.stop_token_ids);
  if (!params.ignore_eos)
    for (int32_t t : model.tokenizer().end_of_generation_ids()) req.stop_token_ids.push_back(t);
  req.prompt_logprobs = params.prompt_logprobs;
  if (!params.grammar.empty()) req.grammar = model.grammar_compiler(params.grammar.special_text).compile(params.grammar);  // throws INVALID_ARGUMENT
  // The last prompt tokens give the detokenizer context, so the first word keeps its space.
  constexpr size_t kDecodeContext = 5;
  const std::vector<int32_t>& p = req.prompt_token_ids;
  const std::span<const int32_t> tail(p.data() + (p.size() - std::min(p.size(), kDecodeContext)),
                                      std::min(p.size(), kDecodeContext));
  OutputOptions oo;
  oo.skip_special = params.skip_special_tokens;
  oo.min_tokens = params.min_tokens;
  oo.include_stop_str = params.include_stop_str_in_output;
  proc_ = std::make_unique<OutputProcessor>(model.tokenizer(), std::move(params.stop), oo, tail);
  t_submit_ = std::chrono::steady_clock::now();
  stream_ = model.async_engine().submit(req, default_seed);  // throws INVALID_ARGUMENT for a bad request
  max_tokens_ = params.max_tokens < 0 ? ctx - n : std::min(params.max_tokens, ctx - n);  // as the scheduler clamps
}

Generation::~Generation() {
  if (!finished_) abort();
}

void Generation::abort() {
  if (stream_) model_.async_engine().abort(request_id_);
}

bool Generation::queue_full() const { return stream_ && stream_->rejected_queue_full(); }

Generation::Next Generation::next(GenerationChunk& out, std::chrono::steady_clock::time_point deadline) {
  if (finished_) return Next::END;
  RequestOutput o;
  switch (stream_->next_until(o, deadline)) {
    case RequestStream::Wait::TIMEOUT: return Next::TIMEOUT;
    case RequestStream::Wait::END: finished_ = true; return Next::END;  // no final output: cannot happen
    case RequestStream::Wait::OUTPUT: break;
  }
  if (o.num_cached_tokens > 0) num_cached_tokens_ = o.num_cached_tokens;
  if (!o.new_tokens.empty() && ttft_s_ < 0)
    ttft_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_submit_).count();
  num_completion_tokens_ += int32_t(o.new_tokens.size());
  TextDelta d = proc_->process(o);
  if (d.abort_engine) model_.async_engine().abort(request_id_);  // a stop string ended it before the engine did
  out = GenerationChunk{};
  out.text = std::move(d.text);
  out.tokens = std::move(d.tokens);
  out.finish_reason = d.finish_reason;
  out.prompt_logprobs = std::move(o.prompt_logprobs);
  out.error = std::move(o.error);
  finished_ = d.finish_reason != FinishReason::NONE;
  return Next::CHUNK;
}

std::string finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::STOP: return "stop";
    case FinishReason::LENGTH: return "length";
    case FinishReason::ABORT: return "abort";
    case FinishReason::ERROR: return "error";
    case FinishReason::NONE: break;
  }
  return "";
}

uint64_t choice_seed(uint64_t seed, int32_t index) {
  // Output `index` of a splitmix64 stream seeded with `seed`.
  return index == 0 ? seed : splitmix64_mix(seed + kSplitmix64Step * uint64_t(index));
}

}  // namespace oxyd::engine
