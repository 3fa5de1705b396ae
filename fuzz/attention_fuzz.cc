// Differential fuzzer for the paged-attention front end: bytes → batch metadata (query offsets,
// sequence lengths, block tables, slot mappings, window, soft-cap, sinks, cache dtype) that is
// often invalid. ops::reshape_and_cache / ops::paged_attention must either throw oxyd::Error or
// run cleanly under ASan, and when they run, the CPU output must match backend::reference.
// Run: build-fuzz/bin/attention_fuzz -max_total_time=120
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/reference/attention.h"
#include "core/error.h"
#include "ops/attention.h"

namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t u8() { return n ? (--n, *p++) : 0; }
  int8_t i8() { return int8_t(u8()); }
  int16_t i16() { return int16_t(uint16_t(u8()) | uint16_t(u8()) << 8); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxyd;
  Reader in{data, size};
  const int64_t num_reqs = in.u8() % 4, num_kv_heads = 1 + in.u8() % 2, group = 1 + in.u8() % 3;
  const int64_t num_heads = num_kv_heads * group + (in.u8() % 8 == 0 ? 1 : 0);  // sometimes not a multiple
  const int64_t head_dim = 1 + in.u8() % 20, block_size = 1 + in.u8() % 8;
  const int64_t num_blocks = 1 + in.u8() % 12, max_blocks = 1 + in.u8() % 6;
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16};
  const DType kv_dtype = dtypes[in.u8() % 3];

  std::vector<int32_t> qsl(size_t(num_reqs + 1)), seq_lens(size_t(std::max<int64_t>(num_reqs, 1)));
  qsl[0] = in.u8() % 16 == 0 ? in.i8() : 0;
  for (int64_t r = 0; r < num_reqs; ++r) {
    qsl[r + 1] = qsl[r] + (in.u8() % 8 == 0 ? in.i8() : in.u8() % 5);
    seq_lens[r] = in.u8() % 8 == 0 ? in.i16() : in.u8() % 40;
  }
  const int64_t num_tokens = std::clamp<int64_t>(in.u8() % 8 == 0 ? in.u8() % 24 : qsl[num_reqs], 0, 64);
  std::vector<int32_t> table(size_t(std::max<int64_t>(num_reqs, 1) * max_blocks));
  for (auto& b : table) b = in.u8() % 6 == 0 ? in.i8() : in.u8() % num_blocks;
  std::vector<int32_t> slots(static_cast<size_t>(num_tokens));
  for (auto& s : slots) s = in.u8() % 6 == 0 ? in.i16() : int32_t(in.u8() % (num_blocks * block_size));

  ops::AttentionParams p;
  p.sliding_window = in.u8() % 3 == 0 ? in.u8() % 12 : 0;
  p.logit_softcap = in.u8() % 3 == 0 ? float(1 + in.u8() % 30) : 0.0f;
  p.scale = float(in.u8()) / 256.0f;  // scores stay ≲ 300, so float32 rounding stays ≪ the tolerance
  const bool sinks = in.u8() % 2;

  const size_t elem = kv_dtype == DType::F32 ? 4 : 2;
  const int64_t cache_elems = num_blocks * block_size * num_kv_heads * head_dim;
  std::vector<uint8_t> k_cache(size_t(cache_elems) * elem, 0), v_cache(size_t(cache_elems) * elem, 0);
  std::vector<float> q(size_t(std::max<int64_t>(num_tokens * num_heads * head_dim, 1)));
  std::vector<float> kv_new(size_t(std::max<int64_t>(num_tokens * num_kv_heads * head_dim, 1)));
  for (auto& v : q) v = float(in.i8()) / 32.0f;
  for (auto& v : kv_new) v = float(in.i8()) / 32.0f;
  std::vector<float> sink_vals(static_cast<size_t>(num_heads));
  for (auto& v : sink_vals) v = float(in.i8()) / 16.0f;
  std::vector<float> out(q.size()), want(q.size());

  const Tensor kc(kv_dtype, k_cache.data(), {num_blocks, block_size, num_kv_heads, head_dim});
  const Tensor vc(kv_dtype, v_cache.data(), {num_blocks, block_size, num_kv_heads, head_dim});
  try {
    const Tensor key(DType::F32, kv_new.data(), {num_tokens, num_kv_heads, head_dim});
    ops::reshape_and_cache(key, key, kc, vc, Tensor(DType::I32, slots.data(), {num_tokens}), *kv_format_of_dtype(kv_dtype));
  } catch (const Error&) {
  }
  p.q = Tensor(DType::F32, q.data(), {num_tokens, num_heads, head_dim});
  p.out = Tensor(DType::F32, out.data(), {num_tokens, num_heads, head_dim});
  p.k_cache = kc, p.v_cache = vc, p.kv_format = *kv_format_of_dtype(kv_dtype);
  p.query_start_loc = Tensor(DType::I32, qsl.data(), {num_reqs + 1});
  p.seq_lens = Tensor(DType::I32, seq_lens.data(), {num_reqs});
  p.block_table = Tensor(DType::I32, table.data(), {num_reqs, max_blocks});
  if (sinks) p.sinks = Tensor(DType::F32, sink_vals.data(), {num_heads});
  try {
    ops::paged_attention(p);
  } catch (const Error&) {
    return 0;  // rejected: fine
  }
  ops::AttentionParams ref = p;
  ref.out = Tensor(DType::F32, want.data(), {num_tokens, num_heads, head_dim});
  backend::reference::paged_attention(ref);
  for (size_t i = 0; i < size_t(num_tokens * num_heads * head_dim); ++i)
    if (!(std::fabs(out[i] - want[i]) <= 2e-3f + 1e-3f * std::fabs(want[i]))) std::abort();
  return 0;
}
