// GEMM through cuBLAS (cublasGemmEx, fp32 accumulation) and the batched matmul built on it.
// Gemm owns one cuBLAS handle and a scratch Workspace; use one per stream. Row-major y = x · wᵀ
// is the column-major product yᵀ = w · xᵀ, so no transposition is ever materialized.
// cuBLAS is loaded at the first use (gemm.cu), not linked. Built without cuBLAS (OXYD_CUDA_HAVE_CUBLAS
// unset), or where the library does not load, available() is false and calls throw.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cuda/device.h"
#include "backend/cuda/workspace.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// Rows up to which an integer-format weight goes through gemv() in chunks of 8 (its bytes read
/// once per chunk) rather than qgemm() (read once, but decoded to BF16 at ~8 instructions per
/// element, which bounds it below the bandwidth).
inline constexpr int64_t kChunkedGemvRows = 16;

class Gemm {
 public:
  /// Creates the cuBLAS handle (needs a GPU). Throws UNSUPPORTED without cuBLAS (unavailable_reason).
  Gemm();
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  /// Whether cuBLAS can be used: built with its headers and the library loads.
  static bool available();
  /// Why not ("" when available()); kNotBuilt for a build without cuBLAS's headers.
  static std::string unavailable_reason();
  static constexpr const char* kNotBuilt = "this build has no cuBLAS";

  /// x [m, k] and w [n, k] both F16 or both BF16; y [m, n] F32 or x's dtype. fp32 accumulation.
  void gemm(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream);

  /// x, w, y all F32 (F32 checkpoints and the tiny test models): full-fp32 cuBLAS GEMM.
  void gemm_f32(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream);
  /// x F32 [m, k], w [n, k] (F16, BF16 or a block format gemv() takes), y F32 [m, n].
  /// m ≤ kGemvMaxRows: gemv(). m ≤ kChunkedGemvRows with an integer-gemv format: gemv() on
  /// each 8 rows. m ≤ kQgemmMaxRows with a block format: qgemm() (qgemm.h). Otherwise x is
  /// converted to BF16 (or w's F16), quantized w is dequantized to BF16 in chunks of rows in the
  /// workspace, and each chunk goes through gemm().
  void matmul(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream);

  /// matmul() (gemm_f32() for F32 weights) of x with each pair's weight into its output; for
  /// m ≤ kGemvMaxRows x is quantized once for all the integer-format weights' gemvs.
  void matmul_same_x(const Tensor& x, const MatmulOut* outs, int count, const Stream& stream);

  /// Bytes of dequantized weight one chunk of matmul() may hold (default 256 MiB); for tests.
  void set_chunk_bytes(size_t bytes) { chunk_bytes_ = bytes; }

 private:
  void* handle_ = nullptr;  // cublasHandle_t
  Workspace x_ws_, w_ws_, y_ws_;
  size_t chunk_bytes_ = size_t(256) << 20;
};

}  // namespace oxyd::backend::cuda
