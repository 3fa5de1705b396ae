// CPU RoPE dispatcher (see rope.h) and the scalar copy of rope_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/rope_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/dispatch.h"
#include "backend/cpu/rope.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL \
  void rope_token(const float*, float*, int64_t, int64_t, int64_t, const float*, const float*, bool)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

namespace {

// The cos/sin tables of one rope configuration over one batch of positions, [token][2·half]
// (NEOX uses the first half of each row). Every layer of a forward rotates q and k of the same
// positions with one or two configurations (Gemma 3: local and global bases), so the last few
// tables are kept (one cache for the process, used under the pool's turn) and rebuilt only when the
// positions or the configuration change; building them per call cost ~5% of a 16-row decode step
// (double-precision sincos).
struct RopeTables {
  std::vector<float> freq, ff;
  float attention_factor = 0.0f;
  bool neox = false;
  std::vector<int32_t> pos;
  std::vector<float> cs, sn;
  uint64_t last_use = 0;

  bool matches(const float* f, int64_t half, const float* ffp, float af, bool nx, const int32_t* p, int64_t n) const {
    const bool same_ff = ffp ? int64_t(ff.size()) == half && std::equal(ff.begin(), ff.end(), ffp) : ff.empty();
    return nx == neox && af == attention_factor && same_ff && int64_t(freq.size()) == half &&
           std::equal(freq.begin(), freq.end(), f) && int64_t(pos.size()) == n && std::equal(pos.begin(), pos.end(), p);
  }
};

// The caller holds the global pool's turn while it uses the returned tables.
const RopeTables& rope_tables(const int32_t* pos, int64_t n, const float* freq, int64_t half, const float* ff,
                              float attention_factor, bool neox) {
  static RopeTables cache[4];
  static uint64_t clock = 0;
  RopeTables* victim = &cache[0];
  for (RopeTables& t : cache) {
    if (t.matches(freq, half, ff, attention_factor, neox, pos, n)) {
      t.last_use = ++clock;
      return t;
    }
    if (t.last_use < victim->last_use) victim = &t;
  }
  RopeTables& t = *victim;
  t.freq.assign(freq, freq + half);
  if (ff) t.ff.assign(ff, ff + half);
  else t.ff.clear();
  t.attention_factor = attention_factor;
  t.neox = neox;
  t.pos.assign(pos, pos + n);
  t.cs.resize(size_t(n * 2 * half));
  t.sn.resize(size_t(n * 2 * half));
  t.last_use = ++clock;
  parallel_for(n, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, half)), [&](int64_t begin, int64_t end) {
    for (int64_t tok = begin; tok < end; ++tok) {
      float* cs = t.cs.data() + tok * 2 * half;
      float* sn = t.sn.data() + tok * 2 * half;
      for (int64_t i = 0; i < half; ++i) {
        double theta = double(pos[tok]) * double(freq[i]);
        if (ff) theta /= double(ff[i]);
        double sin_t, cos_t;
        sincos(theta, &sin_t, &cos_t);  // glibc: one range reduction for both
        const float c = float(cos_t * attention_factor);
        const float s = float(sin_t * attention_factor);
        if (neox) {
          cs[i] = c, sn[i] = s;
        } else {
          cs[2 * i] = cs[2 * i + 1] = c;
          sn[2 * i] = -s, sn[2 * i + 1] = s;
        }
      }
    }
  });
  return t;
}

}  // namespace

void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y) {
  const auto kernel = pick(simd_scalar::rope_token, simd_avx2::rope_token, simd_avx512::rope_token);
  const int64_t num_tokens = x.dim(0), num_heads = x.dim(1), head_dim = x.dim(2);
  const int64_t half = inv_freq.dim(0);
  const bool neox = style == RopeStyle::NEOX;
  const auto turn = ThreadPool::global().take_turn();  // the tables' cache is shared (rope_tables)
  const RopeTables& tab = rope_tables(positions.ptr<int32_t>(), num_tokens, inv_freq.ptr<float>(), half,
                                      freq_factors ? freq_factors->ptr<float>() : nullptr, attention_factor, neox);
  const int64_t token_elems = num_heads * head_dim;
  parallel_for(num_tokens, row_grain(token_elems), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      kernel(x.ptr<float>() + t * token_elems, y.ptr<float>() + t * token_elems, num_heads, head_dim, half,
             tab.cs.data() + t * 2 * half, tab.sn.data() + t * 2 * half, neox);
  });
}

void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y) {
  const int64_t num_tokens = x.dim(0), row = x.dim(1) * x.dim(2);
  const int32_t* pos = positions.ptr<int32_t>();
  parallel_for(num_tokens, row_grain(row), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float s =
          float(1.0 + double(beta) * std::log(1.0 + std::floor(double(pos[t]) / double(floor_scale))));
      const float* xt = x.ptr<float>() + t * row;
      float* yt = y.ptr<float>() + t * row;
      for (int64_t i = 0; i < row; ++i) yt[i] = xt[i] * s;
    }
  });
}

}  // namespace oxyd::backend::cpu
