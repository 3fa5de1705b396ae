// CUDA matmul y = x · wᵀ for decode and batched steps, mirroring backend/reference/matmul.h:
// x F32 [m, k], w [n, k] in F16, BF16 or a GGUF block format (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K,
// MXFP4), y F32 [m, n]. gemv() (m ≤ kGemvMaxRows) reads each weight byte once. For Q8_0, Q4_0 and
// the K-quants it first quantizes x to int8 blocks of 32 (one float scale each, as the CPU
// backend's and llama.cpp's quantized kernels do) and takes exact integer dot products of the
// weights' small integers with them (dp4a; qdot.cuh, checked on the CPU by
// tests/cuda/qdot_host_test.cc): the result is the product with the quantized x̂ up to fp32
// rounding. F16, BF16 and MXFP4 decode to floats in registers (exact product with x). Either way a
// block of threads owns a few output columns and splits k among its threads with coalesced
// loads, each chunk's activations reused for all the block's rows. dequantize() decodes whole
// weights on the device, bit-identical to core's dequantize_row for F32 output.
// The batched path (m > kGemvMaxRows) is Gemm::matmul in gemm.h (gemv on 8 rows at a time, the
// tile-decoding tensor-core qgemm, or dequantize to BF16 + cuBLAS, by the row count).
#pragma once

#include "backend/cuda/device.h"
#include "backend/cuda/workspace.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

inline constexpr int64_t kGemvMaxRows = 8;

/// Whether gemv() / dequantize() take weights of dtype t.
bool gemv_supports(DType t);

/// x F32 [m, k] (m ≤ 8, rows contiguous, 16-byte aligned), w [n, k] (gemv_supports, 16-byte
/// aligned), y F32 [m, n] (must not alias x). k must be a multiple of the block size (32, 256) and
/// of 8. `ws` holds the quantized activations (integer formats), unless xq_ready is given: x as
/// quantize_activations() wrote it, already queued on `stream` (ws is then not touched). Queued on
/// `stream`. Throws INVALID_ARGUMENT / UNSUPPORTED naming what is wrong.
void gemv(const Tensor& x, const Tensor& w, const Tensor& y, Workspace& ws, const Stream& stream,
          const void* xq_ready = nullptr);

/// Whether gemv() takes weights of dtype t through the integer path (x quantized to int8).
bool gemv_is_integer(DType t);

/// The integer gemv's activations for x [m, k] (k % 32 == 0): m·k int8 values, then, from byte
/// quantized_x_offset(m, k), m·k/32 float scales; quantized_x_bytes in all.
size_t quantized_x_offset(int64_t m, int64_t k);
size_t quantized_x_bytes(int64_t m, int64_t k);
/// Quantizes x F32 [m, k] (device, rows contiguous) into xq (device, quantized_x_bytes(m, k)) by
/// qdot.cuh's x_scale / x_round, block by block. Queued on `stream`.
void quantize_activations(const Tensor& x, void* xq, const Stream& stream);

/// w [n, k] (gemv_supports) → out [n, k] F32 | BF16 | F16 (F32: bit-identical to dequantize_row).
void dequantize(const Tensor& w, const Tensor& out, const Stream& stream);

/// out F32 [num_ids, k] = rows ids[i] of w [n, k] (gemv_supports), decoded as dequantize() does;
/// ids [num_ids] in device memory, each in [0, n) (the caller checked). get_rows of a weight table.
void dequantize_rows(const Tensor& w, const int32_t* ids, int64_t num_ids, const Tensor& out,
                     const Stream& stream);

}  // namespace oxyd::backend::cuda
