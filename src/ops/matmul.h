// ops::matmul — the device-agnostic front end of y = x·wᵀ (a Linear without bias). Checks
// shapes, dtypes and devices once with clear errors, then dispatches to the backend of the
// tensors' device. Weight formats: see backend/cpu/matmul.h.
#pragma once

#include "core/tensor.h"

namespace oxyd::ops {

/// y [m, n] F32 = x [m, k] F32 · w [n, k]ᵀ. x and y may have leading dims that flatten to m.
/// Throws Error(INVALID_ARGUMENT) on a shape/dtype mismatch, Error(UNSUPPORTED) for a weight
/// dtype or device without a kernel.
void matmul(const Tensor& x, const Tensor& w, const Tensor& y);

/// Whether the CPU matmul would rather read `w` from a packed copy on this machine
/// (backend/cpu/matmul/pack.h): a 2-D Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL weight on AVX-512
/// VNNI without AMX, those and Q4_K / Q5_K / Q6_K / IQ4_XS on AVX2.
bool matmul_wants_packed(const Tensor& w);
/// Bytes of that copy, and writing it (w.packed then points at out, which the caller owns).
int64_t matmul_packed_bytes(const Tensor& w);
void matmul_pack(Tensor& w, uint8_t* out);
/// For a [rows, cols] weight of dtype t in CPU memory: the bytes its packed copy holds beyond its
/// rows as stored (padding to 16 rows, the layout's own overhead) where matmul_wants_packed would
/// pack it, else 0. Needs no data: for estimates from a file header.
int64_t matmul_packed_extra_bytes(DType t, int64_t rows, int64_t cols);

/// Host activation scratch of matmul (CPU backend; see backend/cpu/matmul.h): bytes one call of
/// x [m, k] against a `wtype` weight needs, bytes the calling thread holds, and an early reserve.
int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k);
int64_t matmul_scratch_held();
int64_t matmul_scratch_used();
void matmul_reserve_scratch(int64_t bytes);

}  // namespace oxyd::ops
