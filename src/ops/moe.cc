// MoE routing / combine front ends (see moe.h).
#include "ops/moe.h"

#include <string>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

void moe_route(const Tensor& logits, const backend::RouterParams& p, const Tensor& ids, const Tensor& weights) {
  check::tensor("moe_route", "logits", logits, DType::F32, 2);
  check::tensor("moe_route", "ids", ids, DType::I32, 2);
  check::tensor("moe_route", "weights", weights, DType::F32, 2);
  const int64_t T = logits.dim(0), E = logits.dim(1);
  if (p.top_k < 1 || p.top_k > E)
    check::fail("moe_route", "top_k " + std::to_string(p.top_k) + " outside [1, num_experts = " + std::to_string(E) + "]");
  check::dim("moe_route", "ids", ids, 0, T, "num_tokens");
  check::dim("moe_route", "ids", ids, 1, p.top_k, "top_k");
  check::same_shape("moe_route", "ids", ids, "weights", weights);
  backend_for("moe_route", {&logits, &ids, &weights}).moe_route(logits, p, ids, weights);
}

void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) {
  check::tensor("moe_combine", "expert_out", expert_out, DType::F32, 2);
  check::tensor("moe_combine", "rows", rows, DType::I32, 2);
  check::tensor("moe_combine", "weights", weights, DType::F32, 2);
  check::tensor("moe_combine", "y", y, DType::F32, 2);
  check::same_shape("moe_combine", "rows", rows, "weights", weights);
  check::dim("moe_combine", "rows", rows, 0, y.dim(0), "num_tokens");
  check::dim("moe_combine", "y", y, 1, expert_out.dim(1), "hidden size");
  if (rows.dim(1) < 1) check::fail("moe_combine", "rows must have at least one column");
  if (y.data == expert_out.data) check::fail("moe_combine", "y must not alias expert_out");
  if (rows.device == Device::CPU) {  // row indices are host-readable: check them once here
    const int64_t N = expert_out.dim(0);
    for (int64_t i = 0; i < rows.numel(); ++i)
      if (rows.ptr<int32_t>()[i] < 0 || rows.ptr<int32_t>()[i] >= N)
        check::fail("moe_combine", "row " + std::to_string(rows.ptr<int32_t>()[i]) + " outside [0, " +
                                       std::to_string(N) + ")");
  }
  backend_for("moe_combine", {&expert_out, &rows, &weights, &y}).moe_combine(expert_out, rows, weights, y);
}

}  // namespace oxyd::ops
