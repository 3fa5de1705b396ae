// RMSNorm / LayerNorm front ends (see rms_norm.h).
#include "ops/rms_norm.h"

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {
namespace {

void check_vec(const char* op, const char* name, const Tensor* v, int64_t n) {
  if (!v) return;
  check::tensor(op, name, *v, DType::F32, 1);
  check::dim(op, name, *v, 0, n, "the last dim of x");
}

void check_norm(const char* op, const Tensor& x, const Tensor& y, float eps) {
  check::tensor(op, "x", x, DType::F32);
  check::tensor(op, "y", y, DType::F32);
  check::same_shape(op, "x", x, "y", y);
  if (x.cols() == 0) check::fail(op, "x has an empty last dim " + x.shape_str());
  if (!(eps >= 0)) check::fail(op, "eps must be ≥ 0, got " + std::to_string(eps));
}

}  // namespace

void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) {
  check_norm("rms_norm", x, y, eps);
  check_vec("rms_norm", "weight", weight, x.cols());
  backend_for("rms_norm", {&x, weight, &y}).rms_norm(x, weight, eps, y);
}

void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps, const Tensor& y) {
  check_norm("layer_norm", x, y, eps);
  check_vec("layer_norm", "weight", weight, x.cols());
  check_vec("layer_norm", "bias", bias, x.cols());
  backend_for("layer_norm", {&x, weight, bias, &y}).layer_norm(x, weight, bias, eps, y);
}

}  // namespace oxyd::ops
