// CPU activation / GLU dispatcher (see activation.h) and the scalar copy of activation_impl.h.
#define OXYD_ISA_SCALAR
#include "backend/cpu/activation_impl.h"

#include "backend/cpu/activation.h"
#include "backend/cpu/dispatch.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL                                                             \
  void activation_span(int, const float*, const float*, float*, int64_t); \
  void glu_oai_span(const float*, const float*, float*, int64_t, float, float)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL
static_assert(int(Activation::SILU) == 0 && int(Activation::GELU_ERF) == 1 && int(Activation::GELU_TANH) == 2 &&
              int(Activation::SIGMOID) == 3);

namespace {
auto kernel() {
  return pick(simd_scalar::activation_span, simd_avx2::activation_span, simd_avx512::activation_span);
}
}  // namespace

void activation(Activation act, const Tensor& x, const Tensor& y) {
  const auto k = kernel();
  parallel_for(x.numel(), kMinChunkElems, [&](int64_t b, int64_t e) {
    k(int(act), x.ptr<float>() + b, nullptr, y.ptr<float>() + b, e - b);
  });
}

void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) {
  const auto k = kernel();
  parallel_for(gate.numel(), kMinChunkElems, [&](int64_t b, int64_t e) {
    k(int(act), gate.ptr<float>() + b, up.ptr<float>() + b, y.ptr<float>() + b, e - b);
  });
}

void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) {
  const auto k = pick(simd_scalar::glu_oai_span, simd_avx2::glu_oai_span, simd_avx512::glu_oai_span);
  parallel_for(gate.numel(), kMinChunkElems, [&](int64_t b, int64_t e) {
    k(gate.ptr<float>() + b, up.ptr<float>() + b, y.ptr<float>() + b, e - b, alpha, limit);
  });
}

void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) {
  const auto k = kernel();
  const int64_t ff = y.cols();
  parallel_for(y.rows(), row_grain(ff), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* g = gate_up.row<float>(r);
      k(int(act), g, g + ff, y.row<float>(r), ff);
    }
  });
}

}  // namespace oxyd::backend::cpu
