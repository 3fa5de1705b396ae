// Reference elementwise ops (see elementwise.h).
#include "backend/reference/elementwise.h"

#include <cmath>

namespace oxyd::backend::reference {
namespace {

// b is the same shape as a, one row broadcast over a's rows, or a column [rows, 1] (one per row).
template <typename F>
void binary(const Tensor& a, const Tensor& b, const Tensor& y, F f) {
  const int64_t rows = a.rows(), n = a.cols();
  const bool column = n > 1 && b.ndim == 2 && b.dim(1) == 1 && b.dim(0) == rows;
  const bool bcast = !column && b.numel() != a.numel();
  for (int64_t r = 0; r < rows; ++r) {
    const float* ar = a.row<float>(r);
    const float* br = b.ptr<float>() + (column ? r : bcast ? 0 : r * n);
    float* yr = y.row<float>(r);
    for (int64_t i = 0; i < n; ++i) yr[i] = float(f(double(ar[i]), double(br[column ? 0 : i])));
  }
}

}  // namespace

void add(const Tensor& a, const Tensor& b, const Tensor& y) {
  binary(a, b, y, [](double u, double v) { return u + v; });
}

void mul(const Tensor& a, const Tensor& b, const Tensor& y) {
  binary(a, b, y, [](double u, double v) { return u * v; });
}

void scale(const Tensor& x, float s, const Tensor& y) {
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) y.ptr<float>()[i] = float(double(s) * x.ptr<float>()[i]);
}

void softcap(const Tensor& x, float cap, const Tensor& y) {
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    y.ptr<float>()[i] = float(double(cap) * std::tanh(double(x.ptr<float>()[i]) / double(cap)));
}

void clamp(const Tensor& x, float limit, const Tensor& y) {
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.ptr<float>()[i];
    y.ptr<float>()[i] = v > limit ? limit : (v < -limit ? -limit : v);
  }
}

}  // namespace oxyd::backend::reference
