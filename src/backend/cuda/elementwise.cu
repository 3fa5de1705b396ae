// CUDA elementwise ops (see elementwise.h), each one functor over map_kernel.cuh.
#include "backend/cuda/elementwise.h"

#include "backend/cuda/map_kernel.cuh"

namespace oxyd::backend::cuda {
namespace {

struct AddOp {
  static constexpr bool kBinary = true;
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MulOp {
  static constexpr bool kBinary = true;
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct ScaleOp {
  static constexpr bool kBinary = false;
  float s;
  __device__ float operator()(float a, float) const { return s * a; }
};
struct SoftcapOp {
  static constexpr bool kBinary = false;
  float cap, inv_cap;
  __device__ float operator()(float a, float) const { return cap * tanhf(a * inv_cap); }
};

struct ClampOp {
  static constexpr bool kBinary = false;
  float limit;
  __device__ float operator()(float a, float) const { return a > limit ? limit : (a < -limit ? -limit : a); }
};

template <typename Op> void binary(const char* name, const Tensor& a, const Tensor& b,
                                   const Tensor& y, const Stream& stream) {
  dispatch_map(name, y, {&a, &b}, [&](auto tag) {
    using T = decltype(tag);
    const bool bcast = b.numel() != a.numel();
    if (bcast && b.numel() != a.cols())
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  std::string("cuda ") + name + ": b " + b.shape_str() + " must match a " +
                      a.shape_str() + " or be one row of " + std::to_string(a.cols()));
    MapArgs<T> args{a.ptr<const T>(), a.cols(), b.ptr<const T>(), bcast ? 0 : a.cols(),
                    y.ptr<T>(), a.rows(), a.cols()};
    launch_map(args, Op{}, stream.handle());
  });
}

template <typename Op> void unary(const char* name, const Tensor& x, Op op, const Tensor& y,
                                  const Stream& stream) {
  dispatch_map(name, y, {&x}, [&](auto tag) {
    using T = decltype(tag);
    MapArgs<T> args{x.ptr<const T>(), x.numel(), nullptr, 0, y.ptr<T>(), 1, x.numel()};
    launch_map(args, op, stream.handle());
  });
}

}  // namespace

void add(const Tensor& a, const Tensor& b, const Tensor& y, const Stream& stream) {
  binary<AddOp>("add", a, b, y, stream);
}

void mul(const Tensor& a, const Tensor& b, const Tensor& y, const Stream& stream) {
  binary<MulOp>("mul", a, b, y, stream);
}

void scale(const Tensor& x, float s, const Tensor& y, const Stream& stream) {
  unary("scale", x, ScaleOp{s}, y, stream);
}

void softcap(const Tensor& x, float cap, const Tensor& y, const Stream& stream) {
  OXYD_CHECK(cap > 0.0f, "softcap: cap must be > 0");
  unary("softcap", x, SoftcapOp{cap, 1.0f / cap}, y, stream);
}

void clamp(const Tensor& x, float limit, const Tensor& y, const Stream& stream) {
  unary("clamp", x, ClampOp{limit}, y, stream);
}

}  // namespace oxyd::backend::cuda
