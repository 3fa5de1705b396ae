// Reference row softmax (see softmax.h): max-subtracted exponentials in float64.
#include "backend/reference/softmax.h"

#include <cmath>
#include <vector>

namespace oxyd::backend::reference {

void softmax(const Tensor& x, float scale, const Tensor& y) {
  const int64_t rows = x.rows(), n = x.cols();
  std::vector<double> e(n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.row<float>(r);
    float* yr = y.row<float>(r);
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(scale) * xr[i]);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += e[i] = std::exp(double(scale) * xr[i] - mx);
    for (int64_t i = 0; i < n; ++i) yr[i] = float(e[i] / sum);
  }
}

}  // namespace oxyd::backend::reference
