// Per-request token sampling from one logits row [vocab]. Order of operations (HF/vLLM):
//   1. logprobs (if asked) from the RAW logits: log_softmax before any penalty or warper
//   1b. masks (-inf): vocabulary padding past the tokenizer (num_valid_tokens) unless logit_bias
//       names the id; the stop ids while fewer than min_tokens tokens were sampled (vLLM)
//   2. repetition_penalty (HF: logit/r if > 0 else logit*r, once per token seen in prompt+output)
//   3. presence/frequency penalties (OpenAI: logit -= count*frequency + (count>0)*presence, output)
//   4. logit_bias (added)          5. temperature == 0 → greedy argmax (ties → lowest id)
//   6. temperature (divide)        7. top_k (ties at the k-th value kept, as HF)
//   8. top_p (HF: keep while the mass before a token is < top_p)   9. min_p   10. typical_p (HF)
//   11. draw from the softmax of what is left with the request's own Philox stream.
// A request with a grammar (set_grammar) first has every id its grammar does not allow next set to
// -inf (before step 1b; logprobs stay raw), and the drawn token advances the grammar.
// Not thread-safe per RequestSampler; distinct requests may be sampled on distinct threads.
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace oxyd::sample {

inline constexpr int kMaxTopLogprobs = 20;

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy
  int32_t top_k = 0;         // <= 0: off
  float top_p = 1.0f;        // [0, 1]; 0 keeps the top token only
  float min_p = 0.0f;        // [0, 1]
  float typical_p = 1.0f;    // (0, 1]
  float repetition_penalty = 1.0f;  // > 0
  float presence_penalty = 0.0f;    // [-2, 2]
  float frequency_penalty = 0.0f;   // [-2, 2]
  std::vector<std::pair<int32_t, float>> logit_bias;  // token → bias in [-100, 100]
  std::optional<uint64_t> seed;
  int32_t logprobs = -1;  // -1: none; k in [0, 20]: the sampled token's logprob plus top-k
  /// > 0: ids >= it are vocabulary padding (rows past the tokenizer, e.g. Qwen2's 151,936 vs
  /// 151,665): never sampled unless logit_bias names them. 0: every id of the row may be sampled.
  int32_t num_valid_tokens = 0;
  /// vLLM's min_tokens: while fewer tokens were sampled, min_tokens_stop_ids (EOS/EOT and the
  /// request's stop ids) cannot be sampled.
  int32_t min_tokens = 0;
  std::vector<int32_t> min_tokens_stop_ids;

  /// Throws Error(INVALID_ARGUMENT) naming the field and the allowed range; min_tokens also
  /// against the request's max_tokens when that is > 0 (the one place both are checked).
  void validate(int32_t vocab_size, int32_t max_tokens = -1) const;
  bool greedy() const { return temperature < 1e-5f; }
};

/// Philox4x32-10 (Salmon et al. 2011): a counter-based stream; (seed, counter) fully determines
/// every draw, so a request's tokens do not depend on what else is in the batch.
class Philox {
 public:
  explicit Philox(uint64_t seed) : key_{uint32_t(seed), uint32_t(seed >> 32)} {}
  std::array<uint32_t, 4> block(uint64_t counter) const;
  /// Uniform in [0, 1) with 53 random bits; advances the counter by one.
  double uniform();

 private:
  std::array<uint32_t, 2> key_;
  uint64_t counter_ = 0;
};

/// A surviving token after the warpers: id and processed logit.
struct Candidate {
  int32_t id;
  float logit;
};

struct SampleResult {
  int32_t token = -1;
  float logprob = 0;  // raw logprob of `token` (only when params.logprobs >= 0)
  std::vector<std::pair<int32_t, float>> top_logprobs;  // descending, ties by id
};

// Warpers on a candidate list. `sorted` = list is in descending logit order (ties by id).
void apply_top_k(std::vector<Candidate>& c, int32_t top_k);                 // makes it sorted
void apply_top_p(std::vector<Candidate>& c, float top_p);                   // needs sorted
void apply_min_p(std::vector<Candidate>& c, float min_p);
void apply_typical_p(std::vector<Candidate>& c, float typical_p);
void sort_candidates(std::vector<Candidate>& c);

/// One request's sampler: its params, its RNG and its penalty counts.
class RequestSampler {
 public:
  /// `seed` is used when params.seed is unset (the engine passes a fresh random value).
  RequestSampler(SamplingParams params, int32_t vocab_size, std::span<const int32_t> prompt_token_ids,
                 uint64_t default_seed);

  /// Samples from logits [vocab_size] and records the token as output (for penalties).
  SampleResult sample(std::span<const float> logits);
  /// Steps 2–10 on a copy of `logits`: the surviving candidates (unsorted unless a warper sorts).
  /// Exposed for tests; sample() draws from exactly this.
  std::vector<Candidate> candidates(std::span<const float> logits) const;
  /// Draws one id from softmax(c.logit) with this request's stream (advances it by one).
  int32_t draw(std::span<const Candidate> c);
  void append_output(int32_t token);
  /// The leading ids whose argmax is all that sample() needs of the next row (greedy with no
  /// penalty, bias, min_tokens, live grammar or logprobs): vocab_size, or num_valid_tokens where
  /// smaller; 0 when it needs more of the row. An executor may then take the argmax where the
  /// logits are (runner/model_executor.h run_argmax).
  int32_t argmax_only_cols() const;
  /// Records `token`, the argmax over argmax_only_cols() ids, as sample() would have.
  SampleResult accept_argmax(int32_t token);
  const SamplingParams& params() const { return params_; }
  /// Constrains every later sample() to `m`'s grammar (nullptr: none). Once the grammar has ended
  /// (a stop id accepted, e.g. one ignore_eos lets through) sampling is unconstrained again.
  void set_grammar(std::unique_ptr<grammar::Matcher> m) { matcher_ = std::move(m); }
  grammar::Matcher* grammar() const { return matcher_.get(); }

 private:
  void apply_penalties(std::vector<float>& x) const;
  bool min_tokens_active() const { return num_output_ < params_.min_tokens && !params_.min_tokens_stop_ids.empty(); }
  bool has_penalties() const {
    return !seen_.empty() || !params_.logit_bias.empty() || min_tokens_active() ||
           ((params_.presence_penalty != 0 || params_.frequency_penalty != 0) && !out_counts_.empty());
  }
  /// The part of a row sampling looks at: [0, num_valid_tokens) unless logit_bias names a padded id
  /// (then the whole row, the unnamed padding masked in apply_penalties).
  std::span<const float> sampled_part(std::span<const float> logits) const {
    return padding_asked_ ? logits : logits.first(size_t(num_sampled_ids_));
  }

  SamplingParams params_;
  int32_t vocab_size_;
  Philox rng_;
  std::unordered_set<int32_t> seen_;                // prompt + output tokens
  std::unordered_map<int32_t, int32_t> out_counts_; // output token → count
  int32_t num_output_ = 0;                          // tokens sampled so far
  int32_t num_sampled_ids_ = 0;                     // vocab_size, or num_valid_tokens when smaller
  bool padding_asked_ = false;                      // logit_bias names an id >= num_valid_tokens
  std::unique_ptr<grammar::Matcher> matcher_;       // the request's grammar, if any
  std::vector<float> masked_;                       // [vocab_size] logits under the grammar mask
};

/// Raw log_softmax value of `logits[token]` and the top `k` (k ≤ 20) of the row.
void raw_logprobs(std::span<const float> logits, int32_t token, int32_t k, SampleResult& out);

}  // namespace oxyd::sample
