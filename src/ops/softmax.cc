// Softmax front end (see softmax.h).
#include "ops/softmax.h"

#include <cmath>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

void softmax(const Tensor& x, const Tensor& y, float scale) {
  check::tensor("softmax", "x", x, DType::F32);
  check::tensor("softmax", "y", y, DType::F32);
  check::same_shape("softmax", "x", x, "y", y);
  if (x.cols() == 0) check::fail("softmax", "x has an empty last dim " + x.shape_str());
  if (!std::isfinite(scale) || scale <= 0) check::fail("softmax", "scale must be finite and > 0");
  backend_for("softmax", {&x, &y}).softmax(x, scale, y);
}

}  // namespace oxyd::ops
