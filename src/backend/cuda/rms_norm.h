// CUDA RMSNorm: y = x · (mean(x²) + eps)^-½ · w over the last dim, fp32 math, one row per warp
// (short rows) or per block (long rows), 16-byte loads when aligned. Mirrors
// backend/reference/rms_norm.h; Gemma's (1 + w) is baked into w at load time.
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// x [rows, n] F32 | BF16 | F16 (any rank, normalized over the last dim); weight [n] F32 or
/// nullptr (no scale); y same shape and dtype as x, may alias x. Queued on `stream`.
void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y,
              const Stream& stream);

/// Fused residual add + RMSNorm: h = x + residual, rounded to the storage dtype and written back
/// to `residual` (the new residual stream), then y = rms_norm(h) · w from the rounded h, as
/// add followed by rms_norm would give. x, residual, y [rows, n] of one dtype; y may alias x, not
/// residual.
void add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor* weight, float eps,
                  const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
