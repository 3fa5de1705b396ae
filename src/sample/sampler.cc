// RequestSampler: penalties, logit bias, greedy or temperature + warpers + a Philox draw, and raw
// logprobs (order in sampler.h). Without top_k, top_p finds its cut on a growing nth_element prefix
// of the row, so a 262k vocab is sorted only as far as the nucleus reaches.
#include "sample/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "core/error.h"

namespace oxyd::sample {
namespace {
bool before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
// Index of the first maximum (the lowest id among ties), as std::max_element gives, in loops
// the compiler vectorizes: the max of each 2048-value block by per-lane maxima, then the first
// element equal to the best in the first block holding it. ~4x faster than max_element's serial
// compare-and-track on a 262k vocabulary, once per request per step.
int32_t argmax_first(std::span<const float> x) {
  constexpr size_t kLanes = 16, kBlock = 2048;
  const size_t n = x.size();
  float best = -INFINITY;
  size_t best_block = 0;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t e = std::min(n, b + kBlock);
    float lane[kLanes];
    for (float& v : lane) v = -INFINITY;
    size_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (size_t l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    float m = -INFINITY;
    for (float v : lane) m = v > m ? v : m;
    for (; i < e; ++i) m = x[i] > m ? x[i] : m;
    if (m > best) best = m, best_block = b;
  }
  for (size_t j = best_block; j < n; ++j)
    if (x[j] == best) return int32_t(j);
  return 0;  // every value NaN
}
// argmax_first over x with every id whose bit in `words` is clear (and every id past them) taken
// as -inf, without writing the masked row: the lowest id of the largest allowed value, 0 when that
// value is -inf (as argmax_first over the masked row). A word allowing all 32 ids takes a
// vectorized max; the others visit their set bits.
int32_t argmax_allowed(std::span<const float> x, std::span<const int32_t> words) {
  const size_t n = std::min(x.size(), words.size() * 32);
  float best = -INFINITY;
  int32_t best_id = 0;
  for (size_t base = 0; base < n; base += 32) {
    uint32_t bits = uint32_t(words[base / 32]);
    if (n - base < 32) bits &= (uint32_t(1) << (n - base)) - 1;
    if (bits == 0xffffffffu) {
      float m = -INFINITY;
      for (size_t i = base; i < base + 32; ++i) m = x[i] > m ? x[i] : m;
      if (m > best) {
        best = m;
        for (best_id = int32_t(base); x[size_t(best_id)] != m; ++best_id) {
        }
      }
      continue;
    }
    for (; bits; bits &= bits - 1) {
      const size_t i = base + size_t(std::countr_zero(bits));
      if (x[i] > best) best = x[i], best_id = int32_t(i);
    }
  }
  return best_id;
}
[[noreturn]] void bad(const std::string& field, const std::string& want, double got) {
  throw_error(ErrorCode::INVALID_ARGUMENT, "sampling parameter '" + field + "' must be " + want +
                                               ", got " + std::to_string(got));
}
}  // namespace

void SamplingParams::validate(int32_t vocab_size, int32_t max_tokens) const {
  if (min_tokens < 0) bad("min_tokens", ">= 0", min_tokens);
  if (max_tokens > 0 && min_tokens > max_tokens)
    throw_error(ErrorCode::INVALID_ARGUMENT, "min_tokens (" + std::to_string(min_tokens) +
                                                 ") must be less than or equal to max_tokens (" +
                                                 std::to_string(max_tokens) + ")");
  if (!(temperature >= 0 && std::isfinite(temperature))) bad("temperature", ">= 0", temperature);
  if (!(top_p >= 0 && top_p <= 1)) bad("top_p", "in [0, 1]", top_p);  // 0: the top token only (HF, OpenAI)
  if (!(min_p >= 0 && min_p <= 1)) bad("min_p", "in [0, 1]", min_p);
  if (!(typical_p > 0 && typical_p <= 1)) bad("typical_p", "in (0, 1]", typical_p);
  if (!(repetition_penalty > 0 && std::isfinite(repetition_penalty))) bad("repetition_penalty", "> 0", repetition_penalty);
  if (!(presence_penalty >= -2 && presence_penalty <= 2)) bad("presence_penalty", "in [-2, 2]", presence_penalty);
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2)) bad("frequency_penalty", "in [-2, 2]", frequency_penalty);
  if (logprobs < -1 || logprobs > kMaxTopLogprobs) bad("top_logprobs", "in [0, 20]", logprobs);
  if (num_valid_tokens < 0) bad("num_valid_tokens", ">= 0", num_valid_tokens);
  for (const auto& [tok, b] : logit_bias) {
    if (tok < 0 || tok >= vocab_size) bad("logit_bias", "keyed by token ids in [0, " + std::to_string(vocab_size) + ")", tok);
    if (!(b >= -100 && b <= 100)) bad("logit_bias", "values in [-100, 100]", b);
  }
}

RequestSampler::RequestSampler(SamplingParams params, int32_t vocab_size,
                               std::span<const int32_t> prompt_token_ids, uint64_t default_seed)
    : params_(std::move(params)), vocab_size_(vocab_size), rng_(params_.seed.value_or(default_seed)) {
  params_.validate(vocab_size);
  if (params_.repetition_penalty != 1.0f) seen_.insert(prompt_token_ids.begin(), prompt_token_ids.end());
  num_sampled_ids_ = params_.num_valid_tokens > 0 ? std::min(params_.num_valid_tokens, vocab_size) : vocab_size;
  for (const auto& [t, b] : params_.logit_bias) padding_asked_ |= t >= num_sampled_ids_;
}

void RequestSampler::append_output(int32_t token) {
  if (params_.repetition_penalty != 1.0f) seen_.insert(token);
  ++out_counts_[token];
  ++num_output_;
}

void RequestSampler::apply_penalties(std::vector<float>& x) const {
  const float r = params_.repetition_penalty;
  for (int32_t t : seen_)
    if (t >= 0 && size_t(t) < x.size()) x[t] = x[t] > 0 ? x[t] / r : x[t] * r;
  if (params_.presence_penalty != 0 || params_.frequency_penalty != 0)
    for (const auto& [t, n] : out_counts_)
      if (t >= 0 && size_t(t) < x.size()) x[t] -= float(n) * params_.frequency_penalty + params_.presence_penalty;
  for (const auto& [t, b] : params_.logit_bias)
    if (size_t(t) < x.size()) x[size_t(t)] += b;
  if (padding_asked_) {  // the whole row is sampled: mask the padding the request did not name
    std::vector<bool> named(x.size() - size_t(num_sampled_ids_), false);
    for (const auto& [t, b] : params_.logit_bias)
      if (t >= num_sampled_ids_) named[size_t(t - num_sampled_ids_)] = true;
    for (size_t i = 0; i < named.size(); ++i)
      if (!named[i]) x[size_t(num_sampled_ids_) + i] = -INFINITY;
  }
  if (min_tokens_active())
    for (int32_t t : params_.min_tokens_stop_ids)
      if (t >= 0 && size_t(t) < x.size()) x[size_t(t)] = -INFINITY;
}

std::vector<Candidate> RequestSampler::candidates(std::span<const float> row) const {
  OXYD_CHECK(int32_t(row.size()) == vocab_size_, "sample: logits row size != vocab_size");
  const std::span<const float> logits = sampled_part(row);
  std::vector<float> copy;
  std::span<const float> x = logits;
  if (has_penalties()) {
    copy.assign(logits.begin(), logits.end());
    apply_penalties(copy);
    x = copy;
  }
  const float t = params_.greedy() ? 1.0f : params_.temperature;
  std::vector<Candidate> c;
  if (params_.top_k > 0 && params_.top_k <= 256 && size_t(params_.top_k) < x.size()) {
    // Small k: one pass keeping the best k raw logits in a sorted array (most tokens fail one
    // compare), then a pass adding the ties at the k-th value that HF also keeps. Selecting on
    // x rather than x / t is the same order for t > 0.
    const size_t k = size_t(params_.top_k);
    c.reserve(k + 1);
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == -INFINITY) continue;  // masked (padding, min_tokens)
      if (c.size() == k && !(x[i] > c.back().logit)) continue;  // ids ascend: equal is "after"
      const Candidate e{int32_t(i), x[i]};
      c.insert(std::upper_bound(c.begin(), c.end(), e, before), e);
      if (c.size() > k) c.pop_back();
    }
    if (c.empty()) return c;
    const float kth = c.back().logit;
    for (size_t i = size_t(c.back().id) + 1; i < x.size(); ++i)
      if (x[i] == kth) c.push_back({int32_t(i), kth});
    for (auto& e : c) e.logit /= t;
    apply_top_p(c, params_.top_p);
  } else {
    c.reserve(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != -INFINITY) c.push_back({int32_t(i), x[i] / t});  // masked ids are no candidates
    if (c.empty()) return c;
    if (params_.top_k > 0) {
      apply_top_k(c, params_.top_k);
      apply_top_p(c, params_.top_p);
    } else if (params_.top_p < 1.0f) {
      // Normaliser over the whole row, then the smallest sorted prefix that holds the nucleus.
      float m = c[0].logit;
      for (const auto& e : c) m = std::max(m, e.logit);
      double z = 0;
      for (const auto& e : c) z += std::exp(double(e.logit) - m);
      for (size_t n = std::min<size_t>(c.size(), 64);; n = std::min(c.size(), n * 4)) {
        std::nth_element(c.begin(), c.begin() + long(n - 1), c.end(), before);
        std::sort(c.begin(), c.begin() + long(n), before);
        double mass = 0;
        for (size_t i = 0; i + 1 < n; ++i) mass += std::exp(double(c[i].logit) - m);
        if (mass >= double(params_.top_p) * z || n == c.size()) {
          // The cut lies within the first n: apply top_p's rule against the full normaliser.
          double before_mass = 0;
          size_t keep = 0;
          while (keep < n && (keep == 0 || before_mass < double(params_.top_p) * z))
            before_mass += std::exp(double(c[keep++].logit) - m);
          c.resize(keep);
          break;
        }
      }
    }
  }
  apply_min_p(c, params_.min_p);
  apply_typical_p(c, params_.typical_p);
  return c;
}

int32_t RequestSampler::draw(std::span<const Candidate> c) {
  OXYD_CHECK(!c.empty(), "sample: no candidate left");
  float m = c[0].logit;
  for (const auto& e : c) m = std::max(m, e.logit);
  double z = 0;
  for (const auto& e : c) z += std::exp(double(e.logit) - m);
  const double u = rng_.uniform() * z;
  double cum = 0;
  for (const auto& e : c) {
    cum += std::exp(double(e.logit) - m);
    if (u < cum) return e.id;
  }
  return c.back().id;  // u rounded up to z
}

void raw_logprobs(std::span<const float> logits, int32_t token, int32_t k, SampleResult& out) {
  float m = logits[0];
  for (float v : logits) m = std::max(m, v);
  double z = 0;
  for (float v : logits) z += std::exp(double(v) - m);
  const double lse = double(m) + std::log(z);
  out.logprob = float(double(logits[size_t(token)]) - lse);
  std::vector<Candidate> top;  // at most k, kept sorted by `before`
  for (size_t i = 0; k > 0 && i < logits.size(); ++i) {
    const Candidate c{int32_t(i), logits[i]};
    if (int32_t(top.size()) == k && !before(c, top.back())) continue;
    top.insert(std::upper_bound(top.begin(), top.end(), c, before), c);
    if (int32_t(top.size()) > k) top.pop_back();
  }
  out.top_logprobs.clear();
  for (const auto& c : top) out.top_logprobs.emplace_back(c.id, float(double(c.logit) - lse));
}

int32_t RequestSampler::argmax_only_cols() const {
  const bool constrained = matcher_ && !matcher_->is_terminated();
  return params_.greedy() && !has_penalties() && !constrained && params_.logprobs < 0 && !padding_asked_
             ? num_sampled_ids_
             : 0;
}

SampleResult RequestSampler::accept_argmax(int32_t token) {
  OXYD_CHECK(token >= 0 && token < num_sampled_ids_ && argmax_only_cols() > 0,
             "accept_argmax: the request needs more than the argmax, or the id is out of range");
  SampleResult r;
  r.token = token;
  append_output(token);
  return r;
}

SampleResult RequestSampler::sample(std::span<const float> raw) {
  OXYD_CHECK(int32_t(raw.size()) == vocab_size_, "sample: logits row size != vocab_size");
  const bool constrained = matcher_ && !matcher_->is_terminated();
  SampleResult r;
  if (constrained && params_.greedy() && !has_penalties()) {
    // No masked copy of the row (1 MB per request per step on a 262k vocabulary): the same id,
    // read through the grammar's bitmask.
    const std::span<const float> x = sampled_part(raw);
    r.token = argmax_allowed(x.first(std::min(x.size(), size_t(matcher_->vocab_size()))), matcher_->allowed_words());
  } else {
    std::span<const float> logits = raw;
    if (constrained) {
      masked_.assign(raw.begin(), raw.end());
      matcher_->apply_mask(masked_);
      logits = masked_;
    }
    if (params_.greedy()) {
      std::vector<float> copy;
      std::span<const float> x = sampled_part(logits);
      if (has_penalties()) {
        copy.assign(x.begin(), x.end());
        apply_penalties(copy);
        x = copy;
      }
      r.token = argmax_first(x);
    } else {
      r.token = draw(candidates(logits));
    }
  }
  if (constrained && !matcher_->accept(r.token))  // every allowed id was -inf (a grammar that cannot end)
    throw_error(ErrorCode::INVALID_ARGUMENT, "the grammar allows no token here (a stop id is masked or "
                                             "every allowed id has -inf logit)");
  if (params_.logprobs >= 0) raw_logprobs(raw, r.token, params_.logprobs, r);
  append_output(r.token);
  return r;
}

}  // namespace oxyd::sample
