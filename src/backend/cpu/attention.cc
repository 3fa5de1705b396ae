// CPU paged attention dispatcher (see attention.h), the scalar copy of attention_prefill_impl.h, and
// reshape_and_cache. Work items (request, kv head, query tile) are numbered request-major and
// claimed one at a time from an atomic counter, so a long prefill next to many decodes still
// spreads over every thread. How the work is cut never changes a result: every query row takes the
// same kernel and folds its keys segment by segment in one order (batch invariance).
#define OXYD_ISA_SCALAR
#include "backend/cpu/attention_prefill_impl.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/attention_prefill.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/scratch_slots.h"
#include "core/half.h"
#include "core/kv_quant.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL                                                                                  \
  void attention_merge_partials(const AttentionParams&, const float*, int64_t, int64_t, int64_t, float*); \
  void attention_prefill_tile(const AttentionParams&, const PrefillKeys&, int64_t, int64_t, int64_t, int64_t,  \
                              int64_t, int64_t, int64_t, float*);                                  \
  int64_t prefill_unit_floats(const AttentionParams&);                                             \
  void prefill_prepare_chunk(const AttentionParams&, int64_t, int64_t, int64_t, int64_t, int64_t, float*)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

namespace {
// Query rows per tile (queries × kv heads × GQA group): acc is tile_rows(head_dim) × head_dim
// floats, up to 32 KiB. Prefill tiles take one KV head and several queries, each reading the
// whole key range once, so more queries per tile read it fewer times: 64 rows instead of 32 at
// head_dim 128 made a 1024-token prefill of a Qwen3-0.6B-shaped model 7-10% faster (before the
// prefill kernel of attention_prefill_impl.h; 128 rows measured no better with it). Decode tiles
// take several KV heads, so a block's tokens are read as long contiguous runs.
int64_t tile_rows(int64_t head_dim) { return std::clamp<int64_t>(8192 / std::max<int64_t>(1, head_dim), 32, 64); }
// Prefill tiles (attention_prefill_impl.h) keep 64 rows up to head_dim 256: at 256, 64 rows instead
// of 32 made a Gemma-3-270M-shaped 2048-token prefill layer 11-18% faster on one thread.
int64_t prefill_tile_rows(int64_t head_dim) {
  return std::clamp<int64_t>(16384 / std::max<int64_t>(1, head_dim), 32, 64);
}
// The most bytes of keys prepared once per call for prefill tiles (set_prefill_shared_keys_limit).
std::atomic<int64_t> g_max_prepared_bytes{int64_t(64) << 20};

struct ReqSplit {
  int64_t tile_tokens, heads_per_item, head_ranges, items_before;
};

void paged_attention_plain(const AttentionParams& p);
}  // namespace

int64_t set_prefill_shared_keys_limit(int64_t bytes) { return g_max_prepared_bytes.exchange(bytes); }

// Quantized caches: rotate q into the codes' space, attend there, rotate the output back. The whole
// call holds the pool's turn: its plan and buffers are thread 0's scratch (scratch_slots.h).
void paged_attention(const AttentionParams& p) {
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
  if (!kv_format_quantized(p.kv_format)) return paged_attention_plain(p);
  const KvQuantizer& kq = kv_quantizer(p.head_dim(), kv_format_bits(p.kv_format));
  const int64_t rows = p.num_tokens() * p.num_heads(), hd = p.head_dim();
  float* qr = pool.scratch(0).get_as<float>(kAttnQueryRotSlot, size_t(rows * hd));
  const float* q = p.q.ptr<float>();
  parallel_for(rows, row_grain(hd), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) kq.rotate(q + i * hd, qr + i * hd);
  });
  AttentionParams rp = p;
  rp.q = Tensor(DType::F32, qr, {p.num_tokens(), p.num_heads(), hd});
  paged_attention_plain(rp);  // prefill tiles decode each key once per call (prepare_prefill_keys)
  float* out = p.out.ptr<float>();
  parallel_for(rows, row_grain(hd), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) kq.unrotate(out + i * hd, out + i * hd);
  });
}

namespace {
// Several-query tiles of a request each meet its keys chunk by chunk, transposed (and converted from
// F16 / BF16, values copied into contiguous rows); done here once for every tile of the call when
// it fits g_max_prepared_bytes, instead of once per tile. buf holds them until the call ends. Returns
// one PrefillKeys per request (data == nullptr: its tiles prepare their own).
const PrefillKeys* prepare_prefill_keys(const AttentionParams& p, std::vector<float>& buf) {
  const int64_t num_reqs = p.num_reqs(), nkv = p.num_kv_heads(), W = p.sliding_window;
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int32_t* seq_lens = p.seq_lens.ptr<int32_t>();
  auto first_key = [&](int64_t r) {  // the oldest key the request's first query sees
    return W > 0 ? std::max<int64_t>(0, seq_lens[r] - (qsl[r + 1] - qsl[r]) - W + 1) : int64_t(0);
  };
  ThreadScratch& caller = ThreadPool::global().scratch(0);  // the turn is paged_attention's
  PrefillKeys* keys = caller.get_as<PrefillKeys>(kAttnPrepKeysSlot, size_t(num_reqs));
  int64_t* first_unit = caller.get_as<int64_t>(kAttnFirstUnitSlot, size_t(num_reqs + 1));  // and the total
  std::fill_n(keys, num_reqs, PrefillKeys{});
  std::fill_n(first_unit, num_reqs + 1, 0);
  const int64_t unit_floats =
      pick(simd_scalar::prefill_unit_floats, simd_avx2::prefill_unit_floats, simd_avx512::prefill_unit_floats)(p);
  for (int64_t r = 0; r < num_reqs; ++r) {
    PrefillKeys& k = keys[size_t(r)];
    if (qsl[r + 1] - qsl[r] > 1) {
      k.first_chunk = first_key(r) / kPrefillChunk;
      k.chunks = (seq_lens[r] + kPrefillChunk - 1) / kPrefillChunk - k.first_chunk;
      k.unit_floats = unit_floats;
    }
    first_unit[size_t(r + 1)] = first_unit[size_t(r)] + k.chunks * nkv;
  }
  const int64_t units = first_unit[size_t(num_reqs)];
  const int64_t bytes = units * unit_floats * int64_t(sizeof(float));
  if (units == 0 || bytes > g_max_prepared_bytes.load(std::memory_order_relaxed)) {
    std::fill_n(keys, num_reqs, PrefillKeys{});
    return keys;
  }
  buf.resize(size_t(units * unit_floats));
  for (int64_t r = 0; r < num_reqs; ++r)
    if (keys[size_t(r)].chunks) keys[size_t(r)].data = buf.data() + first_unit[size_t(r)] * unit_floats;
  const auto prepare = pick(simd_scalar::prefill_prepare_chunk, simd_avx2::prefill_prepare_chunk,
                            simd_avx512::prefill_prepare_chunk);
  const int64_t* fu = first_unit;
  const PrefillKeys* kd = keys;
  float* out = buf.data();
  parallel_for(units, 1, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t r = std::upper_bound(fu, fu + num_reqs + 1, u) - fu - 1;
      const PrefillKeys& k = kd[r];
      const int64_t local = u - fu[r], g = local / k.chunks, c0 = (k.first_chunk + local % k.chunks) * kPrefillChunk;
      prepare(p, r, g, c0, std::max(first_key(r), c0) - c0, std::min<int64_t>(seq_lens[r], c0 + kPrefillChunk) - c0,
              out + u * unit_floats);
    }
  });
  return keys;
}

void paged_attention_plain(const AttentionParams& p) {
  const auto merge = pick(simd_scalar::attention_merge_partials, simd_avx2::attention_merge_partials,
                          simd_avx512::attention_merge_partials);
  const auto prefill_kernel = pick(simd_scalar::attention_prefill_tile, simd_avx2::attention_prefill_tile,
                                   simd_avx512::attention_prefill_tile);
  std::vector<float> prepared_buf;
  const PrefillKeys* prepared = prepare_prefill_keys(p, prepared_buf);
  const int64_t num_reqs = p.num_reqs(), num_kv_heads = p.num_kv_heads();
  const int64_t group = p.num_heads() / num_kv_heads;
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int num_threads = ThreadPool::global().num_threads();
  // Thread 0's scratch (the turn is paged_attention's); the workers read it through `split`.
  ThreadScratch& caller = ThreadPool::global().scratch(0);
  ReqSplit* splits = caller.get_as<ReqSplit>(kAttnPlanSlot, size_t(num_reqs + 1));
  std::fill_n(splits, num_reqs + 1, ReqSplit{});
  // Heads per item: as many as fit trows, capped so that there are at least as many items
  // as threads when the batch is small (a single decode request).
  const int64_t trows = tile_rows(p.head_dim()), prows = prefill_tile_rows(p.head_dim());
  for (int64_t cap = num_kv_heads;; cap = (cap + 1) / 2) {
    int64_t items = 0;
    for (int64_t r = 0; r < num_reqs; ++r) {
      ReqSplit& sp = splits[r];
      const int64_t query_len = qsl[r + 1] - qsl[r];
      const int64_t rows = query_len > 1 ? prows : trows;
      sp.tile_tokens = std::max<int64_t>(1, std::min(query_len, rows / group));
      sp.heads_per_item = std::clamp<int64_t>(rows / (sp.tile_tokens * group), 1, cap);
      sp.head_ranges = (num_kv_heads + sp.heads_per_item - 1) / sp.heads_per_item;
      sp.items_before = items;
      items += (query_len + sp.tile_tokens - 1) / sp.tile_tokens * sp.head_ranges;
    }
    splits[num_reqs].items_before = items;
    if (cap == 1 || items >= num_threads) break;
  }
  const ReqSplit* split = splits;
  const int64_t num_items = split[num_reqs].items_before;
  const int64_t hd = p.head_dim();
  const int32_t* seq_lens = p.seq_lens.ptr<int32_t>();

  // Split-K (flash-decoding) when there are fewer items than threads, e.g. one long decode
  // request of a model with one KV head: unit s of an item takes segment s of its visible keys
  // (kAttentionSegment keys at absolute positions, attention_prefill.h), and the segments' states
  // are merged below in the order the tile itself folds them, so the result equals the unsplit one.
  constexpr int64_t S = kAttentionSegment;
  auto key_range = [&](int64_t r, int64_t i0, int64_t i1) {  // keys [lo, hi) the queries i0..i1 see
    const int64_t ctx = seq_lens[r] - (qsl[r + 1] - qsl[r]);
    const int64_t lo = p.sliding_window > 0 ? std::max<int64_t>(0, ctx + i0 - p.sliding_window + 1) : 0;
    return std::pair<int64_t, int64_t>{lo, p.causal ? ctx + i1 : int64_t(seq_lens[r])};
  };
  int64_t kv_splits = 1, max_rows = 0;
  if (num_items < num_threads) {
    for (int64_t r = 0; r < num_reqs; ++r) {
      const int64_t ql = qsl[r + 1] - qsl[r];
      if (ql == 0) continue;
      max_rows = std::max(max_rows, split[r].tile_tokens * split[r].heads_per_item * group);
      for (int64_t i0 = 0; i0 < ql; i0 += split[r].tile_tokens) {
        const auto [lo, hi] = key_range(r, i0, std::min(ql, i0 + split[r].tile_tokens));
        kv_splits = std::max(kv_splits, (hi - 1) / S - lo / S + 1);
      }
    }
  }
  const int64_t unit_floats = max_rows * (hd + 2);
  float* part =
      kv_splits > 1 ? caller.get_as<float>(kAttnPartialsSlot, size_t(num_items * kv_splits * unit_floats)) : nullptr;

  struct Item { int64_t r, g0, g1, i0, i1; };
  auto item_of = [&](int64_t item) {
    const int64_t r = std::upper_bound(split, split + num_reqs + 1, item,
                                       [](int64_t v, const ReqSplit& sp) { return v < sp.items_before; }) - split - 1;
    const ReqSplit& sp = split[r];
    const int64_t local = item - sp.items_before;
    const int64_t hr = local % sp.head_ranges, tile = local / sp.head_ranges;
    const int64_t g0 = hr * sp.heads_per_item, i0 = tile * sp.tile_tokens;
    return Item{r, g0, std::min(num_kv_heads, g0 + sp.heads_per_item), i0,
                std::min<int64_t>(qsl[r + 1] - qsl[r], i0 + sp.tile_tokens)};
  };
  const int64_t num_units = num_items * kv_splits;
  std::atomic<int64_t> next{0};
  auto work = [&](int, int) {
    for (int64_t unit; (unit = next.fetch_add(1, std::memory_order_relaxed)) < num_units;) {
      const Item it = item_of(unit / kv_splits);
      auto tile = [&](int64_t k_begin, int64_t k_end, float* partial) {
        prefill_kernel(p, prepared[it.r], it.r, it.g0, it.g1, it.i0, it.i1, k_begin, k_end, partial);
      };
      if (kv_splits == 1) {
        tile(0, INT64_MAX, nullptr);
        continue;
      }
      // segment s of the keys this item can see (past its last one: an empty state)
      const int64_t seg = key_range(it.r, it.i0, it.i1).first / S + unit % kv_splits;
      tile(seg * S, (seg + 1) * S, part + unit * unit_floats);
    }
  };
  if (num_units <= 1) work(0, 1);
  else ThreadPool::global().run(work);
  if (kv_splits == 1) return;

  // Merge each row's segment states in key order (attention_merge_partials).
  for (int64_t item = 0; item < num_items; ++item) {
    const Item it = item_of(item);
    const int64_t G = it.g1 - it.g0, rows = (it.i1 - it.i0) * G * group;
    for (int64_t m = 0; m < rows; ++m) {
      const int64_t ti = m / (G * group), h = (it.g0 + (m / group) % G) * group + m % group;
      merge(p, part + (item * kv_splits * max_rows + m) * (hd + 2), kv_splits, max_rows * (hd + 2), h,
            p.out.ptr<float>() + ((qsl[it.r] + it.i0 + ti) * p.num_heads() + h) * hd);
    }
  }
}
}  // namespace

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format) {
  const int kv_quant_bits = kv_format_bits(kv_format);
  const int64_t row = key.dim(1) * key.dim(2);  // num_kv_heads · head_dim elements per token
  const int32_t* slots = slot_mapping.ptr<int32_t>();
  if (kv_quant_bits > 0) {
    const int64_t hd = key.dim(2), nkv = key.dim(1);
    const KvQuantizer& kq = kv_quantizer(hd, kv_quant_bits);
    const int64_t rb = kq.row_bytes();  // bytes per head vector; a token is nkv of them
    parallel_for(key.dim(0) * nkv, row_grain(hd), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t t = i / nkv, g = i % nkv;
        if (slots[t] < 0) continue;
        const int64_t dst = (int64_t(slots[t]) * nkv + g) * rb;
        kq.quantize(key.ptr<float>() + i * hd, static_cast<uint8_t*>(k_cache.data) + dst);
        kq.quantize(value.ptr<float>() + i * hd, static_cast<uint8_t*>(v_cache.data) + dst);
      }
    });
    return;
  }
  const DType dtype = k_cache.dtype;
  auto copy = [dtype, row](const float* src, void* cache, int64_t slot) {
    if (dtype == DType::F32) {
      std::copy(src, src + row, static_cast<float*>(cache) + slot * row);
      return;
    }
    uint16_t* dst = static_cast<uint16_t*>(cache) + slot * row;
    if (dtype == DType::F16) for (int64_t i = 0; i < row; ++i) dst[i] = f32_to_f16(src[i]);
    else for (int64_t i = 0; i < row; ++i) dst[i] = f32_to_bf16(src[i]);
  };
  parallel_for(key.dim(0), row_grain(row), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      if (slots[t] < 0) continue;
      copy(key.ptr<float>() + t * row, k_cache.data, slots[t]);
      copy(value.ptr<float>() + t * row, v_cache.data, slots[t]);
    }
  });
}

}  // namespace oxyd::backend::cpu
