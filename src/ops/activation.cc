// Activation / GLU front ends (see activation.h).
#include "ops/activation.h"

#include <cmath>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

void activation(Activation act, const Tensor& x, const Tensor& y) {
  check::tensor("activation", "x", x, DType::F32);
  check::tensor("activation", "y", y, DType::F32);
  check::same_shape("activation", "x", x, "y", y);
  backend_for("activation", {&x, &y}).activation(act, x, y);
}

void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) {
  check::tensor("glu", "gate", gate, DType::F32);
  check::tensor("glu", "up", up, DType::F32);
  check::tensor("glu", "y", y, DType::F32);
  check::same_shape("glu", "gate", gate, "up", up);
  check::same_shape("glu", "gate", gate, "y", y);
  backend_for("glu", {&gate, &up, &y}).glu(act, gate, up, y);
}

void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) {
  check::tensor("glu_oai", "gate", gate, DType::F32);
  check::tensor("glu_oai", "up", up, DType::F32);
  check::tensor("glu_oai", "y", y, DType::F32);
  check::same_shape("glu_oai", "gate", gate, "up", up);
  check::same_shape("glu_oai", "gate", gate, "y", y);
  if (!(limit > 0) || !std::isfinite(alpha)) check::fail("glu_oai", "limit must be > 0 and alpha finite");
  backend_for("glu_oai", {&gate, &up, &y}).glu_oai(gate, up, alpha, limit, y);
}

void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) {
  check::tensor("glu_fused", "gate_up", gate_up, DType::F32);
  check::tensor("glu_fused", "y", y, DType::F32, gate_up.ndim);
  for (int i = 0; i + 1 < gate_up.ndim; ++i)
    check::dim("glu_fused", "y", y, i, gate_up.dim(i), "the outer dims of gate_up");
  check::dim("glu_fused", "gate_up", gate_up, -1, 2 * y.cols(), "2 × the last dim of y");
  backend_for("glu_fused", {&gate_up, &y}).glu_fused(act, gate_up, y);
}

}  // namespace oxyd::ops
