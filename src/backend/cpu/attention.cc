// CPU paged attention dispatcher (see attention.h), the scalar copy of attention_impl.h, and
// reshape_and_cache. Work items (request, kv head, query tile) are numbered request-major and
// claimed one at a time from an atomic counter, so a long prefill next to many decodes still
// spreads over every thread.
#define OXYD_ISA_SCALAR
#include "backend/cpu/attention_impl.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/dispatch.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL void attention_tile(const AttentionParams&, int64_t, int64_t, int64_t, int64_t)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

namespace {
// Query rows per tile (tile tokens × GQA group): acc is kTileRows × head_dim floats.
constexpr int64_t kTileRows = 32;
}  // namespace

void paged_attention(const AttentionParams& p) {
  const auto kernel = pick(simd_scalar::attention_tile, simd_avx2::attention_tile, simd_avx512::attention_tile);
  const int64_t num_reqs = p.num_reqs(), num_kv_heads = p.num_kv_heads();
  const int64_t group = p.num_heads() / num_kv_heads;
  const int64_t tile_tokens = std::max<int64_t>(1, kTileRows / group);
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  // items_before[r] = work items of requests < r; request r has tiles(r) · num_kv_heads items.
  // Reused storage of the calling thread; workers read it through `before`.
  thread_local std::vector<int64_t> items_before;
  items_before.assign(size_t(num_reqs + 1), 0);
  for (int64_t r = 0; r < num_reqs; ++r) {
    const int64_t tiles = (qsl[r + 1] - qsl[r] + tile_tokens - 1) / tile_tokens;
    items_before[r + 1] = items_before[r] + tiles * num_kv_heads;
  }
  const int64_t* before = items_before.data();
  const int64_t num_items = before[num_reqs];
  std::atomic<int64_t> next{0};
  auto work = [&](int, int) {
    for (int64_t item; (item = next.fetch_add(1, std::memory_order_relaxed)) < num_items;) {
      const int64_t r = std::upper_bound(before, before + num_reqs + 1, item) - before - 1;
      const int64_t local = item - before[r];
      const int64_t g = local % num_kv_heads, tile = local / num_kv_heads;
      const int64_t query_len = qsl[r + 1] - qsl[r];
      const int64_t i0 = tile * tile_tokens, i1 = std::min(query_len, i0 + tile_tokens);
      kernel(p, r, g, i0, i1);
    }
  };
  if (num_items <= 1) work(0, 1);
  else ThreadPool::global().run(work);
}

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping) {
  const int64_t row = key.dim(1) * key.dim(2);  // num_kv_heads · head_dim elements per token
  const int32_t* slots = slot_mapping.ptr<int32_t>();
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
