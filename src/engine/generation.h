// Generation: one request's life on a LLMEngine, as text. It submits an engine request and turns
// the engine's token outputs into text chunks with incremental detokenization, stop strings held
// back (OutputProcessor) and the finish reason. Used by the HTTP serving code (one per
// choice; n > 1 = n Generations with seeds seed, seed+1, ...) and by `oxydllm run`.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/async_engine.h"
#include "engine/llm_engine.h"
#include "engine/output_processor.h"
#include "grammar/grammar.h"
#include "sample/sampler.h"

namespace oxyd::engine {

struct GenerationParams {
  std::vector<int32_t> prompt_ids;
  sample::SamplingParams sampling;
  int32_t max_tokens = -1;                // -1: up to the context; larger values are clamped to it
  std::vector<std::string> stop;          // stop strings (never sent to the client)
  std::vector<int32_t> stop_token_ids;    // extra stop ids; the model's EOS/EOT ids are added unless ignore_eos
  bool ignore_eos = false;
  int32_t prompt_logprobs = -1;           // >= 0: logprobs of the prompt tokens (completions echo)
  bool skip_special_tokens = true;
  int32_t min_tokens = 0;                 // vLLM: no EOS/stop id and no stop string before this many tokens
  bool include_stop_str_in_output = false;  // vLLM: the matched stop string ends the text
  grammar::GrammarSpec grammar;           // response_format / guided_*: compiled by Generation (400 if invalid)
};

struct GenerationChunk {
  std::string text;                                    // safe to send (stop strings held back)
  std::vector<sample::SampleResult> tokens;            // tokens behind this chunk (logprobs when asked)
  FinishReason finish_reason = FinishReason::NONE;
  std::vector<sample::SampleResult> prompt_logprobs;   // once, with the first chunk, when asked
  std::string error;                                   // with FinishReason::ERROR: what failed
};

class Generation {
 public:
  /// Submits; the engine validates (EngineCore::validate). Throws Error(INVALID_ARGUMENT) for a bad
  /// request, with a message that gives both numbers when the prompt does not fit the context.
  /// queue_full() tells a rejection.
  Generation(LLMEngine& model, GenerationParams params, uint64_t default_seed);
  ~Generation();  // aborts the request if it has not finished
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  enum class Next { CHUNK, END, TIMEOUT };
  /// Waits for the next chunk until `deadline`. END once the last chunk (with finish_reason) was read.
  Next next(GenerationChunk& out, std::chrono::steady_clock::time_point deadline =
                                      std::chrono::steady_clock::time_point::max());
  void abort();  // client gone, timeout: the engine frees the request at its next step

  /// The engine's queue was full (HTTP 429): known once next() returned the final chunk
  /// (finish_reason ABORT), which comes at once for a rejected request.
  bool queue_full() const;
  int32_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int32_t num_cached_tokens() const { return num_cached_tokens_; }   // prefix-cache hits
  int32_t num_completion_tokens() const { return num_completion_tokens_; }
  int32_t max_tokens() const { return max_tokens_; }                 // after clamping
  double time_to_first_token_s() const { return ttft_s_; }           // < 0 until the first token

 private:
  LLMEngine& model_;
  int64_t request_id_ = 0;
  std::shared_ptr<RequestStream> stream_;
  std::unique_ptr<OutputProcessor> proc_;
  std::chrono::steady_clock::time_point t_submit_;
  int32_t num_prompt_tokens_ = 0, num_cached_tokens_ = 0, num_completion_tokens_ = 0, max_tokens_ = 0;
  double ttft_s_ = -1;
  bool finished_ = false;
};

std::string finish_reason_name(FinishReason r);

/// The seed of choice `index` of a request that set `seed`: choice 0 keeps it (n = 1 reproduces the
/// plain request), later ones get it mixed with the index (splitmix64), so choice 1 of seed s is not
/// choice 0 of seed s + 1 and requests with nearby seeds draw independent samples.
uint64_t choice_seed(uint64_t seed, int32_t index);  // "stop" | "length" | "abort" | "error"

}  // namespace oxyd::engine
