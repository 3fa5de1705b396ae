// CPU matmul y = x·wᵀ for every weight format, and get_rows (embedding lookup) from any format.
// Kernels exist per ISA (scalar, AVX2, AVX-512); the best one this CPU supports is chosen once
// from CPUID, and tests/benches may force another. Work is split over the global ThreadPool.
// Inputs are assumed valid (ops/matmul.h checks them); violations are caught by OXYD_CHECK.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::backend::cpu {

enum class Isa { SCALAR, AVX2, AVX512 };

const char* isa_name(Isa isa);
/// Whether this CPU can run the kernels of `isa`.
bool isa_supported(Isa isa);
/// The best ISA this CPU supports (OXYD_CPU_ISA=scalar|avx2|avx512 caps it).
Isa best_isa();
/// The ISA matmul currently uses (best_isa() unless set_isa was called).
Isa active_isa();
/// Forces an ISA (tests, benches). Throws Error(UNSUPPORTED) if this CPU lacks it. Not
/// thread-safe with a running matmul.
void set_isa(Isa isa);

/// y[m, n] = x[m, k] · w[n, k]ᵀ. x, y F32; w any of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
/// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4. Rows contiguous. Quantized weights are
/// multiplied against activations quantized to 8 bits once per call (Q8_0-like per 32, Q8_K-like
/// per 256), so results differ from the exact product by ~1/254 of Σ|x||w| per row at worst.
/// BF16 weights meet activations rounded to bf16 (AVX-512), F16/F32 weights exact f32 ones.
/// y must not overlap x or w.
void matmul(const Tensor& x, const Tensor& w, const Tensor& y);

/// out[i, :] = table[ids[i], :] as f32, for every dtype matmul accepts. ids must be in range.
void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out);

}  // namespace oxyd::backend::cpu
