// Elementwise front ends (see elementwise.h).
#include "ops/elementwise.h"

#include <cmath>
#include <string>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {
namespace {

// column: b may also be [rows, 1], one value per row of a 2-D a (mul only).
backend::Backend& check_binary(const char* op, const Tensor& a, const Tensor& b, const Tensor& y,
                               bool column = false) {
  check::tensor(op, "a", a, DType::F32);
  check::tensor(op, "b", b, DType::F32);
  check::tensor(op, "y", y, DType::F32);
  check::same_shape(op, "a", a, "y", y);
  if (b.ndim == 1 && a.ndim > 1) {
    check::dim(op, "b", b, 0, a.cols(), "the last dim of a, broadcast over rows");
  } else if (column && b.ndim == 2 && a.ndim == 2 && b.dim(1) == 1 && a.dim(1) > 1) {
    check::dim(op, "b", b, 0, a.rows(), "the rows of a, a column broadcast over each row");
  } else {
    check::same_shape(op, "a", a, "b", b);
  }
  return backend_for(op, {&a, &b, &y});
}

backend::Backend& check_unary(const char* op, const Tensor& x, const Tensor& y) {
  check::tensor(op, "x", x, DType::F32);
  check::tensor(op, "y", y, DType::F32);
  check::same_shape(op, "x", x, "y", y);
  return backend_for(op, {&x, &y});
}

}  // namespace

void add(const Tensor& a, const Tensor& b, const Tensor& y) {
  check_binary("add", a, b, y).add(a, b, y);
}

void mul(const Tensor& a, const Tensor& b, const Tensor& y) {
  check_binary("mul", a, b, y, /*column=*/true).mul(a, b, y);
}

void scale(const Tensor& x, float s, const Tensor& y) {
  check_unary("scale", x, y).scale(x, s, y);
}

void softcap(const Tensor& x, float cap, const Tensor& y) {
  backend::Backend& b = check_unary("softcap", x, y);
  if (!std::isfinite(cap) || cap <= 0) check::fail("softcap", "cap must be finite and > 0, got " + std::to_string(cap));
  b.softcap(x, cap, y);
}

void copy_to_host(const Tensor& x, void* dst) {
  if (x.data == nullptr && x.numel() > 0) check::fail("copy_to_host", "x has no data");
  if (dst == nullptr && x.nbytes() > 0) check::fail("copy_to_host", "no destination");
  backend_for("copy_to_host", {&x}).copy_to_host(x, dst);
}

void copy_from_host(const void* src, const Tensor& dst) {
  if (dst.data == nullptr && dst.numel() > 0) check::fail("copy_from_host", "dst has no data");
  if (src == nullptr && dst.nbytes() > 0) check::fail("copy_from_host", "no source");
  backend_for("copy_from_host", {&dst}).copy_from_host(src, dst);
}

void zero(const Tensor& y) {
  check::tensor("zero", "y", y, DType::F32);
  backend_for("zero", {&y}).zero(y);
}

void argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids) {
  check::tensor("argmax_rows", "x", x, DType::F32);
  check::tensor("argmax_rows", "ids", ids, DType::I32);
  if (x.ndim != 2 || ids.numel() != x.rows() || cols < 1 || cols > x.cols())
    check::fail("argmax_rows", "x " + x.shape_str() + ", ids " + ids.shape_str() + ", cols " + std::to_string(cols) +
                                   ": need x [rows, n], ids [rows] and 1 <= cols <= n");
  if (x.device != ids.device) check::fail("argmax_rows", "x and ids must be on the same device");
  if (x.rows() == 0) return;
  backend_for("argmax_rows", {&x, &ids}).argmax_rows(x, cols, ids);
}

void clamp(const Tensor& x, float limit, const Tensor& y) {
  backend::Backend& b = check_unary("clamp", x, y);
  if (!std::isfinite(limit) || limit <= 0) check::fail("clamp", "limit must be finite and > 0, got " + std::to_string(limit));
  b.clamp(x, limit, y);
}

}  // namespace oxyd::ops
