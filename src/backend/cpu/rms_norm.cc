// CPU RMSNorm dispatcher (see rms_norm.h) and the scalar copy of rms_norm_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/rms_norm_impl.h"

#include "backend/cpu/dispatch.h"
#include "backend/cpu/rms_norm.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
namespace simd_avx2 {
void rms_norm_rows(const float* x, const float* w, float* y, int64_t n, int64_t rows, float eps);
}
namespace simd_avx512 {
void rms_norm_rows(const float* x, const float* w, float* y, int64_t n, int64_t rows, float eps);
}

void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) {
  const auto kernel = pick(simd_scalar::rms_norm_rows, simd_avx2::rms_norm_rows, simd_avx512::rms_norm_rows);
  const int64_t n = x.cols();
  const float* w = weight ? weight->ptr<float>() : nullptr;
  parallel_for(x.rows(), row_grain(n), [&](int64_t begin, int64_t end) {
    kernel(x.row<float>(begin), w, y.row<float>(begin), n, end - begin, eps);
  });
}

}  // namespace oxyd::backend::cpu
