// CPU LayerNorm dispatcher (see layer_norm.h) and the scalar copy of layer_norm_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/layer_norm_impl.h"

#include "backend/cpu/dispatch.h"
#include "backend/cpu/layer_norm.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL void layer_norm_rows(const float*, const float*, const float*, float*, int64_t, int64_t, float)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y) {
  const auto kernel = pick(simd_scalar::layer_norm_rows, simd_avx2::layer_norm_rows,
                           simd_avx512::layer_norm_rows);
  const int64_t n = x.cols();
  const float* w = weight ? weight->ptr<float>() : nullptr;
  const float* b = bias ? bias->ptr<float>() : nullptr;
  parallel_for(x.rows(), row_grain(n), [&](int64_t begin, int64_t end) {
    kernel(x.row<float>(begin), w, b, y.row<float>(begin), n, end - begin, eps);
  });
}

}  // namespace oxyd::backend::cpu
