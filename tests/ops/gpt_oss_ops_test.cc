// gpt-oss's two new pointwise/attention pieces against transformers' own modeling code in float64
// (tests/data/ops/gpt_oss_ops.json, tools/gen_gpt_oss_op_goldens.py): ops::glu_oai against
// GptOssExperts._apply_gate (the interleaved gate_up split into even = gate, odd = up), and
// ops::paged_attention with sinks against eager_attention_forward, as one prefill of the whole
// sequence and as T single-token decodes over the paged cache (block size 4, ids shuffled).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "op_test_util.h"
#include "ops/activation.h"
#include "ops/attention.h"

namespace oxyd::test {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json j = [] {
    std::ifstream f(std::filesystem::path(OXYD_TEST_DATA_DIR) / "ops/gpt_oss_ops.json");
    return nlohmann::json::parse(f);
  }();
  return j;
}

void fill(const HostTensor& h, const nlohmann::json& v) {
  ASSERT_EQ(int64_t(v.size()), h.n());
  for (int64_t i = 0; i < h.n(); ++i) h.f()[i] = v[size_t(i)].get<float>();
}

class GptOssOps : public IsaTest {};

TEST_P(GptOssOps, GluOaiMatchesTransformers) {
  const auto& g = golden()["glu"];
  const int64_t n = g["n"], inter = g["inter"];
  HostTensor gate(DType::F32, {n, inter}), up(gate.t), out(gate.t);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < inter; ++i) {
      gate.f()[r * inter + i] = g["gate_up"][size_t(r * 2 * inter + 2 * i)].get<float>();
      up.f()[r * inter + i] = g["gate_up"][size_t(r * 2 * inter + 2 * i + 1)].get<float>();
    }
  ops::glu_oai(gate.t, up.t, 1.702f, 7.0f, out.t);
  std::vector<float> want(size_t(n * inter));
  for (size_t i = 0; i < want.size(); ++i) want[i] = g["out"][i].get<float>();
  expect_close(out.f(), want.data(), out.n(), tolerance(DType::F32), "glu_oai vs transformers");
}

// One request of T tokens: K/V written once into a shuffled paged cache, then attention for
// query rows [first, T) as one step (the earlier tokens are context).
std::vector<float> run_attention(const nlohmann::json& c, int64_t first) {
  const int64_t nh = c["nh"], nkv = c["nkv"], hd = c["hd"], T = c["T"], bs = 4;
  const int64_t nb = (T + bs - 1) / bs, num_blocks = nb + 2;
  HostTensor q(DType::F32, {T, nh, hd}), k(DType::F32, {T, nkv, hd}), v(k.t), sinks(DType::F32, {nh});
  fill(q, c["q"]), fill(k, c["k"]), fill(v, c["v"]), fill(sinks, c["sinks"]);
  HostTensor k_cache(DType::F32, {num_blocks, bs, nkv, hd}), v_cache(k_cache.t);
  HostTensor table(DType::I32, {1, nb}), slots(DType::I32, {T}), qsl(DType::I32, {2}), seq(DType::I32, {1});
  std::vector<int32_t> ids(static_cast<size_t>(num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::reverse(ids.begin(), ids.end());
  for (int64_t b = 0; b < nb; ++b) table.i()[b] = ids[size_t(b)];
  for (int64_t t = 0; t < T; ++t) slots.i()[t] = int32_t(table.i()[t / bs] * bs + t % bs);
  ops::reshape_and_cache(k.t, v.t, k_cache.t, v_cache.t, slots.t, KvFormat::F32);
  const int64_t ql = T - first;
  HostTensor qs(DType::F32, {ql, nh, hd}), out(qs.t);
  std::copy(q.f() + first * nh * hd, q.f() + T * nh * hd, qs.f());
  qsl.i()[0] = 0, qsl.i()[1] = int32_t(ql), seq.i()[0] = int32_t(T);
  backend::AttentionParams p;
  p.q = qs.t, p.k_cache = k_cache.t, p.v_cache = v_cache.t, p.query_start_loc = qsl.t, p.seq_lens = seq.t;
  p.block_table = table.t, p.sinks = sinks.t, p.out = out.t;
  p.scale = c["scale"].get<float>(), p.sliding_window = c["window"].get<int>();
  ops::paged_attention(p);
  return std::vector<float>(out.f(), out.f() + out.n());
}

TEST_P(GptOssOps, SinkAttentionMatchesTransformers) {
  for (const auto& c : golden()["attention"]) {
    const int64_t nh = c["nh"], hd = c["hd"], T = c["T"], row = nh * hd;
    std::vector<float> want(size_t(T * row));
    for (size_t i = 0; i < want.size(); ++i) want[i] = c["out"][i].get<float>();
    const std::string name = c["name"];
    const std::vector<float> prefill = run_attention(c, 0);
    expect_close(prefill.data(), want.data(), T * row, tolerance(DType::F32), name + " prefill");
    for (int64_t t = 0; t < T; ++t) {  // each token decoded alone over its context
      nlohmann::json cut = c;
      cut["T"] = t + 1;
      for (const char* key : {"q", "k", "v"}) {
        const int64_t per = key[0] == 'q' ? row : int64_t(c["nkv"]) * hd;
        cut[key] = nlohmann::json(std::vector<float>(c[key].begin(), c[key].begin() + (t + 1) * per));
      }
      const std::vector<float> dec = run_attention(cut, t);
      expect_close(dec.data(), want.data() + t * row, row, tolerance(DType::F32), name + " decode t=" + std::to_string(t));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, GptOssOps, testing::ValuesIn(isas_to_test()), isa_param_name);

}  // namespace
}  // namespace oxyd::test
