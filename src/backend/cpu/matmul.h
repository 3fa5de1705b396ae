// CPU matmul y = x·wᵀ for every weight format, and get_rows (embedding lookup) from any format.
// Kernels exist per ISA (scalar, AVX2, AVX-512); which one serves a weight is the table of
// backend/cpu/matmul/select.cc, for the best ISA this CPU supports, chosen once
// from CPUID (backend/cpu/isa.h), and tests/benches may force a lower one. Work is split over the global ThreadPool.
// Inputs are assumed valid (ops/matmul.h checks them); violations are caught by OXYD_CHECK.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// y[m, n] = x[m, k] · w[n, k]ᵀ. x, y F32; w any of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
/// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4. Rows contiguous. Quantized weights are
/// multiplied against activations quantized to 8 bits once per call (ggml's Q8_0 per 32, scale
/// rounded to f16; Q8_K per 256, f32 scale), so results differ from the exact product by about
/// 1/254 of Σ|x||w| per row at worst, and from llama.cpp's CPU path only by summation order.
/// BF16 weights meet activations rounded to bf16 (AVX-512), F16/F32 weights exact f32 ones.
/// y must not overlap x or w.
void matmul(const Tensor& x, const Tensor& w, const Tensor& y);

/// One list of a grouped matmul: w[g] is group g's weight ([n, k], any format matmul takes; every
/// group with rows must have the same dtype and n), y [N, n] F32 the list's output.
struct MatmulGroupList {
  const Tensor* const* w;
  Tensor y;
};
/// Grouped matmul (the experts of a MoE layer): for each list l and each group g,
/// y_l[r] = x[r] · w_l[g]ᵀ for the rows r in [offsets[g], offsets[g + 1]) of x [N, k]. Every row's
/// result equals that of matmul() on the group's rows alone (same kernel, same summation), but all
/// lists and groups share one preparation of x and one turn on the pool, where one matmul() per
/// group and list paid a pool dispatch each (a Qwen3-30B-A3B decode step made 576). Groups without
/// rows are skipped; their weights are never read.
void matmul_grouped(const Tensor& x, const int64_t* offsets, int64_t num_groups, const MatmulGroupList* lists,
                    int num_lists);

/// Bytes of activation scratch matmul() needs for x [m, k] against a `wtype` weight (0 when the
/// kernel reads x directly). The scratch is one buffer of the global pool's thread 0 (every model
/// on the pool shares it) that only grows, so it holds the largest figure of any call (or more,
/// after matmul_reserve_scratch).
int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k);
/// Bytes of activation scratch the pool holds now, and the most one call has used.
int64_t matmul_scratch_held();
int64_t matmul_scratch_used();
/// Grows the scratch to at least `bytes` now, so that later calls up to that size never
/// reallocate (growing call by call would leave one buffer per size seen on the way).
void matmul_reserve_scratch(int64_t bytes);

/// Tests and benches: false keeps matmul off the AMX tile kernels (the AVX-512 VNNI/FMA ones run
/// instead) until set back to true. Not for use while matmul runs on other threads.
void set_matmul_amx(bool allowed);
/// Tests and benches: false keeps batched matmuls of the 32-block formats on the row-dot VNNI
/// kernels instead of the 16-row panel kernel (matmul/block32_panel_avx512.cc), likewise.
void set_matmul_panel(bool allowed);

/// out[i, :] = table[ids[i], :] as f32, for every dtype matmul accepts. ids must be in range.
void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out);

}  // namespace oxyd::backend::cpu
