// CPU elementwise dispatcher (see elementwise.h) and the scalar copy of elementwise_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/elementwise_impl.h"

#include "backend/cpu/dispatch.h"
#include "backend/cpu/elementwise.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL void elementwise_span(int, const float*, const float*, float*, int64_t, float)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

namespace {

enum Op { ADD = 0, MUL = 1, SCALE = 2, SOFTCAP = 3 };

auto kernel() {
  return pick(simd_scalar::elementwise_span, simd_avx2::elementwise_span, simd_avx512::elementwise_span);
}

void binary(Op op, const Tensor& a, const Tensor& b, const Tensor& y) {
  const auto k = kernel();
  if (b.numel() == a.numel()) {
    parallel_for(a.numel(), kMinChunkElems, [&](int64_t s, int64_t e) {
      k(op, a.ptr<float>() + s, b.ptr<float>() + s, y.ptr<float>() + s, e - s, 0.0f);
    });
    return;
  }
  const int64_t n = a.cols();
  if (b.ndim == 2 && b.dim(1) == 1 && b.dim(0) == a.rows()) {  // mul by a column: y[r] = b[r] · a[r]
    parallel_for(a.rows(), row_grain(n), [&](int64_t s, int64_t e) {
      for (int64_t r = s; r < e; ++r) k(SCALE, a.row<float>(r), nullptr, y.row<float>(r), n, b.ptr<float>()[r]);
    });
    return;
  }
  // b is one row broadcast over a's rows
  parallel_for(a.rows(), row_grain(n), [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) k(op, a.row<float>(r), b.ptr<float>(), y.row<float>(r), n, 0.0f);
  });
}

void unary(Op op, const Tensor& x, float s, const Tensor& y) {
  const auto k = kernel();
  parallel_for(x.numel(), kMinChunkElems, [&](int64_t b, int64_t e) {
    k(op, x.ptr<float>() + b, nullptr, y.ptr<float>() + b, e - b, s);
  });
}

}  // namespace

void add(const Tensor& a, const Tensor& b, const Tensor& y) { binary(ADD, a, b, y); }
void mul(const Tensor& a, const Tensor& b, const Tensor& y) { binary(MUL, a, b, y); }
void scale(const Tensor& x, float s, const Tensor& y) { unary(SCALE, x, s, y); }
void softcap(const Tensor& x, float cap, const Tensor& y) { unary(SOFTCAP, x, cap, y); }
void clamp(const Tensor& x, float limit, const Tensor& y) {
  const float* in = x.ptr<float>();
  float* out = y.ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = std::min(std::max(in[i], -limit), limit);
}

}  // namespace oxyd::backend::cpu
