// CUDA matmul y = x · wᵀ for decode and batched steps, mirroring backend/reference/matmul.h:
// x F32 [m, k], w [n, k] in F16, BF16 or a GGUF block format (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K,
// MXFP4), y F32 [m, n]. gemv() (m ≤ kGemvMaxRows) reads each weight byte once: a block of 128
// threads owns 4 (m ≤ 2) or 8 output columns and splits k in 8-element chunks among its threads
// (coalesced loads, each chunk's activations reused for all the block's rows), decoding in
// registers and accumulating all m rows in fp32. dequantize()
// decodes whole weights on the device, bit-identical to core's dequantize_row for F32 output.
// The batched path (m > kGemvMaxRows) is Gemm::matmul in gemm.h (dequantize to BF16 + cuBLAS).
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

inline constexpr int64_t kGemvMaxRows = 8;

/// Whether gemv() / dequantize() take weights of dtype t.
bool gemv_supports(DType t);

/// x F32 [m, k] (m ≤ 8, rows contiguous, 16-byte aligned), w [n, k] (gemv_supports, 16-byte
/// aligned), y F32 [m, n] (must not alias x). k must be a multiple of the block size (32, 256) and
/// of 8. Queued on `stream`. Throws INVALID_ARGUMENT / UNSUPPORTED naming what is wrong.
void gemv(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream);

/// w [n, k] (gemv_supports) → out [n, k] F32 | BF16 | F16 (F32: bit-identical to dequantize_row).
void dequantize(const Tensor& w, const Tensor& out, const Stream& stream);

/// out F32 [num_ids, k] = rows ids[i] of w [n, k] (gemv_supports), decoded as dequantize() does;
/// ids [num_ids] in device memory, each in [0, n) (the caller checked). get_rows of a weight table.
void dequantize_rows(const Tensor& w, const int32_t* ids, int64_t num_ids, const Tensor& out,
                     const Stream& stream);

}  // namespace oxyd::backend::cuda
