// Reference RMSNorm (see rms_norm.h). Straightforward loops, float64 sums.
#include "backend/reference/rms_norm.h"

#include <cmath>

namespace oxyd::backend::reference {

void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) {
  const int64_t rows = x.rows(), n = x.cols();
  const float* w = weight ? weight->ptr<float>() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.row<float>(r);
    float* yr = y.row<float>(r);
    double sum_sq = 0;
    for (int64_t i = 0; i < n; ++i) sum_sq += double(xr[i]) * double(xr[i]);
    const double inv_rms = 1.0 / std::sqrt(sum_sq / double(n) + double(eps));
    for (int64_t i = 0; i < n; ++i) yr[i] = float(double(xr[i]) * inv_rms * (w ? double(w[i]) : 1.0));
  }
}

}  // namespace oxyd::backend::reference
