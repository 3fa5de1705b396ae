// Reference activations and GLUs (see activation.h), float64 libm math.
#include "backend/reference/activation.h"

#include <algorithm>
#include <cmath>

namespace oxyd::backend::reference {
namespace {

double act_f64(Activation act, double x) {
  switch (act) {
    case Activation::SILU:
      return x / (1.0 + std::exp(-x));
    case Activation::GELU_ERF:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::GELU_TANH:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::SIGMOID:
      return 1.0 / (1.0 + std::exp(-x));
  }
  return 0;
}

}  // namespace

void activation(Activation act, const Tensor& x, const Tensor& y) {
  const int64_t n = x.numel();
  const float* xs = x.ptr<float>();
  float* ys = y.ptr<float>();
  for (int64_t i = 0; i < n; ++i) ys[i] = float(act_f64(act, xs[i]));
}

void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) {
  const int64_t n = gate.numel();
  const float* g = gate.ptr<float>();
  const float* u = up.ptr<float>();
  float* ys = y.ptr<float>();
  for (int64_t i = 0; i < n; ++i) ys[i] = float(act_f64(act, g[i]) * double(u[i]));
}

void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) {
  const int64_t n = gate.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double g = std::min(double(gate.ptr<float>()[i]), double(limit));
    const double u = std::clamp(double(up.ptr<float>()[i]), -double(limit), double(limit));
    y.ptr<float>()[i] = float((u + 1.0) * g / (1.0 + std::exp(-double(alpha) * g)));
  }
}

void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) {
  const int64_t rows = y.rows(), ff = y.cols();
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gate_up.row<float>(r);
    const float* u = g + ff;
    float* yr = y.row<float>(r);
    for (int64_t i = 0; i < ff; ++i) yr[i] = float(act_f64(act, g[i]) * double(u[i]));
  }
}

}  // namespace oxyd::backend::reference
