// Batched matmul of a block-format weight on the tensor cores without dequantizing it whole:
// y F32 [m, n] = x F32 [m, k] · wᵀ, w [n, k] in Q8_0, Q4_0, Q4_K, Q5_K, Q6_K or MXFP4, for
// batches of up to kQgemmMaxRows rows (continuous-batching decode steps). A CTA owns a tile of 64
// x rows × 64 weight rows; as its K loop reaches a 64-wide slice it decodes the weight slice to
// BF16 in shared memory (quant_decode.cuh, bit-identical to dequantize_row before the rounding)
// and rounds x to BF16 beside it, then multiplies on the tensor cores (WMMA 16×16×16, fp32
// accumulation). Each weight byte is read once per 64 rows of x, where dequantize + cuBLAS writes
// and rereads 2 bytes per element every step. K is split over CTAs when the tiles alone do not
// fill the GPU; the splits' partial sums are added in a fixed order (deterministic). The inputs
// the tensor cores see are those of the dequantize + cuBLAS path: only summation order differs.
#pragma once

#include "backend/cuda/device.h"
#include "backend/cuda/workspace.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

inline constexpr int64_t kQgemmMaxRows = 256;

/// Whether qgemm() takes weights of dtype t (the block formats of gemv_supports).
bool qgemm_supports(DType t);

/// x F32 [m, k] (rows contiguous, 16-byte aligned), w [n, k] (qgemm_supports, k a multiple of
/// its block), y F32 [m, n], 1 ≤ m ≤ kQgemmMaxRows. `ws` holds the split partials. Queued on
/// `stream`; the caller checked shapes and devices (Gemm::matmul).
void qgemm(const Tensor& x, const Tensor& w, const Tensor& y, Workspace& ws, const Stream& stream);

}  // namespace oxyd::backend::cuda
