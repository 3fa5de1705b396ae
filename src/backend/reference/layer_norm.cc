// Reference LayerNorm (see layer_norm.h). Two passes per row (mean, then biased variance), float64.
#include "backend/reference/layer_norm.h"

#include <cmath>

namespace oxyd::backend::reference {

void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y) {
  const int64_t rows = x.rows(), n = x.cols();
  const float* w = weight ? weight->ptr<float>() : nullptr;
  const float* b = bias ? bias->ptr<float>() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.row<float>(r);
    float* yr = y.row<float>(r);
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += xr[i];
    mean /= double(n);
    double var = 0;
    for (int64_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= double(n);
    const double inv_std = 1.0 / std::sqrt(var + double(eps));
    for (int64_t i = 0; i < n; ++i) {
      double v = (xr[i] - mean) * inv_std;
      if (w) v *= w[i];
      if (b) v += b[i];
      yr[i] = float(v);
    }
  }
}

}  // namespace oxyd::backend::reference
