// CPU softmax dispatcher (see softmax.h) and the scalar copy of softmax_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/softmax_impl.h"

#include "backend/cpu/dispatch.h"
#include "backend/cpu/softmax.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL void softmax_rows(const float*, float*, int64_t, int64_t, float)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

void softmax(const Tensor& x, float scale, const Tensor& y) {
  const auto kernel = pick(simd_scalar::softmax_rows, simd_avx2::softmax_rows, simd_avx512::softmax_rows);
  const int64_t n = x.cols();
  parallel_for(x.rows(), row_grain(n), [&](int64_t begin, int64_t end) {
    kernel(x.row<float>(begin), y.row<float>(begin), n, end - begin, scale);
  });
}

}  // namespace oxyd::backend::cpu
