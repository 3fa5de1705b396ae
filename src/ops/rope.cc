// RoPE front end (see rope.h).
#include "ops/rope.h"

#include <cmath>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y) {
  constexpr const char* op = "rope";
  check::tensor(op, "x", x, DType::F32, 3);
  check::tensor(op, "y", y, DType::F32, 3);
  check::same_shape(op, "x", x, "y", y);
  check::tensor(op, "positions", positions, DType::I32, 1);
  check::dim(op, "positions", positions, 0, x.dim(0), "num_tokens of x");
  check::tensor(op, "inv_freq", inv_freq, DType::F32, 1);
  const int64_t head_dim = x.dim(2), rot_dim = 2 * inv_freq.dim(0);
  if (head_dim > 1024) check::fail(op, "head_dim must be ≤ 1024, got " + std::to_string(head_dim));
  if (rot_dim == 0 || rot_dim > head_dim)
    check::fail(op, "rot_dim = 2·inv_freq.dim(0) = " + std::to_string(rot_dim) + " must be in [2, head_dim = " +
                        std::to_string(head_dim) + "]");
  if (freq_factors) {
    check::tensor(op, "freq_factors", *freq_factors, DType::F32, 1);
    check::dim(op, "freq_factors", *freq_factors, 0, inv_freq.dim(0), "rot_dim / 2, like inv_freq");
  }
  if (!std::isfinite(attention_factor)) check::fail(op, "attention_factor must be finite");
  backend_for(op, {&x, &positions, &inv_freq, freq_factors, &y}).rope(x, positions, inv_freq, freq_factors, style, attention_factor, y);
}

void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y) {
  constexpr const char* op = "attn_temperature";
  check::tensor(op, "x", x, DType::F32, 3);
  check::tensor(op, "y", y, DType::F32, 3);
  check::same_shape(op, "x", x, "y", y);
  check::tensor(op, "positions", positions, DType::I32, 1);
  check::dim(op, "positions", positions, 0, x.dim(0), "num_tokens of x");
  if (floor_scale <= 0) check::fail(op, "floor_scale must be > 0, got " + std::to_string(floor_scale));
  if (!std::isfinite(beta)) check::fail(op, "beta must be finite");
  backend_for(op, {&x, &positions, &y}).attn_temperature(x, positions, beta, floor_scale, y);
}

}  // namespace oxyd::ops
