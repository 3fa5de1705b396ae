// MoE routing / combine front ends (see moe.h).
#include "ops/moe.h"

#include <string>
#include <vector>

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
  if (p.expert_scale.data) {
    check::tensor("moe_route", "expert_scale", p.expert_scale, DType::F32, 1);
    check::dim("moe_route", "expert_scale", p.expert_scale, 0, E, "num_experts");
  }
  backend_for("moe_route", {&logits, &ids, &weights, p.expert_scale.data ? &p.expert_scale : &logits}).moe_route(logits, p, ids, weights);
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

void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows) {
  check::tensor("moe_group", "ids", ids, DType::I32, 2);
  check::tensor("moe_group", "offsets", offsets, DType::I32, 1);
  check::tensor("moe_group", "gather", gather, DType::I32, 1);
  check::tensor("moe_group", "rows", rows, DType::I32, 2);
  check::same_shape("moe_group", "ids", ids, "rows", rows);
  check::dim("moe_group", "gather", gather, 0, ids.numel(), "num_tokens * top_k");
  const int64_t E = offsets.dim(0) - 1;
  if (E < 1) check::fail("moe_group", "offsets must hold num_experts + 1 >= 2 entries");
  if (ids.device == Device::CPU)
    for (int64_t i = 0; i < ids.numel(); ++i)
      if (ids.ptr<int32_t>()[i] < 0 || ids.ptr<int32_t>()[i] >= E)
        check::fail("moe_group", "expert id " + std::to_string(ids.ptr<int32_t>()[i]) + " outside [0, " +
                                     std::to_string(E) + ")");
  backend_for("moe_group", {&ids, &offsets, &gather, &rows}).moe_group(ids, offsets, gather, rows);
}

void moe_experts(const backend::MoeExpertsParams& p) {
  const char* op = "moe_experts";
  check::tensor(op, "xs", p.xs, DType::F32, 2);
  check::tensor(op, "offsets", p.offsets, DType::I32, 1);
  check::tensor(op, "gate", p.gate, DType::F32, 2);
  check::tensor(op, "up", p.up, DType::F32, 2);
  check::tensor(op, "ys", p.ys, DType::F32, 2);
  check::same_shape(op, "xs", p.xs, "ys", p.ys);
  check::same_shape(op, "gate", p.gate, "up", p.up);
  check::dim(op, "gate", p.gate, 0, p.xs.dim(0), "the rows of xs");
  const int64_t E = p.offsets.dim(0) - 1, H = p.xs.dim(1), I = p.gate.dim(1);
  if (E < 1 || !p.experts) check::fail(op, "no experts");
  if (p.xs.data == p.ys.data) check::fail(op, "ys must not alias xs");
  std::vector<const Tensor*> ts{&p.xs, &p.offsets, &p.gate, &p.up, &p.ys};
  for (int64_t e = 0; e < E; ++e) {
    const backend::ExpertWeights& x = p.experts[e];
    const std::string name = "experts[" + std::to_string(e) + "]";
    if (x.gate.rows() != I || x.gate.cols() != H || x.up.rows() != I || x.up.cols() != H || x.down.rows() != H ||
        x.down.cols() != I)
      check::fail(op, name + ": gate/up must be [" + std::to_string(I) + ", " + std::to_string(H) + "], down [" +
                          std::to_string(H) + ", " + std::to_string(I) + "]");
    for (const Tensor* b : {&x.gate_bias, &x.up_bias, &x.down_bias})
      if (b->data && (b->dtype != DType::F32 || b->numel() != (b == &x.down_bias ? H : I)))
        check::fail(op, name + ": a bias must be F32 of the width it adds to");
    ts.insert(ts.end(), {&x.gate, &x.up, &x.down});
  }
  if (p.offsets.device == Device::CPU) {
    const int32_t* o = p.offsets.ptr<int32_t>();
    if (o[0] != 0 || o[E] != p.xs.dim(0)) check::fail(op, "offsets must run from 0 to the rows of xs");
    for (int64_t e = 0; e < E; ++e)
      if (o[e + 1] < o[e]) check::fail(op, "offsets must not decrease");
  }
  backend_for(op, ts).moe_experts(p);
}

}  // namespace oxyd::ops
