// Reference RoPE (see rope.h): per token the pair angles in float64, then every head rotated.
#include "backend/reference/rope.h"

#include <cmath>
#include <vector>

namespace oxyd::backend::reference {

void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y) {
  const int64_t num_tokens = x.dim(0), num_heads = x.dim(1), head_dim = x.dim(2);
  const int64_t half = inv_freq.dim(0), rot_dim = 2 * half;
  const int32_t* pos = positions.ptr<int32_t>();
  const float* freq = inv_freq.ptr<float>();
  const float* ff = freq_factors ? freq_factors->ptr<float>() : nullptr;
  std::vector<double> cos_t(half), sin_t(half);
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      double theta = double(pos[t]) * double(freq[i]);
      if (ff) theta /= double(ff[i]);
      cos_t[i] = std::cos(theta) * attention_factor;
      sin_t[i] = std::sin(theta) * attention_factor;
    }
    for (int64_t h = 0; h < num_heads; ++h) {
      const float* xh = x.ptr<float>() + (t * num_heads + h) * head_dim;
      float* yh = y.ptr<float>() + (t * num_heads + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t i0 = style == RopeStyle::NEOX ? i : 2 * i;
        const int64_t i1 = style == RopeStyle::NEOX ? i + half : 2 * i + 1;
        const double x0 = xh[i0], x1 = xh[i1];
        yh[i0] = float(x0 * cos_t[i] - x1 * sin_t[i]);
        yh[i1] = float(x0 * sin_t[i] + x1 * cos_t[i]);
      }
      for (int64_t i = rot_dim; i < head_dim; ++i) yh[i] = xh[i];
    }
  }
}

void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y) {
  const int64_t num_tokens = x.dim(0), row = x.dim(1) * x.dim(2);
  const int32_t* pos = positions.ptr<int32_t>();
  for (int64_t t = 0; t < num_tokens; ++t) {
    const double s = 1.0 + double(beta) * std::log(1.0 + std::floor(double(pos[t]) / double(floor_scale)));
    const float* xt = x.ptr<float>() + t * row;
    float* yt = y.ptr<float>() + t * row;
    for (int64_t i = 0; i < row; ++i) yt[i] = float(double(xt[i]) * s);
  }
}

}  // namespace oxyd::backend::reference
