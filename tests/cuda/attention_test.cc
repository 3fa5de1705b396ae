// CUDA paged attention and KV-cache write against backend/reference (float64) on the same
// caches: random K/V rounded to the cache dtype (the reference reads them as F32 holding the
// rounded values), blocks scattered by a shuffled block table, decode and prefill queries mixed
// in one call, GQA groups, sliding window, softcap, sinks, head dims 64/80/128/256, and forced
// split counts so the split-K combine is exercised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "backend/cuda/attention.h"
#include "backend/reference/attention.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

struct Req {
  int32_t seq_len, query_len;
};

struct AttnCase {
  std::string name;
  std::vector<Req> reqs;
  int64_t heads, kv_heads, head_dim, block_size;
  int window;
  float softcap;
  bool sinks;
  int max_splits;  // 0: the kernel's choice
  bool causal = true;
};

class CudaAttention : public ::testing::TestWithParam<DType> {};

void run_case(const AttnCase& c, DType dt) {
  const std::string what = c.name + " " + dtype_label(dt);
  std::mt19937 rng(uint32_t(c.head_dim * 7 + c.heads));
  // Block table: each request's blocks drawn from a shuffled pool.
  int64_t max_blocks = 1, total_blocks = 0;
  for (const Req& r : c.reqs) {
    const int64_t nb = (r.seq_len + c.block_size - 1) / c.block_size;
    max_blocks = std::max(max_blocks, nb);
    total_blocks += nb;
  }
  const int64_t num_blocks = total_blocks + 3;
  std::vector<int32_t> pool(static_cast<size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  const int64_t nreq = int64_t(c.reqs.size());
  std::vector<int32_t> table(size_t(nreq * max_blocks), 0), qsl(1, 0), seq_lens;
  size_t next = 0;
  for (int64_t r = 0; r < nreq; ++r) {
    const int64_t nb = (c.reqs[r].seq_len + c.block_size - 1) / c.block_size;
    for (int64_t b = 0; b < nb; ++b) table[size_t(r * max_blocks + b)] = pool[next++];
    qsl.push_back(qsl.back() + c.reqs[r].query_len);
    seq_lens.push_back(c.reqs[r].seq_len);
  }
  const int64_t tokens = qsl.back();
  const int64_t cache_elems = num_blocks * c.block_size * c.kv_heads * c.head_dim;
  std::vector<float> kc = random_floats(size_t(cache_elems), 11u + uint32_t(c.head_dim));
  std::vector<float> vc = random_floats(size_t(cache_elems), 12u + uint32_t(c.head_dim));
  round_to(dt, kc);
  round_to(dt, vc);
  std::vector<float> q = random_floats(size_t(tokens * c.heads * c.head_dim), 13, -3, 3);
  std::vector<float> sinks = random_floats(size_t(c.heads), 14, -1, 2);
  std::vector<float> want(q.size());

  AttentionParams hp;
  hp.q = Tensor(DType::F32, q.data(), {tokens, c.heads, c.head_dim});
  hp.k_cache = Tensor(DType::F32, kc.data(), {num_blocks, c.block_size, c.kv_heads, c.head_dim});
  hp.v_cache = Tensor(DType::F32, vc.data(), {num_blocks, c.block_size, c.kv_heads, c.head_dim});
  hp.query_start_loc = Tensor(DType::I32, qsl.data(), {nreq + 1});
  hp.seq_lens = Tensor(DType::I32, seq_lens.data(), {nreq});
  hp.block_table = Tensor(DType::I32, table.data(), {nreq, max_blocks});
  if (c.sinks) hp.sinks = Tensor(DType::F32, sinks.data(), {c.heads});
  hp.out = Tensor(DType::F32, want.data(), {tokens, c.heads, c.head_dim});
  hp.scale = 1.0f / std::sqrt(float(c.head_dim));
  hp.sliding_window = c.window;
  hp.logit_softcap = c.softcap;
  hp.causal = c.causal;
  reference::paged_attention(hp);

  auto upload_i32 = [](const std::vector<int32_t>& v) {
    DeviceBuffer b(v.size() * 4);
    copy_to_device(b.data(), v.data(), v.size() * 4);
    return b;
  };
  DeviceBuffer dq = upload(DType::F32, q), dk = upload(dt, kc), dv = upload(dt, vc);
  DeviceBuffer dqsl = upload_i32(qsl), dsl = upload_i32(seq_lens), dbt = upload_i32(table);
  DeviceBuffer dsinks = upload(DType::F32, sinks), dout(q.size() * 4);
  AttentionParams dp = hp;
  dp.q = dq.view(DType::F32, {tokens, c.heads, c.head_dim});
  dp.k_cache = dk.view(dt, {num_blocks, c.block_size, c.kv_heads, c.head_dim});
  dp.v_cache = dv.view(dt, {num_blocks, c.block_size, c.kv_heads, c.head_dim});
  dp.query_start_loc = dqsl.view(DType::I32, {nreq + 1});
  dp.seq_lens = dsl.view(DType::I32, {nreq});
  dp.block_table = dbt.view(DType::I32, {nreq, max_blocks});
  dp.sinks = c.sinks ? dsinks.view(DType::F32, {c.heads}) : Tensor();
  dp.out = dout.view(DType::F32, {tokens, c.heads, c.head_dim});
  Workspace ws;
  Stream stream;
  paged_attention(dp, ws, stream, c.max_splits);
  stream.synchronize();
  expect_close(download(DType::F32, dout.data(), want.size()), want, {2e-5, 1e-4}, what);
}

TEST_P(CudaAttention, DecodeBatchGqa) {
  OXYD_REQUIRE_CUDA();
  run_case({"decode gqa", {{1, 1}, {17, 1}, {300, 1}, {1030, 1}}, 8, 2, 128, 16, 0, 0, false, 0},
           GetParam());
}

// The GQA kernel's head chunks: a group of 8 (gpt-oss), an odd group of 7 (one chunk of 8, one
// head masked), 16 (two chunks), 6 at head_dim 256 (chunks of 4: one full, one half), and MQA.
TEST_P(CudaAttention, GqaGroupsAndChunks) {
  OXYD_REQUIRE_CUDA();
  run_case({"group 8 window sinks", {{300, 1}, {129, 1}, {40, 3}}, 64, 8, 64, 16, 128, 0, true, 0}, GetParam());
  run_case({"group 7", {{257, 1}, {31, 2}}, 28, 4, 128, 16, 0, 0, false, 0}, GetParam());
  run_case({"group 16", {{600, 1}, {2, 1}}, 32, 2, 128, 32, 0, 0, false, 5}, GetParam());
  run_case({"group 6 d256 softcap", {{190, 1}, {64, 64}}, 12, 2, 256, 16, 0, 30.0f, false, 0}, GetParam());
  run_case({"mqa", {{1000, 1}, {77, 4}}, 8, 1, 128, 16, 0, 0, false, 0}, GetParam());
}

TEST_P(CudaAttention, MixedPrefillAndDecode) {
  OXYD_REQUIRE_CUDA();
  run_case({"mixed", {{40, 40}, {100, 1}, {70, 0}, {33, 5}}, 4, 4, 64, 16, 0, 0, false, 0}, GetParam());
}

TEST_P(CudaAttention, WindowSoftcapSinks) {
  OXYD_REQUIRE_CUDA();
  run_case({"window+softcap+sinks", {{90, 3}, {500, 1}, {20, 20}}, 4, 1, 256, 16, 32, 20.0f, true, 0},
           GetParam());
  run_case({"sinks only", {{700, 1}, {5, 2}}, 8, 8, 64, 32, 0, 0, true, 0}, GetParam());
}

TEST_P(CudaAttention, ForcedSplitsAndOddHeadDim) {
  OXYD_REQUIRE_CUDA();
  for (int splits : {1, 7, 64})
    run_case({"splits " + std::to_string(splits), {{2000, 1}, {3, 1}, {129, 2}}, 6, 2, 80, 16, 0, 0,
              splits == 7, splits},
             GetParam());
}

TEST_P(CudaAttention, Bidirectional) {  // encoders: one request per sequence, every key visible
  OXYD_REQUIRE_CUDA();
  run_case({"bidirectional", {{128, 128}, {1, 1}, {37, 37}, {300, 300}}, 12, 12, 32, 16, 0, 0, false, 0, false},
           GetParam());
  run_case({"bidirectional gqa sinks split", {{700, 700}, {9, 5}}, 8, 2, 64, 16, 0, 10.0f, true, 7, false},
           GetParam());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaAttention,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_label(info.param)); });

TEST(CudaAttentionCache, ReshapeAndCacheMatchesReference) {
  OXYD_REQUIRE_CUDA();
  const int64_t tokens = 9, nkv = 2, hd = 64, nb = 4, bs = 8;
  const std::vector<int32_t> slots = {3, 0, -1, 31, 8, 9, -5, 17, 30};
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    std::vector<float> key = random_floats(size_t(tokens * nkv * hd), 21, -4, 4);
    std::vector<float> value = random_floats(key.size(), 22, -4, 4);
    const size_t cache_elems = size_t(nb * bs * nkv * hd);
    std::vector<float> kc(cache_elems, 0.0f), vc(cache_elems, 0.0f);
    std::vector<int32_t> slots_host = slots;
    reference::reshape_and_cache(Tensor(DType::F32, key.data(), {tokens, nkv, hd}),
                                 Tensor(DType::F32, value.data(), {tokens, nkv, hd}),
                                 Tensor(DType::F32, kc.data(), {nb, bs, nkv, hd}),
                                 Tensor(DType::F32, vc.data(), {nb, bs, nkv, hd}),
                                 Tensor(DType::I32, slots_host.data(), {tokens}), KvFormat::F32);
    round_to(dt, kc);
    round_to(dt, vc);
    DeviceBuffer dkey = upload(DType::F32, key), dval = upload(DType::F32, value);
    DeviceBuffer dkc = upload(dt, std::vector<float>(cache_elems, 0.0f));
    DeviceBuffer dvc = upload(dt, std::vector<float>(cache_elems, 0.0f));
    DeviceBuffer dslots(slots.size() * 4);
    copy_to_device(dslots.data(), slots.data(), slots.size() * 4);
    Stream stream;
    reshape_and_cache(dkey.view(DType::F32, {tokens, nkv, hd}), dval.view(DType::F32, {tokens, nkv, hd}),
                      dkc.view(dt, {nb, bs, nkv, hd}), dvc.view(dt, {nb, bs, nkv, hd}),
                      dslots.view(DType::I32, {tokens}), stream);
    stream.synchronize();
    expect_close(download(dt, dkc.data(), cache_elems), kc, {0, 0}, std::string("k cache ") + dtype_label(dt));
    expect_close(download(dt, dvc.data(), cache_elems), vc, {0, 0}, std::string("v cache ") + dtype_label(dt));
  }
}

}  // namespace
}  // namespace oxyd::backend::cuda
