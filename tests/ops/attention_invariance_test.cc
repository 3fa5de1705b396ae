// Batch invariance of CPU paged attention: one query of a request gives bit-identical output
// rows whatever else runs in the same call. The same position is computed as a decode step alone,
// as a decode step among 15 other requests (decodes and prefills of different lengths), as the
// last row of prefills and prefill chunks of several lengths, and under pool sizes that do and do
// not split long key ranges across threads (split-K), on every KV dtype and ISA. Before the fix
// a decode query went through a kernel of its own (per-key horizontal sums, online softmax per
// cache block) while prefill rows used 64-key chunks, and split-K (taken only when a call had
// fewer work items than threads) merged its partial states in another order: a request's tokens
// changed with what else was batched, chunked or recomputed after preemption.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>

#include "core/kv_quant.h"
#include "core/thread_pool.h"
#include "op_test_util.h"
#include "ops/attention.h"

namespace oxyd::test {
namespace {

using backend::AttentionParams;

struct Shape {
  std::string name;
  int num_heads, num_kv_heads, head_dim, block_size;
  DType kv_dtype;
  int sliding_window = 0;
  float softcap = 0;
  bool sinks = false;
  int kv_quant_bits = 0;
};

// A request of one call: its K/V and query rows are drawn from `seed` position by position, so the
// same seed gives the same data for the positions two calls share.
struct Req {
  uint32_t seed;
  int ctx, query_len;
};

struct Row {
  std::vector<float> k, v, q;  // one position: [nkv·hd], [nkv·hd], [nh·hd]
};

Row row_at(const Shape& s, uint32_t seed, int pos) {
  std::mt19937 rng(seed * 7919u + uint32_t(pos));
  std::uniform_real_distribution<float> dist(-1, 1);
  Row r;
  const int kv = s.num_kv_heads * s.head_dim;
  r.k.resize(size_t(kv)), r.v.resize(size_t(kv)), r.q.resize(size_t(s.num_heads * s.head_dim));
  for (auto& x : r.k) x = dist(rng);
  for (auto& x : r.v) x = dist(rng);
  for (auto& x : r.q) x = 2.0f * dist(rng);
  return r;
}

// Runs one call over `reqs` and returns the output row of request `target`'s last query.
std::vector<float> attend(const Shape& s, const std::vector<Req>& reqs, size_t target) {
  const int64_t nr = int64_t(reqs.size()), nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const int64_t bs = s.block_size;
  int64_t num_tokens = 0, blocks = 0, max_blocks = 1, cached = 0;
  for (const Req& r : reqs) {
    const int64_t nb = (r.ctx + r.query_len + bs - 1) / bs;
    blocks += nb, max_blocks = std::max(max_blocks, nb), num_tokens += r.query_len, cached += r.ctx + r.query_len;
  }
  std::vector<int32_t> ids(size_t(blocks + 2));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(uint32_t(nr * 31 + num_tokens)));
  HostTensor qsl(DType::I32, {nr + 1}), seq_lens(DType::I32, {nr}), table(DType::I32, {nr, max_blocks});
  std::fill(table.i(), table.i() + table.n(), -1);
  HostTensor keys(DType::F32, {cached, nkv, hd}), values(keys.t), slots(DType::I32, {cached});
  HostTensor q(DType::F32, {std::max<int64_t>(num_tokens, 1), nh, hd});
  int64_t next = 0, row = 0;
  qsl.i()[0] = 0;
  for (int64_t r = 0; r < nr; ++r) {
    const int seq = reqs[r].ctx + reqs[r].query_len;
    seq_lens.i()[r] = seq;
    qsl.i()[r + 1] = qsl.i()[r] + reqs[r].query_len;
    for (int64_t b = 0; b * bs < seq; ++b) table.i()[r * max_blocks + b] = ids[size_t(next++)];
    for (int pos = 0; pos < seq; ++pos, ++row) {
      const Row x = row_at(s, reqs[r].seed, pos);
      std::copy(x.k.begin(), x.k.end(), keys.f() + row * nkv * hd);
      std::copy(x.v.begin(), x.v.end(), values.f() + row * nkv * hd);
      slots.i()[row] = table.i()[r * max_blocks + pos / bs] * int32_t(bs) + pos % int32_t(bs);
      if (pos >= reqs[r].ctx)
        std::copy(x.q.begin(), x.q.end(), q.f() + (qsl.i()[r] + pos - reqs[r].ctx) * nh * hd);
    }
  }
  const int64_t nblk = blocks + 2;
  HostTensor k_cache, v_cache;
  if (s.kv_quant_bits > 0) {
    const int64_t rb = kv_quant_row_bytes(hd, s.kv_quant_bits);
    k_cache = HostTensor(Tensor(DType::U8, nullptr, {nblk, bs, nkv, rb}));
  } else {
    k_cache = HostTensor(Tensor(s.kv_dtype, nullptr, {nblk, bs, nkv, hd}));
  }
  v_cache = HostTensor(k_cache.t);
  std::memset(k_cache.buf.data(), 0, k_cache.buf.size()), std::memset(v_cache.buf.data(), 0, v_cache.buf.size());
  const KvFormat fmt = s.kv_quant_bits > 0 ? *kv_format_of_bits(s.kv_quant_bits) : *kv_format_of_dtype(s.kv_dtype);
  ops::reshape_and_cache(keys.t, values.t, k_cache.t, v_cache.t, slots.t, fmt);
  HostTensor sinks(DType::F32, {nh});
  for (int64_t h = 0; h < nh; ++h) sinks.f()[h] = 0.5f * float(h % 5) - 1.0f;
  HostTensor out(q.t);
  AttentionParams p;
  p.q = q.t, p.k_cache = k_cache.t, p.v_cache = v_cache.t, p.query_start_loc = qsl.t, p.seq_lens = seq_lens.t;
  p.block_table = table.t, p.out = out.t, p.scale = 1.0f / std::sqrt(float(hd));
  p.sliding_window = s.sliding_window, p.logit_softcap = s.softcap, p.kv_format = fmt;
  if (s.sinks) p.sinks = sinks.t;
  ops::paged_attention(p);
  const int64_t t = qsl.i()[target + 1] - 1;
  return std::vector<float>(out.f() + t * nh * hd, out.f() + (t + 1) * nh * hd);
}

std::vector<Shape> shapes() {
  return {
      {"gemma3_270m_like_f16", 4, 1, 256, 16, DType::F16, 0, 0},
      {"gqa_f32", 8, 2, 64, 16, DType::F32},
      {"mha_bf16_hd80", 4, 4, 80, 8, DType::BF16},
      {"window_softcap_sinks_f16", 6, 2, 128, 16, DType::F16, 300, 30.0f, true},
      {"kv_quant4_hd128", 4, 2, 128, 16, DType::F32, 0, 0, false, 4},
  };
}

// The position computed every way; contexts long enough for split-K on a single request.
class AttentionInvariance : public IsaTest {};

TEST_P(AttentionInvariance, QueryRowIndependentOfBatchChunkAndThreads) {
  constexpr uint32_t kSeed = 12345;
  for (const Shape& s : shapes()) {
    for (const int pos : {37, 555}) {
      ThreadPool::set_global_threads(4);
      const std::vector<float> alone = attend(s, {{kSeed, pos, 1}}, 0);
      auto check = [&](const std::vector<Req>& reqs, size_t target, const std::string& how) {
        const std::vector<float> got = attend(s, reqs, target);
        ASSERT_EQ(got.size(), alone.size());
        EXPECT_EQ(std::memcmp(got.data(), alone.data(), got.size() * sizeof(float)), 0)
            << s.name << " position " << pos << ": " << how;
      };
      // Among 15 others: decodes and prefills of different lengths, the target in the middle.
      std::vector<Req> mixed;
      for (int i = 0; i < 15; ++i) mixed.push_back({uint32_t(100 + i), 3 * i + (i % 3) * 50, i % 4 == 0 ? 9 + i : 1});
      mixed.insert(mixed.begin() + 7, Req{kSeed, pos, 1});
      check(mixed, 7, "decode among 15 others");
      // As the last row of a prefill / prefill chunk, alone and with others.
      for (const int len : {2, 5, 33, 64, 100}) {
        if (len > pos + 1) continue;
        check({{kSeed, pos + 1 - len, len}}, 0, "last row of a " + std::to_string(len) + "-token chunk");
        check({{7, 20, 1}, {kSeed, pos + 1 - len, len}, {8, 5, 30}}, 1,
              "last row of a " + std::to_string(len) + "-token chunk among others");
      }
      for (const int threads : {1, 2, 7}) {
        ThreadPool::set_global_threads(threads);
        check({{kSeed, pos, 1}}, 0, "alone, " + std::to_string(threads) + " threads");
      }
    }
  }
  ThreadPool::set_global_threads(int(std::thread::hardware_concurrency()));
}

INSTANTIATE_TEST_SUITE_P(Cpu, AttentionInvariance, testing::ValuesIn(isas_to_test()), isa_param_name);

}  // namespace
}  // namespace oxyd::test
