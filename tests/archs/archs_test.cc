// Every family against transformers (tools/gen_tiny_models.py goldens, float64 oracle):
//  * HF safetensors (F32; llama_tok F16; qwen3_bf16 BF16): logits of every prompt position within
//    1e-3 × the logit range (BF16: 2× the bf16-activation oracle's error), and the 32 greedy tokens
//    identical (prefill, then one decode step per token through the paged cache).
//  * GGUF files made by llama.cpp's converter (F32/F16/Q8_0/4-bit): against the oracle run on the
//    same dequant(quant(w)) weights, plus greedy agreement and KL to the F32 reference (quantized
//    files: 16-step greedy against llama.cpp on the same file in llamacpp_greedy_test.cc).
//  * Prefill == token-by-token decode == chunked prefill batched with another request.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "archs_util.h"
#include "model/archs/registry.h"

namespace oxyd::model::test {
namespace {

// Folders under tests/data/archs: one per runnable family of the registry (model/archs/), then
// the variants. llama_tok: Llama with the real Llama 2 vocabulary (32000); qwen3_bf16: BF16;
// qwen3_moe_mixed: dense and MoE layers in one model (decoder_sparse_step, mlp_only_layers);
// olmoe_clip: OLMoE with clip_qkv; qwen3_moe_bf16: a BF16 MoE checkpoint; qwen3_5_moe_bf16: a BF16
// hybrid (Gated DeltaNet) MoE checkpoint with a shared expert.
// Quantized checkpoints are checked against transformers on their exactly dequantized weights.
std::vector<std::string> arch_folders() {
  std::vector<std::string> out;
  for (const std::string& f : registered_families())
    if (!arch_spec(f).encoder) out.push_back(f);  // encoders: tests/model/embed_test.cc
  out.insert(out.end(), {"llama_tok", "qwen3_bf16", "qwen3_moe_mixed", "olmoe_clip", "qwen3_moe_bf16", "gpt_oss_mxfp4"});
  // qwen3_bf16 as FP8 / AWQ / GPTQ (± act-order) checkpoints (tools/gen_quant_checkpoints.py).
  out.insert(out.end(), {"qwen3_fp8", "qwen3_awq", "qwen3_gptq", "qwen3_gptq_act"});
  // qwen3_moe_bf16 as per-expert FP8 / AWQ checkpoints (as Qwen3-MoE FP8 / AWQ releases are), and as
  // AWQ / GPTQ with the experts stacked under transformers 5's fused names (experts.gate_up_proj.*).
  out.insert(out.end(), {"qwen3_moe_fp8", "qwen3_moe_awq", "qwen3_moe_awq_stacked", "qwen3_moe_gptq_stacked"});
  // Optional variants (tools/gen_tiny_models.py); gpt_oss_bf16: a BF16 gpt-oss checkpoint;
  // gpt_oss_q4k: gpt-oss at hidden 256, so its GGUFs hold Q4_K experts.
  // qwen3_5_bf16, ministral3_bf16: BF16 checkpoints of qwen3_5 and ministral3; qwen3_5_moe_fp8:
  // qwen3_5_moe_bf16 in block FP8 (as Qwen3.6-35B-A3B-FP8 ships).
  for (const char* f : {"gemma4_bf16", "gemma4_moe", "qwen3_5_moe_bf16", "gpt_oss_bf16", "gpt_oss_q4k", "qwen3_5_bf16",
                        "ministral3_bf16", "qwen3_5_moe_fp8"})
    if (std::filesystem::exists(std::filesystem::path(OXYD_SOURCE_DIR) / "tests/data/archs" / f / "goldens.json"))
      out.push_back(f);
  return out;
}

double max_abs_diff(const float* a, const float* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

double kl_row(const float* p_logits, const float* q_logits, int64_t n) {
  auto lse = [n](const float* x) {
    double mx = *std::max_element(x, x + n), s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
    return mx + std::log(s);
  };
  double lp = lse(p_logits), lq = lse(q_logits), kl = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = double(p_logits[i]) - lp, b = double(q_logits[i]) - lq;
    kl += std::exp(a) * (a - b);
  }
  return kl;
}

// The bound of a checkpoint whose kernels round activations to 8 bits (goldens.json
// quantized_activations): tol_of_range of the logit range, as for a quantized GGUF. A checkpoint the
// loader repacks (FP8 / AWQ / GPTQ, goldens.json repack) adds what the repack alone does to the
// float64 model (repack.max_abs_dlogit): the triangle bound from exact weights to repacked weights to
// repacked weights with 8-bit activations.
double quantized_bound(const Golden& g, size_t p, double range) {
  double b = g.j["quantized_activations"]["tol_of_range"].get<double>() * range;
  if (g.j.contains("repack")) b += g.j["repack"]["max_abs_dlogit"][p].get<double>();
  return b;
}

class ArchHf : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchHf, LogitsAndGreedyMatchTransformers) {
  const std::string fam = GetParam();
  Golden g = load_golden(fam);
  auto m = Transformer::load(arch_dir(fam));
  ASSERT_EQ(m->config().vocab_size, g.vocab);
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    auto lg = prefill(*m, g.prompts[p]);
    const size_t skip = (g.prompts[p].size() - static_cast<size_t>(g.rows(p))) * static_cast<size_t>(g.vocab);
    ASSERT_EQ(lg.size() - skip, g.logits[p].size());
    const double range = g.j["logit_range"][p];
    const double d = max_abs_diff(lg.data() + skip, g.logits[p].data(), g.logits[p].size());
    // BF16 checkpoint: CPU kernels multiply BF16 weights against bf16-rounded activations (AVX-512
    // BF16), so the bound is twice what that rounding alone does to the float64 oracle
    // (goldens.json bf16_activation_oracle, transformers with every linear input rounded to bf16).
    // MXFP4 / FP8 / AWQ / GPTQ checkpoints: quantized_bound, and greedy must match up to the first
    // step whose oracle margin is within 3·d.
    const bool qact = g.j.contains("quantized_activations");
    const double tol = qact ? quantized_bound(g, p, range)
                       : g.j.contains("bf16_activation_oracle")
                           ? std::max(1e-3 * range, 2.0 * g.j["bf16_activation_oracle"]["max_abs_diff"][p].get<double>())
                           : 1e-3 * range;
    EXPECT_LE(d, tol) << fam << " prompt " << p << ": max |Δlogit| " << d << ", range " << range;
    std::printf("[ DIFF    ] %s prompt %zu: max |Δlogit| %.3g (%.2g of the range %.3g)\n", fam.c_str(), p, d,
                d / range, range);
    const auto got = greedy(*m, g.prompts[p], static_cast<int>(g.greedy[p].size()));
    if (qact) {
      const auto margins = g.j["quantized_activations"]["greedy_margins"][p].get<std::vector<double>>();
      size_t safe = 0;
      while (safe < margins.size() && margins[safe] > 3.0 * d) ++safe;
      std::printf("[ GREEDY  ] %s prompt %zu: %zu decisive steps, all must match\n", fam.c_str(), p, safe);
      for (size_t i = 0; i < safe; ++i) ASSERT_EQ(got[i], g.greedy[p][i]) << fam << " prompt " << p << " step " << i;
    } else {
      EXPECT_EQ(got, g.greedy[p]) << fam << " prompt " << p;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ArchHf, ::testing::ValuesIn(arch_folders()),
                         [](const auto& info) { return info.param; });

// The same HF model with F16 / BF16 K/V caches: only the cached K/V are rounded (measured: F16
// ≤ 4.3e-4, BF16 ≤ 3.6e-3 of the logit range over the 10 models). The BF16 checkpoint adds its
// weights' bf16-activation error (2× the bf16_activation_oracle's, as in ArchHf). A model whose
// goldens carry half_kv_oracle (transformers in float64 with its attention's K/V rounded to f16 /
// bf16: Gemma 4, whose scale-1 attention makes it ~40× more sensitive) may add 1.5× that.
class ArchKvDtype : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchKvDtype, HalfCachesStayClose) {
  const std::string fam = GetParam();
  Golden g = load_golden(fam);
  auto m = Transformer::load(arch_dir(fam));
  const auto& prompt = g.prompts[1];
  const size_t skip = (prompt.size() - static_cast<size_t>(g.rows(1))) * static_cast<size_t>(g.vocab);
  const double range = g.j["logit_range"][1];
  const double act = g.j.contains("quantized_activations")
                         ? quantized_bound(g, 1, range)
                         : g.j.contains("bf16_activation_oracle")
                         ? 2.0 * g.j["bf16_activation_oracle"]["max_abs_diff"][1].get<double>()
                         : 0.0;
  // Mixture of experts: bf16's rounding of K/V (~0.4%) moves router logits by more than the
  // smallest top-k margins of these models (goldens.json router_margin_min, 1.6e-4 to 1.1e-2), and a
  // token that switches expert changes its MLP output wholesale (measured: olmoe_clip 0.092 of the
  // range with a BF16 cache, 3e-4 with F16); F16 keeps the dense bound.
  const double bf16_tol = g.j.contains("router_margin_min") ? 0.1 : 1e-2;
  for (auto [dtype, tol] : {std::pair{DType::F16, 1.5e-3}, std::pair{DType::BF16, bf16_tol}}) {
    auto lg = prefill(*m, prompt, nullptr, nullptr, *kv_format_of_dtype(dtype));
    const double d = max_abs_diff(lg.data() + skip, g.logits[1].data(), g.logits[1].size());
    std::printf("[ KV      ] %s %s cache: max |Δlogit| %.3g (%.2g of range)\n", fam.c_str(),
                dtype == DType::F16 ? "F16" : "BF16", d, d / range);
    const double kv_oracle = g.j.contains("half_kv_oracle")
                                 ? 1.5 * g.j["half_kv_oracle"][dtype == DType::F16 ? "F16" : "BF16"][1].get<double>()
                                 : 0.0;
    EXPECT_LE(d, tol * range + act + kv_oracle) << fam;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ArchKvDtype, ::testing::ValuesIn(arch_folders()),
                         [](const auto& info) { return info.param; });

// (family, format): every GGUF a tests/data/archs/<folder>/goldens.json lists as committed, for
// every folder of arch_folders() (tools/gen_tiny_models.py decides which: e.g. Mistral has none, as
// llama.cpp converts it to the `llama` arch, which drops the sliding window the HF goldens use).
struct GgufCase {
  std::string family;
  std::string format;
  double tol;  // max |Δlogit| vs the same-weights oracle, × logit range
};

std::vector<GgufCase> gguf_cases() {
  std::vector<GgufCase> out;
  for (const std::string& fam : arch_folders()) {
    std::ifstream f(arch_dir(fam) + "/goldens.json");
    const nlohmann::json g = nlohmann::json::parse(f);
    if (!g.contains("gguf")) continue;
    for (const auto& [format, e] : g["gguf"].items())
      if (e.contains("file") && e["file"].is_string())
        out.push_back({fam, format, format == "F32" || format == "F16" ? 1e-3 : 3e-2});
  }
  return out;
}

class ArchGguf : public ::testing::TestWithParam<GgufCase> {};

TEST_P(ArchGguf, MatchesOracleOnQuantizedWeights) {
  const GgufCase c = GetParam();
  Golden g = load_golden(c.family);
  const auto& e = g.j["gguf"][c.format];
  ASSERT_TRUE(e["file"].is_string()) << c.family << " " << c.format << " not committed";
  auto m = Transformer::load(arch_dir(c.family) + "/" + e["file"].get<std::string>());
  const int64_t V = g.vocab;
  const bool is_f32 = c.format == "F32";
  const int64_t last = g.j["quant_last_positions"];
  // llama.cpp on the same file (tools/gen_llamacpp_greedy_goldens.py) rounds activations to 8 bits
  // as our CPU kernels do: its largest distance from the f32-activation oracle over the prompts,
  // × 1.25, also bounds ours. It matters where the model amplifies that rounding (qwen3_5: its
  // Gated DeltaNet recurrence; llama.cpp 0.84-2.57 logits on Q8_0, 3e-2 of the range is ~0.95).
  double peer_abs = 0;
  nlohmann::json peer;
  if (std::ifstream lf(arch_dir(c.family) + "/llamacpp_greedy.json"); lf.good()) peer = nlohmann::json::parse(lf);
  if (!is_f32 && peer.contains("formats") && peer["formats"].contains(c.format) &&
      peer["formats"][c.format].contains("max_abs_diff_vs_oracle"))
    for (double d : peer["formats"][c.format]["max_abs_diff_vs_oracle"]) peer_abs = std::max(peer_abs, 1.25 * d);
  int agree = 0;
  double kl_sum = 0, oracle_kl_sum = 0;  // ours and the same-weights oracle's, same positions
  int64_t kl_n = 0;
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const int64_t n = static_cast<int64_t>(g.prompts[p].size());
    auto lg = prefill(*m, g.prompts[p]);
    const double range = g.j["logit_range"][p];
    double d_quant = 0;  // our max |Δlogit| vs the same-weights oracle on this prompt
    if (is_f32) {
      double d = max_abs_diff(lg.data(), g.logits[p].data(), lg.size());
      EXPECT_LE(d, c.tol * range) << c.family << " F32 GGUF prompt " << p << ": max |Δ| " << d;
    } else {
      const int64_t off = e["quant_logits_offset"].get<int64_t>() + static_cast<int64_t>(p) * last;
      double d = max_abs_diff(lg.data() + (n - last) * V, g.quant_logits.data() + off * V, last * V);
      d_quant = d;
      std::printf("[ DIFF    ] %s %s prompt %zu: max |Δlogit| vs same-weights oracle %.3g (%.2g of range)\n",
                  c.family.c_str(), c.format.c_str(), p, d, d / range);
      EXPECT_LE(d, std::max(c.tol * range, peer_abs))
          << c.family << " " << c.format << " prompt " << p << ": max |Δ| " << d
          << " vs the oracle on the same quantized weights (range " << range << ", llama.cpp's × 1.25 " << peer_abs
          << ")";
    }
    const int64_t first_row = n - g.rows(p);  // logits.bin may hold only the last rows
    for (int64_t i = n - last; i < n; ++i) {
      kl_sum += kl_row(g.logits[p].data() + (i - first_row) * V, lg.data() + i * V, V);
      if (!is_f32) {
        const int64_t off = e["quant_logits_offset"].get<int64_t>() + static_cast<int64_t>(p) * last;
        oracle_kl_sum += kl_row(g.logits[p].data() + (i - first_row) * V,
                                g.quant_logits.data() + (off + i - (n - last)) * V, V);
      }
      ++kl_n;
    }
    auto want = is_f32 ? std::vector<int32_t>(g.greedy[p].begin(), g.greedy[p].begin() + 16)
                       : e["oracle_greedy"][p].get<std::vector<int32_t>>();
    auto got = greedy(*m, g.prompts[p], 16);
    agree += got == want;
    if (!is_f32 && c.tol > 1e-3) {
      // Quantized: the CPU kernels round activations to 8 bits (as llama.cpp does), moving logits
      // by d_quant (measured on this prompt) from the f32-activation oracle. Steps must agree up
      // to the first one whose oracle top-1 margin is within 3·d_quant (where a flip is legitimate).
      const auto margins = e["oracle_greedy_margins"][p].get<std::vector<double>>();
      size_t safe = 0;
      while (safe < margins.size() && margins[safe] > 3.0 * d_quant) ++safe;
      std::printf("[ GREEDY  ] %s %s prompt %zu: %zu decisive steps, all must match\n", c.family.c_str(),
                  c.format.c_str(), p, safe);
      for (size_t i = 0; i < safe; ++i)
        ASSERT_EQ(got[i], want[i]) << c.family << " " << c.format << " prompt " << p << " step " << i
                                   << " (oracle margin " << margins[i] << ")";
    }
  }
  const double kl = kl_sum / static_cast<double>(kl_n);
  std::printf("[ KL      ] %s %s: mean KL(F32 reference || ours) over the last %lld positions = %.3g\n",
              c.family.c_str(), c.format.c_str(), static_cast<long long>(last), kl);
  std::printf("[ GREEDY  ] %s %s: 16-token greedy equal to the oracle's on %d of %zu prompts\n", c.family.c_str(),
              c.format.c_str(), agree, g.prompts.size());
  // Float formats: every prompt, all 16 steps (quantized ones: the decisive steps, above).
  if (c.tol <= 1e-3) {
    EXPECT_EQ(agree, static_cast<int>(g.prompts.size()))
        << c.family << " " << c.format << ": 16-token greedy agreed with the oracle on " << agree << " prompts";
  }
  if (!is_f32) {
    // The oracle's KL over every position (goldens.json), or over the same last positions as ours
    // when that is larger: late positions can differ more (ministral3 Q8_0: 0.0025 over all,
    // 0.0047 over the last 4, where ours is 0.0077).
    const double want_kl = std::max(e["kl_to_f32_mean"].get<double>(), oracle_kl_sum / double(kl_n));
    double bound = 3.0 * want_kl + 1e-4;
    // llama.cpp on the same file, where tools/gen_llamacpp_greedy_goldens.py measured its KL the
    // same way (last positions): it rounds activations to 8 bits as we do, which in a mixture of
    // experts also moves tokens whose k-th and (k+1)-th router logits are that close to another
    // expert (measured: olmoe Q8_0 llama.cpp 0.0202 = ours 0.0202, 4x the f32-activation oracle's).
    if (peer.contains("formats") && peer["formats"].contains(c.format) &&
        peer["formats"][c.format].contains("kl_to_f32_last_mean")) {
      const double peer_kl = peer["formats"][c.format]["kl_to_f32_last_mean"];
      std::printf("[ KL      ] %s %s: llama.cpp on the same file %.3g\n", c.family.c_str(), c.format.c_str(), peer_kl);
      bound = std::max(bound, 1.25 * peer_kl);
    }
    EXPECT_LE(kl, bound) << c.family << " " << c.format << ": oracle KL " << want_kl;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ArchGguf, ::testing::ValuesIn(gguf_cases()), [](const auto& info) {
  return info.param.family + "_" + info.param.format;
});

// Continuous batching relies on these three giving the same logits.
class ArchBatching : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchBatching, PrefillEqualsDecodeEqualsChunkedMixed) {
  const std::string fam = GetParam();
  Golden g = load_golden(fam);
  auto m = Transformer::load(arch_dir(fam));
  const int64_t V = g.vocab;
  const auto& prompt = g.prompts[1];
  const int64_t n = static_cast<int64_t>(prompt.size());
  // BF16 checkpoint: the one-row (decode) and many-row (prefill) CPU kernels need not round the
  // activations to bf16 alike (measured: up to 0.016 apart on qwen3_bf16, range 43), so both are
  // only held to the bf16-activation error band (2× bf16_activation_oracle) around each other.
  const double tol = 1e-4 * static_cast<double>(g.j["logit_range"][1]) +
                     (g.j.contains("bf16_activation_oracle")
                          ? 2.0 * g.j["bf16_activation_oracle"]["max_abs_diff"][1].get<double>()
                          : 0.0);
  auto full = prefill(*m, prompt);

  {  // token by token
    KvCache cache = m->make_kv_cache(kNumBlocks, kBlock);
    Seq s = make_seq(prompt, kMaxTokens, kBlock, 5, 2);
    for (int64_t i = 0; i < n; ++i) {
      auto d = step(*m, cache, {&s}, {1}, kBlock);
      EXPECT_LE(max_abs_diff(d.data(), full.data() + i * V, V), tol) << fam << " decode position " << i;
    }
  }
  ASSERT_GE(n, 8);
  {  // three chunks sharing steps with another request (prefill, then decode)
    KvCache cache = m->make_kv_cache(kNumBlocks, kBlock);
    Seq a = make_seq(prompt, kMaxTokens, kBlock, 40, -1);
    std::vector<int32_t> other = g.prompts[0];
    other.insert(other.end(), g.greedy[0].begin(), g.greedy[0].end());
    Seq b = make_seq(other, kMaxTokens, kBlock, 41, 2);
    b.state_slot = 1;  // hybrid models: the other request's recurrent state
    const int64_t nb = static_cast<int64_t>(g.prompts[0].size());
    const int64_t chunks[] = {5, (n - 5) / 2, n - 5 - (n - 5) / 2};  // 5, 14, 14 for 33 tokens
    int64_t done = 0;
    for (int step_idx = 0; step_idx < 3; ++step_idx) {
      const int64_t nbi = step_idx == 0 ? nb : 1;
      auto out = step(*m, cache, {&b, &a}, {nbi, chunks[step_idx]}, kBlock);
      for (int64_t i = 0; i < chunks[step_idx]; ++i)
        EXPECT_LE(max_abs_diff(out.data() + (nbi + i) * V, full.data() + (done + i) * V, V), tol)
            << fam << " chunked position " << done + i;
      // the other request's last row predicts its next golden greedy token
      EXPECT_EQ(argmax(out.data() + (nbi - 1) * V, V), g.greedy[0][step_idx]) << fam << " other request";
      done += chunks[step_idx];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ArchBatching, ::testing::ValuesIn(arch_folders()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd::model::test
