// CPU RoPE dispatcher (see rope.h) and the scalar copy of rope_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/rope_impl.h"

#include <cmath>

#include "backend/cpu/dispatch.h"
#include "backend/cpu/rope.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL \
  void rope_token(const float*, float*, int64_t, int64_t, int64_t, const float*, const float*, bool)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y) {
  const auto kernel = pick(simd_scalar::rope_token, simd_avx2::rope_token, simd_avx512::rope_token);
  const int64_t num_tokens = x.dim(0), num_heads = x.dim(1), head_dim = x.dim(2);
  const int64_t half = inv_freq.dim(0);
  const bool neox = style == RopeStyle::NEOX;
  const int32_t* pos = positions.ptr<int32_t>();
  const float* freq = inv_freq.ptr<float>();
  const float* ff = freq_factors ? freq_factors->ptr<float>() : nullptr;
  const int64_t token_elems = num_heads * head_dim;
  parallel_for(num_tokens, row_grain(token_elems), [&](int64_t begin, int64_t end) {
    alignas(64) float cs[1024], sn[1024];  // head_dim ≤ 1024 (checked by ops::rope)
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t i = 0; i < half; ++i) {
        double theta = double(pos[t]) * double(freq[i]);
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
      kernel(x.ptr<float>() + t * token_elems, y.ptr<float>() + t * token_elems, num_heads,
             head_dim, half, cs, sn, neox);
    }
  });
}

}  // namespace oxyd::backend::cpu
