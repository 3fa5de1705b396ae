// Paged attention / reshape_and_cache front ends (see attention.h).
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {
namespace {

std::string req_str(int64_t r) { return "request " + std::to_string(r); }

// Batch metadata contents: offsets, lengths and every block id attention will read.
void check_metadata(const AttentionParams& p) {
  constexpr const char* op = "paged_attention";
  const int64_t num_reqs = p.num_reqs(), bs = p.block_size(), max_blocks = p.max_blocks_per_req();
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int32_t* seq_lens = p.seq_lens.ptr<int32_t>();
  const int32_t* table = p.block_table.ptr<int32_t>();
  if (qsl[0] != 0) check::fail(op, "query_start_loc[0] must be 0, got " + std::to_string(qsl[0]));
  if (qsl[num_reqs] != p.num_tokens())
    check::fail(op, "query_start_loc[num_reqs] = " + std::to_string(qsl[num_reqs]) + " must equal num_tokens = " +
                        std::to_string(p.num_tokens()));
  for (int64_t r = 0; r < num_reqs; ++r) {
    const int64_t query_len = int64_t(qsl[r + 1]) - qsl[r], seq_len = seq_lens[r];
    if (query_len < 0) check::fail(op, "query_start_loc must be non-decreasing (" + req_str(r) + ")");
    if (query_len == 0) continue;
    if (seq_len < query_len)
      check::fail(op, req_str(r) + ": seq_lens = " + std::to_string(seq_len) + " is less than its query_len = " +
                          std::to_string(query_len) + " (the step's own tokens must be in the cache)");
    if (seq_len > max_blocks * bs)
      check::fail(op, req_str(r) + ": seq_lens = " + std::to_string(seq_len) + " exceeds max_blocks_per_req · block_size = " +
                          std::to_string(max_blocks * bs));
    // Keys read: from the oldest position the first query can see to the last token.
    const int64_t first_pos = seq_len - query_len;
    const int64_t k_lo = p.sliding_window > 0 ? std::max<int64_t>(0, first_pos - p.sliding_window + 1) : 0;
    for (int64_t b = k_lo / bs; b * bs < seq_len; ++b) {
      const int32_t id = table[r * max_blocks + b];
      if (id < 0 || id >= p.num_blocks())
        check::fail(op, req_str(r) + ": block_table[" + std::to_string(b) + "] = " + std::to_string(id) +
                            " is outside [0, num_blocks = " + std::to_string(p.num_blocks()) + ")");
    }
  }
}

}  // namespace

void paged_attention(const AttentionParams& p) {
  constexpr const char* op = "paged_attention";
  check::tensor(op, "q", p.q, DType::F32, 3);
  check::kv_cache(op, "k_cache", p.k_cache, p.head_dim(), p.kv_format);
  check::tensor(op, "v_cache", p.v_cache, p.k_cache.dtype, 4);
  check::same_shape(op, "k_cache", p.k_cache, "v_cache", p.v_cache);
  if (p.head_dim() == 0 || p.num_kv_heads() == 0 || p.block_size() == 0)
    check::fail(op, "head_dim, num_kv_heads and block_size must be > 0");
  if (p.num_heads() % p.num_kv_heads())
    check::fail(op, "num_heads = " + std::to_string(p.num_heads()) + " must be a multiple of num_kv_heads = " +
                        std::to_string(p.num_kv_heads()));
  check::tensor(op, "seq_lens", p.seq_lens, DType::I32, 1);
  check::tensor(op, "query_start_loc", p.query_start_loc, DType::I32, 1);
  check::dim(op, "query_start_loc", p.query_start_loc, 0, p.num_reqs() + 1, "num_reqs + 1");
  check::tensor(op, "block_table", p.block_table, DType::I32, 2);
  check::dim(op, "block_table", p.block_table, 0, p.num_reqs(), "num_reqs");
  if (p.has_sinks()) {
    check::tensor(op, "sinks", p.sinks, DType::F32, 1);
    check::dim(op, "sinks", p.sinks, 0, p.num_heads(), "num_heads");
  }
  check::tensor(op, "out", p.out, DType::F32, 3);
  check::same_shape(op, "q", p.q, "out", p.out);
  if (p.out.data == p.q.data && p.q.numel() > 0) check::fail(op, "out must not alias q");
  if (!std::isfinite(p.scale)) check::fail(op, "scale must be finite");
  if (p.sliding_window < 0) check::fail(op, "sliding_window must be ≥ 0 (0 = none)");
  if (!p.causal && p.sliding_window > 0) check::fail(op, "sliding_window needs causal attention");
  if (!(p.logit_softcap >= 0) || !std::isfinite(p.logit_softcap)) check::fail(op, "logit_softcap must be ≥ 0 (0 = none)");
  backend::Backend& b = backend_for(op, {&p.q, &p.k_cache, &p.v_cache, &p.query_start_loc, &p.seq_lens,
                                          &p.block_table, p.has_sinks() ? &p.sinks : nullptr, &p.out});
  if (p.q.device == Device::CPU) check_metadata(p);  // host memory: read it here
  b.paged_attention(p);
}

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format) {
  constexpr const char* op = "reshape_and_cache";
  check::tensor(op, "key", key, DType::F32, 3);
  check::tensor(op, "value", value, DType::F32, 3);
  check::same_shape(op, "key", key, "value", value);
  check::kv_cache(op, "k_cache", k_cache, key.dim(2), kv_format);
  check::tensor(op, "v_cache", v_cache, k_cache.dtype, 4);
  check::same_shape(op, "k_cache", k_cache, "v_cache", v_cache);
  check::dim(op, "k_cache", k_cache, 2, key.dim(1), "num_kv_heads of key");
  check::tensor(op, "slot_mapping", slot_mapping, DType::I32, 1);
  check::dim(op, "slot_mapping", slot_mapping, 0, key.dim(0), "num_tokens of key");
  backend::Backend& b = backend_for(op, {&key, &value, &k_cache, &v_cache, &slot_mapping});
  if (slot_mapping.device == Device::CPU) {  // host memory: read it here
    const int64_t num_slots = k_cache.dim(0) * k_cache.dim(1);
    const int32_t* slots = slot_mapping.ptr<int32_t>();
    for (int64_t t = 0; t < key.dim(0); ++t)
      if (slots[t] >= num_slots)
        check::fail(op, "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(slots[t]) +
                            " is outside the cache (num_blocks · block_size = " + std::to_string(num_slots) + ")");
  }
  b.reshape_and_cache(key, value, k_cache, v_cache, slot_mapping, kv_format);
}

}  // namespace oxyd::ops
