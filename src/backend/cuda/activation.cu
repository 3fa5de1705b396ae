// CUDA activations and GLUs (see activation.h): one functor per activation over map_kernel.cuh;
// glu_fused reads the gate and up halves of gate_up through row strides of 2·ff. Accurate libm
// expf/erff/tanhf, not the fast intrinsics: these ops are memory-bound either way.
#include "backend/cuda/activation.h"

#include "backend/cuda/map_kernel.cuh"

namespace oxyd::backend::cuda {
namespace {

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
// 1 + erf(z) = erfc(−z): no cancellation for negative x, where 1 + erff(z) loses all digits.
__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * erfcf(x * -0.70710678118654752f);
}
// ½x(1 + tanh u) = x·σ(2u), again free of the cancellation at negative x.
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kTwoSqrt2OverPi = 1.5957691216057307f;  // 2·√(2/π)
  return x / (1.0f + expf(-kTwoSqrt2OverPi * fmaf(0.044715f * x, x * x, x)));
}

// gpt-oss's clamped SwiGLU (reference glu_oai): g = min(gate, limit), u = clamp(up, ±limit),
// y = (u + 1)·g·σ(alpha·g).
struct OaiOp {
  static constexpr bool kBinary = true;
  float alpha, limit;
  __device__ float operator()(float a, float b) const {
    const float g = fminf(a, limit), u = fminf(fmaxf(b, -limit), limit);
    return (u + 1.0f) * g / (1.0f + expf(-alpha * g));
  }
};

// kGated: y = act(a)·b; otherwise y = act(a).
template <Activation kAct, bool kGated> struct ActOp {
  static constexpr bool kBinary = kGated;
  __device__ float operator()(float a, float b) const {
    float r;
    if constexpr (kAct == Activation::SILU) r = silu(a);
    else if constexpr (kAct == Activation::GELU_ERF) r = gelu_erf(a);
    else if constexpr (kAct == Activation::SIGMOID) r = sigmoid(a);
    else r = gelu_tanh(a);
    return kGated ? r * b : r;
  }
};

template <bool kGated, typename T>
void launch_act(Activation act, const MapArgs<T>& args, cudaStream_t stream) {
  switch (act) {
    case Activation::SILU: return launch_map(args, ActOp<Activation::SILU, kGated>{}, stream);
    case Activation::GELU_ERF: return launch_map(args, ActOp<Activation::GELU_ERF, kGated>{}, stream);
    case Activation::GELU_TANH:
      return launch_map(args, ActOp<Activation::GELU_TANH, kGated>{}, stream);
    case Activation::SIGMOID: return launch_map(args, ActOp<Activation::SIGMOID, kGated>{}, stream);
  }
  throw Error(ErrorCode::INVALID_ARGUMENT, "cuda activation: unknown Activation value");
}

}  // namespace

void activation(Activation act, const Tensor& x, const Tensor& y, const Stream& stream) {
  dispatch_map("activation", y, {&x}, [&](auto tag) {
    using T = decltype(tag);
    launch_act<false>(act, MapArgs<T>{x.ptr<const T>(), x.numel(), nullptr, 0, y.ptr<T>(), 1, x.numel()},
                      stream.handle());
  });
}

void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y,
         const Stream& stream) {
  dispatch_map("glu", y, {&gate, &up}, [&](auto tag) {
    using T = decltype(tag);
    const int64_t ff = y.cols();
    launch_act<true>(act, MapArgs<T>{gate.ptr<const T>(), ff, up.ptr<const T>(), ff, y.ptr<T>(),
                                     y.rows(), ff},
                     stream.handle());
  });
}

void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y, const Stream& stream) {
  dispatch_map("glu_fused", y, {&gate_up}, [&](auto tag) {
    using T = decltype(tag);
    const int64_t ff = y.cols();
    if (gate_up.cols() != 2 * ff || gate_up.rows() != y.rows())
      throw Error(ErrorCode::INVALID_ARGUMENT, "cuda glu_fused: gate_up " + gate_up.shape_str() +
                                                   " must be [rows, 2·ff] for y " + y.shape_str());
    const T* g = gate_up.ptr<const T>();
    launch_act<true>(act, MapArgs<T>{g, 2 * ff, g + ff, 2 * ff, y.ptr<T>(), y.rows(), ff},
                     stream.handle());
  });
}

void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y,
             const Stream& stream) {
  dispatch_map("glu_oai", y, {&gate, &up}, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = y.numel();
    launch_map(MapArgs<T>{gate.ptr<const T>(), n, up.ptr<const T>(), n, y.ptr<T>(), 1, n}, OaiOp{alpha, limit},
               stream.handle());
  });
}

}  // namespace oxyd::backend::cuda
