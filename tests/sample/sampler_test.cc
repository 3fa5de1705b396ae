// sample/ against Hugging Face transformers' logits processors (goldens from
// tools/gen_sampling_goldens.py), OpenAI's penalty formula (numpy, same script), a chi-square test
// of 20k draws against HF's final distribution, Random123's Philox known answer, and seeding.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <set>

#include "core/error.h"
#include "sample/sampler.h"

namespace oxyd::sample {
namespace {

using nlohmann::json;

const json& goldens() {
  static const json j = [] {
    std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/sample/goldens.json");
    return json::parse(f);
  }();
  return j;
}

std::vector<float> floats(const json& a) {
  std::vector<float> v;
  for (const auto& x : a) v.push_back(x.is_null() ? -INFINITY : x.get<float>());
  return v;
}
std::vector<int32_t> ints(const json& a) { return a.is_null() ? std::vector<int32_t>{} : a.get<std::vector<int32_t>>(); }

SamplingParams params_of(const json& p) {
  SamplingParams s;
  s.temperature = p.value("temperature", 1.0f);
  s.top_k = p.value("top_k", 0);
  s.top_p = p.value("top_p", 1.0f);
  s.min_p = p.value("min_p", 0.0f);
  s.typical_p = p.value("typical_p", 1.0f);
  s.repetition_penalty = p.value("repetition_penalty", 1.0f);
  s.presence_penalty = p.value("presence_penalty", 0.0f);
  s.frequency_penalty = p.value("frequency_penalty", 0.0f);
  if (p.contains("logit_bias"))
    for (const auto& [k, v] : p["logit_bias"].items()) s.logit_bias.emplace_back(std::stoi(k), v.get<float>());
  return s;
}

RequestSampler sampler_of(const json& c, uint64_t seed = 1) {
  const auto logits = floats(c["logits"]);
  RequestSampler s(params_of(c["params"]), int32_t(logits.size()), ints(c.value("prompt", json())), seed);
  for (int32_t t : ints(c.value("output", json()))) s.append_output(t);
  return s;
}

// Candidates as a full row with -inf for removed tokens.
std::vector<float> as_row(const std::vector<Candidate>& c, size_t vocab) {
  std::vector<float> row(vocab, -INFINITY);
  for (const auto& e : c) row[size_t(e.id)] = e.logit;
  return row;
}

void expect_rows(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) EXPECT_TRUE(std::isinf(got[i])) << what << " token " << i << " should be removed";
    else EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, std::fabs(want[i]))) << what << " token " << i;
  }
}

TEST(Sample, WarpersMatchHuggingFace) {
  int n = 0;
  for (const auto& c : goldens()) {
    const std::string op = c["op"];
    if (op == "pipeline") continue;
    const auto x = floats(c["logits"]), want = floats(c["expected"]);
    std::vector<Candidate> cand;
    for (size_t i = 0; i < x.size(); ++i) cand.push_back({int32_t(i), x[i]});
    const auto& p = c["params"];
    std::vector<float> got;
    if (op == "top_k") apply_top_k(cand, p["top_k"]);
    else if (op == "top_p") { sort_candidates(cand); apply_top_p(cand, p["top_p"]); }
    else if (op == "min_p") apply_min_p(cand, p["min_p"]);
    else if (op == "typical_p") apply_typical_p(cand, p["typical_p"]);
    else cand = sampler_of(c).candidates(x);  // temperature and penalties through RequestSampler
    expect_rows(as_row(cand, x.size()), want, op + " " + p.dump());
    // The sampler's own path (incl. the partial-sort top_p) gives the same set as the warper.
    if (op == "top_k" || op == "top_p" || op == "min_p" || op == "typical_p")
      expect_rows(as_row(sampler_of(c).candidates(x), x.size()), want, "sampler " + op);
    ++n;
  }
  EXPECT_EQ(n, 80);
}

TEST(Sample, PipelineDistributionAndChiSquare) {
  int n = 0;
  for (const auto& c : goldens()) {
    if (c["op"] != "pipeline") continue;
    auto s = sampler_of(c, 42);
    const auto x = floats(c["logits"]);
    const auto want = floats(c["expected"]);
    const auto cand = s.candidates(x);
    double m = -INFINITY, z = 0;
    for (const auto& e : cand) m = std::max(m, double(e.logit));
    for (const auto& e : cand) z += std::exp(e.logit - m);
    std::vector<double> prob(x.size(), 0);
    for (const auto& e : cand) prob[size_t(e.id)] = std::exp(e.logit - m) / z;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(prob[i], want[i], 1e-5) << c["params"].dump() << " token " << i;
    const int kDraws = 20000;
    std::vector<int> hist(x.size(), 0);
    for (int d = 0; d < kDraws; ++d) ++hist[size_t(s.draw(cand))];
    double chi2 = 0;
    int df = -1;
    for (size_t i = 0; i < x.size(); ++i) {
      if (want[i] == 0) { EXPECT_EQ(hist[i], 0); continue; }
      const double e = want[i] * kDraws;
      chi2 += (hist[i] - e) * (hist[i] - e) / e;
      ++df;
    }
    // 0.999 quantile of chi-square with df <= 11 is <= 31.26 (fixed seed: deterministic).
    EXPECT_LT(chi2, 31.26) << c["params"].dump() << " df " << df;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

TEST(Sample, PhiloxKnownAnswer) {
  // Random123 kat_vectors: philox4x32_10, counter 0, key 0.
  const auto b = Philox(0).block(0);
  EXPECT_EQ(b, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(Sample, GreedyTiesLowestIdAndPenalties) {
  SamplingParams p;
  p.temperature = 0;
  std::vector<float> x{1, 3, 0.5, 3, -2};
  RequestSampler s(p, 5, {}, 0);
  EXPECT_EQ(s.sample(x).token, 1);
  p.repetition_penalty = 2.0f;  // 1 and 3 seen in prompt → 1.5 each; 2 stays 0.5... 0 wins with 1
  RequestSampler r(p, 5, std::vector<int32_t>{1, 3}, 0);
  EXPECT_EQ(r.sample(x).token, 1);  // 3/2 == 3/2: tie → lowest id
  p.logit_bias = {{4, 10.0f}};
  RequestSampler b(p, 5, {}, 0);
  EXPECT_EQ(b.sample(x).token, 4);
}

// Greedy on large rows (the blocked argmax): the first maximum as std::max_element finds it, with
// ties inside a block, across blocks, at the very end, and rows of -inf.
TEST(Sample, GreedyLargeVocabFirstMaximum) {
  SamplingParams p;
  p.temperature = 0;
  std::mt19937 g(7);
  std::normal_distribution<float> d;
  for (int32_t n : {1, 15, 17, 2047, 2048, 2049, 100003, 262144}) {
    std::vector<float> x(n);
    for (float& v : x) v = d(g);
    std::vector<std::vector<float>> rows{x};
    auto with = [&](std::initializer_list<int32_t> at, float v) {
      std::vector<float> y = x;
      for (int32_t i : at)
        if (i < n) y[i] = v;
      rows.push_back(y);
    };
    with({n - 1}, 50);
    with({n / 2, n - 1}, 50);
    with({3, 2047, 2048, n - 1}, 50);
    with({n - 1, 5000, 200000}, 50);
    rows.push_back(std::vector<float>(n, -INFINITY));
    for (const auto& y : rows) {
      RequestSampler s(p, n, {}, 0);
      EXPECT_EQ(s.sample(y).token, int32_t(std::max_element(y.begin(), y.end()) - y.begin())) << "n " << n;
    }
  }
}

TEST(Sample, TopKKeepsTiesAtTheKthValue) {
  SamplingParams p;
  p.top_k = 2;
  for (int32_t v : {5, 400}) {  // the one-pass path and the nth_element path (k > 256 below)
    std::vector<float> x(size_t(v), -5.0f);
    x[0] = 3; x[1] = 2; x[2] = 2; x[4] = 2;
    p.top_k = v == 5 ? 2 : 258;
    const auto c = RequestSampler(p, v, {}, 0).candidates(x);
    std::set<int32_t> ids;
    for (const auto& e : c) ids.insert(e.id);
    if (v == 5) EXPECT_EQ(ids, (std::set<int32_t>{0, 1, 2, 4}));
    else EXPECT_EQ(c.size(), 400u);  // every -5 ties with the 258th
  }
}

TEST(Sample, SeedReproducibleIndependentOfOtherRequests) {
  std::mt19937 g(5);
  std::normal_distribution<float> nd;
  std::vector<std::vector<float>> rows(50, std::vector<float>(100));
  for (auto& r : rows) for (auto& v : r) v = nd(g);
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_p = 0.95f;
  p.seed = 1234;
  auto run = [&](bool interleave, uint64_t seed) {
    p.seed = seed;
    RequestSampler a(p, 100, {}, 0);
    SamplingParams q = p;
    q.seed = 99;
    RequestSampler other(q, 100, {}, 0);
    std::vector<int32_t> out;
    for (const auto& r : rows) {
      if (interleave) other.sample(r), other.sample(r);
      out.push_back(a.sample(r).token);
    }
    return out;
  };
  EXPECT_EQ(run(false, 1234), run(true, 1234));
  EXPECT_NE(run(false, 1234), run(false, 1235));
}

TEST(Sample, RawLogprobs) {
  std::vector<float> x{0.5f, 2.0f, -1.0f, 2.0f, 0.0f};
  double z = 0;
  for (float v : x) z += std::exp(double(v));
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = 3;
  RequestSampler s(p, 5, {}, 0);
  const auto r = s.sample(x);
  EXPECT_EQ(r.token, 1);
  EXPECT_NEAR(r.logprob, 2.0 - std::log(z), 1e-6);
  ASSERT_EQ(r.top_logprobs.size(), 3u);
  EXPECT_EQ(r.top_logprobs[0].first, 1);
  EXPECT_EQ(r.top_logprobs[1].first, 3);
  EXPECT_EQ(r.top_logprobs[2].first, 0);
  EXPECT_NEAR(r.top_logprobs[2].second, 0.5 - std::log(z), 1e-6);
}

TEST(Sample, ValidateRejectsBadParams) {
  auto bad = [](auto set) { SamplingParams p; set(p); EXPECT_THROW(p.validate(10), Error); };
  bad([](SamplingParams& p) { p.temperature = -1; });
  bad([](SamplingParams& p) { p.top_p = -0.1f; });
  bad([](SamplingParams& p) { p.top_p = 1.5f; });
  bad([](SamplingParams& p) { p.min_p = 1.5f; });
  bad([](SamplingParams& p) { p.typical_p = 0; });
  bad([](SamplingParams& p) { p.repetition_penalty = 0; });
  bad([](SamplingParams& p) { p.presence_penalty = 3; });
  bad([](SamplingParams& p) { p.logprobs = 21; });
  bad([](SamplingParams& p) { p.logit_bias = {{10, 1.0f}}; });
  bad([](SamplingParams& p) { p.logit_bias = {{1, 101.0f}}; });
  bad([](SamplingParams& p) { p.temperature = NAN; });
  SamplingParams ok;
  EXPECT_NO_THROW(ok.validate(10));
}

// top_p = 0 is allowed, as HF's TopPLogitsWarper and OpenAI's API allow it: the nucleus is the
// top token alone (a warper keeps at least one), so sampling is greedy whatever the seed, on the
// small-vocab path and on the 262k-vocab fast path.
TEST(Sample, TopPZeroKeepsOnlyTheTopToken) {
  for (const int32_t V : {7, 262144}) {
    std::mt19937 g(3);
    std::normal_distribution<float> nd(0, 0.5f);  // flat: at temperature 1 other tokens are likely
    std::vector<float> x(static_cast<size_t>(V));
    for (auto& v : x) v = nd(g);
    const int32_t top = int32_t(std::max_element(x.begin(), x.end()) - x.begin());
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_p = 0.0f;
    ASSERT_NO_THROW(p.validate(V));
    for (uint64_t seed = 0; seed < 40; ++seed) {
      p.seed = seed;
      RequestSampler s(p, V, {}, 0);
      EXPECT_EQ(s.sample(x).token, top) << "vocab " << V << " seed " << seed;
    }
  }
}

// 262k vocab: the partial-sort fast paths equal a full sort, and report the time per sample.
TEST(Sample, LargeVocabFastPathsMatchFullSort) {
  const int32_t V = 262144;
  std::mt19937 g(9);
  std::normal_distribution<float> nd(0, 4);
  std::vector<float> x(static_cast<size_t>(V));
  for (auto& v : x) v = nd(g);
  for (float top_p : {0.5f, 0.95f}) {
    SamplingParams p;
    p.top_p = top_p;
    RequestSampler s(p, V, {}, 0);
    auto fast = s.candidates(x);
    std::vector<Candidate> full;
    for (int32_t i = 0; i < V; ++i) full.push_back({i, x[size_t(i)]});
    sort_candidates(full);
    apply_top_p(full, top_p);
    ASSERT_EQ(fast.size(), full.size());
    for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(fast[i].id, full[i].id);
  }
  SamplingParams p;
  p.top_k = 40;
  p.top_p = 0.95f;
  p.seed = 1;
  RequestSampler s(p, V, {}, 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) s.sample(x);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 20;
  std::printf("sample() 262k vocab, top_k=40 top_p=0.95: %.3f ms\n", ms);
}

}  // namespace
}  // namespace oxyd::sample
