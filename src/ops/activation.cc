// Activation / GLU front ends (see activation.h).
#include "ops/activation.h"

#include <cmath>

#include "backend/cpu/activation.h"
#include "ops/check.h"

namespace oxyd::ops {

void activation(Activation act, const Tensor& x, const Tensor& y) {
  check::tensor("activation", "x", x, DType::F32);
  check::tensor("activation", "y", y, DType::F32);
  check::same_shape("activation", "x", x, "y", y);
  check::cpu_only("activation", {&x, &y});
  backend::cpu::activation(act, x, y);
}

void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) {
  check::tensor("glu", "gate", gate, DType::F32);
  check::tensor("glu", "up", up, DType::F32);
  check::tensor("glu", "y", y, DType::F32);
  check::same_shape("glu", "gate", gate, "up", up);
  check::same_shape("glu", "gate", gate, "y", y);
  check::cpu_only("glu", {&gate, &up, &y});
  backend::cpu::glu(act, gate, up, y);
}

void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) {
  check::tensor("glu_oai", "gate", gate, DType::F32);
  check::tensor("glu_oai", "up", up, DType::F32);
  check::tensor("glu_oai", "y", y, DType::F32);
  check::same_shape("glu_oai", "gate", gate, "up", up);
  check::same_shape("glu_oai", "gate", gate, "y", y);
  if (!(limit > 0) || !std::isfinite(alpha)) check::fail("glu_oai", "limit must be > 0 and alpha finite");
  check::cpu_only("glu_oai", {&gate, &up, &y});
  backend::cpu::glu_oai(gate, up, alpha, limit, y);
}

void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) {
  check::tensor("glu_fused", "gate_up", gate_up, DType::F32);
  check::tensor("glu_fused", "y", y, DType::F32, gate_up.ndim);
  for (int i = 0; i + 1 < gate_up.ndim; ++i)
    check::dim("glu_fused", "y", y, i, gate_up.dim(i), "the outer dims of gate_up");
  check::dim("glu_fused", "gate_up", gate_up, -1, 2 * y.cols(), "2 × the last dim of y");
  check::cpu_only("glu_fused", {&gate_up, &y});
  backend::cpu::glu_fused(act, gate_up, y);
}

}  // namespace oxyd::ops
