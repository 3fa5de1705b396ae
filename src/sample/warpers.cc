// Logit warpers on a candidate list with Hugging Face's semantics (TopK/TopP/MinP/Typical
// LogitsWarper, min_tokens_to_keep = 1), and the Philox4x32-10 generator. Sums run in double.
// Top-k uses nth_element: O(vocab) + O(k log k), never a full sort of a 262k row.
#include <algorithm>
#include <cmath>

#include "sample/sampler.h"

namespace oxyd::sample {
namespace {
// Descending logit, ties by lower id: a strict total order, so every selection is deterministic.
bool before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
}  // namespace

std::array<uint32_t, 4> Philox::block(uint64_t counter) const {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  std::array<uint32_t, 4> c{uint32_t(counter), uint32_t(counter >> 32), 0, 0};
  std::array<uint32_t, 2> k = key_;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kM0) * c[0], p1 = uint64_t(kM1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

double Philox::uniform() {
  const auto b = block(counter_++);
  const uint64_t bits = ((uint64_t(b[0]) << 32) | b[1]) >> 11;
  return double(bits) * 0x1p-53;
}

void sort_candidates(std::vector<Candidate>& c) { std::sort(c.begin(), c.end(), before); }

void apply_top_k(std::vector<Candidate>& c, int32_t top_k) {
  if (top_k > 0 && size_t(top_k) < c.size()) {
    std::nth_element(c.begin(), c.begin() + (top_k - 1), c.end(), before);
    const float kth = c[size_t(top_k - 1)].logit;
    // HF keeps every token whose logit equals the k-th value.
    const auto end = std::partition(c.begin() + top_k, c.end(), [&](const Candidate& x) { return x.logit >= kth; });
    c.erase(end, c.end());
  }
  sort_candidates(c);
}

void apply_top_p(std::vector<Candidate>& c, float top_p) {
  if (top_p >= 1.0f || c.empty()) return;
  const double m = c[0].logit;
  double z = 0;
  for (const auto& x : c) z += std::exp(double(x.logit) - m);
  // HF removes a token when the ascending cumulative mass up to and including it is <= 1 - top_p,
  // i.e. when the mass strictly before it in descending order is >= top_p.
  double before_mass = 0;
  size_t keep = 0;
  while (keep < c.size() && (keep == 0 || before_mass < double(top_p) * z)) {
    before_mass += std::exp(double(c[keep].logit) - m);
    ++keep;
  }
  c.resize(keep);
}

void apply_min_p(std::vector<Candidate>& c, float min_p) {
  if (min_p <= 0.0f || c.empty()) return;
  float m = c[0].logit;
  for (const auto& x : c) m = std::max(m, x.logit);
  // p / p_max = exp(logit - max); the max itself always stays.
  std::erase_if(c, [&](const Candidate& x) { return std::exp(double(x.logit) - m) < double(min_p); });
}

void apply_typical_p(std::vector<Candidate>& c, float typical_p) {
  if (typical_p >= 1.0f || c.size() <= 1) return;
  double m = c[0].logit, z = 0;
  for (const auto& x : c) m = std::max(m, double(x.logit));
  for (const auto& x : c) z += std::exp(double(x.logit) - m);
  const double log_z = std::log(z) + m;
  double entropy = 0;
  std::vector<std::pair<double, size_t>> shifted(c.size());  // (|-log p - H|, index)
  for (const auto& x : c) {
    const double lp = double(x.logit) - log_z;
    entropy -= std::exp(lp) * lp;
  }
  for (size_t i = 0; i < c.size(); ++i) shifted[i] = {std::fabs(-(double(c[i].logit) - log_z) - entropy), i};
  std::sort(shifted.begin(), shifted.end());
  // HF: last_ind = #(cumulative < mass) in shifted order; drop scores above the one at last_ind.
  size_t last = 0;
  double cum = 0;
  for (const auto& [s, i] : shifted) {
    cum += std::exp(double(c[i].logit) - log_z);
    if (cum < double(typical_p)) ++last; else break;
  }
  last = std::min(last, c.size() - 1);
  const double threshold = shifted[last].first;
  std::vector<Candidate> kept;
  for (size_t i = 0; i < c.size(); ++i)
    if (std::fabs(-(double(c[i].logit) - log_z) - entropy) <= threshold) kept.push_back(c[i]);
  c = std::move(kept);
}

}  // namespace oxyd::sample
