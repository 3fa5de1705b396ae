// Paged attention and reshape_and_cache. Each case builds a batch of requests (decode, fresh
// prefill, chunked prefill continuing a cache, empty), writes every token's K/V into a paged
// cache whose block ids are shuffled, and compares backend::reference and backend::cpu (each
// ISA forced, through ops/) against a naive dense masked attention written here that reads the
// per-request K/V arrays directly (no block table).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "backend/cpu/attention.h"
#include "backend/reference/attention.h"
#include "op_test_util.h"
#include "ops/attention.h"
#include "core/thread_pool.h"

namespace oxyd::test {
namespace {

using backend::AttentionParams;

struct Req {
  int ctx;        // tokens cached before this step
  int query_len;  // tokens of this step (seq_len = ctx + query_len)
};

struct Case {
  std::string name;
  std::vector<Req> reqs;
  int num_heads, num_kv_heads, head_dim, block_size;
  DType kv_dtype = DType::F32;
  int sliding_window = 0;
  float softcap = 0;
  bool sinks = false;
  float q_range = 2.0f;  // q ~ U(−q_range, q_range): large values make the running max jump
  bool causal = true;    // false: every query sees all seq_len keys (encoders)
};

float round_to(DType dt, float v) {
  if (dt == DType::F16) return f16_to_f32(f32_to_f16(v));
  if (dt == DType::BF16) return bf16_to_f32(f32_to_bf16(v));
  return v;
}

// Everything one case needs: logical per-request K/V, the paged caches, metadata, q, sinks.
struct Batch {
  Case c;
  int64_t num_tokens = 0, num_blocks = 0, max_blocks = 0;
  std::vector<std::vector<float>> k, v;  // per request [seq_len, nkv, hd], rounded to kv dtype
  HostTensor q, k_cache, v_cache, qsl, seq_lens, block_table, sinks, key_all, value_all, slots;

  explicit Batch(const Case& cs) : c(cs) {
    const int64_t nr = int64_t(c.reqs.size()), row = int64_t(c.num_kv_heads) * c.head_dim;
    int64_t total_blocks = 0, total_cached = 0;
    for (const Req& r : c.reqs) {
      const int64_t nb = (r.ctx + r.query_len + c.block_size - 1) / c.block_size;
      total_blocks += nb, max_blocks = std::max(max_blocks, nb + 1);
      num_tokens += r.query_len, total_cached += r.ctx + r.query_len;
    }
    num_blocks = total_blocks + 3;  // spare blocks that nobody uses
    std::mt19937 rng(uint32_t(std::hash<std::string>()(c.name)));
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<int32_t> ids(num_blocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);

    qsl = HostTensor(DType::I32, {nr + 1}), seq_lens = HostTensor(DType::I32, {nr});
    block_table = HostTensor(DType::I32, {nr, max_blocks});
    std::fill(block_table.i(), block_table.i() + block_table.n(), -1);  // unused entries: never read
    // All cached tokens of all requests, written through reshape_and_cache in one call, with a
    // padding row (slot −1) between requests.
    const int64_t rows = total_cached + nr;
    key_all = HostTensor(DType::F32, {rows, c.num_kv_heads, c.head_dim}), value_all = HostTensor(key_all.t);
    slots = HostTensor(DType::I32, {rows});
    int64_t next_id = 0, out_row = 0;
    qsl.i()[0] = 0;
    for (int64_t r = 0; r < nr; ++r) {
      const int64_t seq = c.reqs[r].ctx + c.reqs[r].query_len;
      seq_lens.i()[r] = int32_t(seq);
      qsl.i()[r + 1] = qsl.i()[r] + c.reqs[r].query_len;
      for (int64_t b = 0; b * c.block_size < seq; ++b) block_table.i()[r * max_blocks + b] = ids[next_id++];
      k.emplace_back(seq * row), v.emplace_back(seq * row);
      for (int64_t t = 0; t < seq; ++t, ++out_row) {
        for (int64_t e = 0; e < row; ++e) {
          key_all.f()[out_row * row + e] = dist(rng), value_all.f()[out_row * row + e] = dist(rng);
          k[r][t * row + e] = round_to(c.kv_dtype, key_all.f()[out_row * row + e]);
          v[r][t * row + e] = round_to(c.kv_dtype, value_all.f()[out_row * row + e]);
        }
        slots.i()[out_row] = block_table.i()[r * max_blocks + t / c.block_size] * c.block_size + int32_t(t % c.block_size);
      }
      slots.i()[out_row] = -1;
      std::fill(key_all.f() + out_row * row, key_all.f() + (out_row + 1) * row, 1e30f);  // must be skipped
      ++out_row;
    }
    k_cache = HostTensor(c.kv_dtype, {num_blocks, c.block_size, c.num_kv_heads, c.head_dim});
    v_cache = HostTensor(k_cache.t);
    std::memset(k_cache.buf.data(), 0xff, k_cache.buf.size());  // NaN garbage in unwritten slots
    std::memset(v_cache.buf.data(), 0xff, v_cache.buf.size());
    q = HostTensor(DType::F32, {num_tokens, c.num_heads, c.head_dim});
    for (int64_t i = 0; i < q.n(); ++i) q.f()[i] = c.q_range * dist(rng);
    sinks = HostTensor(DType::F32, {c.num_heads});
    for (int64_t h = 0; h < c.num_heads; ++h) sinks.f()[h] = 3.0f * dist(rng);
  }

  AttentionParams params(const HostTensor& out) const {
    AttentionParams p;
    p.q = q.t, p.k_cache = k_cache.t, p.v_cache = v_cache.t, p.query_start_loc = qsl.t;
    p.seq_lens = seq_lens.t, p.block_table = block_table.t, p.out = out.t;
    if (c.sinks) p.sinks = sinks.t;
    p.scale = 1.0f / std::sqrt(float(c.head_dim));
    p.sliding_window = c.sliding_window, p.logit_softcap = c.softcap;
    p.kv_format = *kv_format_of_dtype(c.kv_dtype);
    p.causal = c.causal;
    return p;
  }

  // Dense masked attention over the logical K/V, float64.
  std::vector<float> naive() const {
    const int64_t nh = c.num_heads, hd = c.head_dim, nkv = c.num_kv_heads, group = nh / nkv;
    const double scale = double(1.0f / std::sqrt(float(hd)));  // the float p.scale, widened
    std::vector<float> out(size_t(num_tokens * nh * hd));
    for (size_t r = 0; r < c.reqs.size(); ++r) {
      const int64_t ql = c.reqs[r].query_len, seq = c.reqs[r].ctx + ql;
      for (int64_t i = 0; i < ql; ++i) {
        const int64_t token = qsl.i()[r] + i, pos = seq - ql + i;
        for (int64_t h = 0; h < nh; ++h) {
          const float* qv = q.f() + (token * nh + h) * hd;
          std::vector<double> s(size_t(seq), -INFINITY);
          double mx = c.sinks ? double(sinks.f()[h]) : -INFINITY;
          for (int64_t j = 0; j < seq; ++j) {
            const bool visible = (j <= pos || !c.causal) && (c.sliding_window == 0 || pos - j < c.sliding_window);
            if (!visible) continue;
            double d = 0;
            for (int64_t e = 0; e < hd; ++e) d += double(qv[e]) * k[r][(j * nkv + h / group) * hd + e];
            d *= scale;
            if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
            s[j] = d, mx = std::max(mx, d);
          }
          double denom = c.sinks ? std::exp(double(sinks.f()[h]) - mx) : 0.0;
          std::vector<double> acc(size_t(hd), 0.0);
          for (int64_t j = 0; j < seq; ++j) {
            if (s[j] == -INFINITY) continue;
            const double w = std::exp(s[j] - mx);
            denom += w;
            for (int64_t e = 0; e < hd; ++e) acc[e] += w * v[r][(j * nkv + h / group) * hd + e];
          }
          for (int64_t e = 0; e < hd; ++e) out[(token * nh + h) * hd + e] = float(acc[e] / denom);
        }
      }
    }
    return out;
  }
};

std::vector<Case> cases() {
  return {
      {"decode_gqa", {{0, 1}, {1, 1}, {15, 1}, {16, 1}, {100, 1}}, 8, 2, 128, 16},
      {"prefill_chunked_mha", {{0, 37}, {50, 20}, {3, 1}, {0, 1}}, 4, 4, 64, 16},
      {"empty_request", {{5, 0}, {0, 9}, {7, 0}}, 4, 2, 64, 8},
      {"window_f16_odd_block", {{0, 40}, {30, 1}, {61, 12}}, 6, 2, 80, 5, DType::F16, 8},
      {"window_wide", {{10, 30}, {90, 1}}, 4, 1, 96, 16, DType::F32, 32},
      {"softcap_bf16_hd256", {{0, 19}, {33, 1}, {12, 6}}, 8, 4, 256, 16, DType::BF16, 0, 30.0f},
      {"sinks_mqa_window", {{0, 25}, {40, 1}, {20, 3}}, 8, 1, 64, 16, DType::F32, 16, 0, true},
      {"sinks_only", {{7, 4}, {0, 2}}, 4, 2, 128, 32, DType::F16, 0, 0, true},
      {"all_features_hd96", {{0, 70}, {64, 2}, {129, 1}}, 8, 2, 96, 16, DType::BF16, 24, 20.0f, true},
      {"long_prefill_tiles", {{0, 100}, {3, 65}}, 2, 2, 64, 16},
      {"peaked_scores", {{0, 50}, {77, 1}, {20, 9}}, 4, 2, 128, 8, DType::F32, 0, 0, false, 40.0f},
      {"peaked_sinks_softcap", {{0, 30}, {45, 2}}, 4, 1, 64, 16, DType::F16, 0, 15.0f, true, 60.0f},
      {"block_size_1_hd40", {{0, 6}, {9, 1}, {4, 3}}, 6, 3, 40, 1},
      {"hd36_vector_tails_f16", {{0, 11}, {14, 1}}, 4, 2, 36, 4, DType::F16},
      {"hd20_vector_tails_bf16", {{3, 5}}, 2, 1, 20, 16, DType::BF16, 0, 0, true},
      {"long_decode_mqa_split_k", {{2000, 1}}, 8, 1, 64, 16, DType::F16},
      {"long_chunk_window_sinks_split_k", {{3000, 3}}, 4, 1, 128, 32, DType::BF16, 1100, 0, true},
      {"hd72_gqa3_window", {{0, 33}, {50, 1}}, 12, 4, 72, 16, DType::BF16, 7},
      // Bidirectional (encoders: one request per sequence, query_len = seq_len); past 256 keys the
      // segment folds; a lone query sees keys after it too.
      {"noncausal_mha_hd32", {{0, 128}, {0, 1}, {0, 37}, {0, 300}}, 12, 12, 32, 16, DType::F32, 0, 0, false, 2.0f,
       false},
      {"noncausal_gqa_f16_softcap_sinks", {{0, 70}, {0, 5}, {4, 9}}, 8, 2, 64, 16, DType::F16, 0, 20.0f, true, 2.0f,
       false},
      {"noncausal_long_split_k", {{0, 700}}, 2, 1, 128, 32, DType::BF16, 0, 0, false, 2.0f, false},
  };
}

TEST(AttentionReference, MatchesNaiveDense) {
  for (const Case& c : cases()) {
    Batch b(c);
    backend::reference::reshape_and_cache(b.key_all.t, b.value_all.t, b.k_cache.t, b.v_cache.t, b.slots.t, *kv_format_of_dtype(c.kv_dtype));
    HostTensor out(b.q.t);
    backend::reference::paged_attention(b.params(out));
    const std::vector<float> want = b.naive();
    expect_close(out.f(), want.data(), out.n(), tolerance(DType::F32), "reference " + c.name);
  }
}

class AttentionTest : public IsaTest {};

TEST_P(AttentionTest, CpuMatchesNaiveAndReference) {
  for (const Case& c : cases()) {
    Batch b(c);
    ops::reshape_and_cache(b.key_all.t, b.value_all.t, b.k_cache.t, b.v_cache.t, b.slots.t, *kv_format_of_dtype(c.kv_dtype));
    // The reference writes the same bytes.
    HostTensor k2(b.k_cache.t), v2(b.v_cache.t);
    std::memset(k2.buf.data(), 0xff, k2.buf.size()), std::memset(v2.buf.data(), 0xff, v2.buf.size());
    backend::reference::reshape_and_cache(b.key_all.t, b.value_all.t, k2.t, v2.t, b.slots.t, *kv_format_of_dtype(c.kv_dtype));
    EXPECT_EQ(std::memcmp(k2.buf.data(), b.k_cache.buf.data(), k2.buf.size()), 0) << c.name;
    EXPECT_EQ(std::memcmp(v2.buf.data(), b.v_cache.buf.data(), v2.buf.size()), 0) << c.name;

    HostTensor want(b.q.t), got(b.q.t);
    backend::reference::paged_attention(b.params(want));
    const std::vector<float> dense = b.naive();
    // Prefill tiles read keys prepared once per call, or (limit 0) each prepares its own.
    for (const int64_t limit : {int64_t(64) << 20, int64_t(0)}) {
      const int64_t before = backend::cpu::set_prefill_shared_keys_limit(limit);
      ops::paged_attention(b.params(got));
      backend::cpu::set_prefill_shared_keys_limit(before);
      const std::string name = c.name + (limit ? "" : " (keys per tile)");
      expect_close(got.f(), want.f(), got.n(), tolerance(DType::F32), "cpu vs reference " + name);
      expect_close(got.f(), dense.data(), got.n(), tolerance(DType::F32), "cpu vs naive " + name);
    }
  }
}

// The work split depends on the pool size (heads per tile shrink until every thread has an
// item, then long key ranges are split across threads and merged); results must not.
TEST(AttentionThreads, SameResultForEveryPoolSize) {
  for (int threads : {1, 3, 5}) {
    ThreadPool::set_global_threads(threads);
    for (const Case& c : cases()) {
      Batch b(c);
      ops::reshape_and_cache(b.key_all.t, b.value_all.t, b.k_cache.t, b.v_cache.t, b.slots.t, *kv_format_of_dtype(c.kv_dtype));
      HostTensor want(b.q.t), got(b.q.t);
      backend::reference::paged_attention(b.params(want));
      ops::paged_attention(b.params(got));
      expect_close(got.f(), want.f(), got.n(), tolerance(DType::F32), c.name + " threads " + std::to_string(threads));
    }
  }
  ThreadPool::set_global_threads(int(std::thread::hardware_concurrency()));
}

INSTANTIATE_TEST_SUITE_P(Cpu, AttentionTest, testing::ValuesIn(isas_to_test()), isa_param_name);

}  // namespace
}  // namespace oxyd::test
