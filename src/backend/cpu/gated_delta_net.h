// CPU Gated DeltaNet ops: same contracts as backend/reference/gated_delta_net.h, in float32.
// gated_delta_rule runs each request's tokens in the chunked (parallel, UT-transform) form when it
// has at least kGdnChunkMinTokens of them and in the recurrent form otherwise; both forms are
// exposed for the tests that hold them to transformers' torch functions and each other. The
// chunked form is not chosen yet: with plain loops it measured 0.94 ms/token against 0.23 for the
// recurrent one (one layer at Qwen3.5-9B shapes, Hv 32, dk = dv = 128, 512 tokens, AVX-512, 2
// shared cores); it pays only once its products are blocked into matmuls.
// Threaded over (request, value head) pairs; each pair owns its state slice.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// Chunk length of the chunked form (transformers' and llama.cpp's 64).
inline constexpr int64_t kGdnChunk = 64;
/// Requests with fewer new tokens than this take the recurrent form (for now: all, see above).
inline constexpr int64_t kGdnChunkMinTokens = int64_t{1} << 40;

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y);
void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta);
void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out);

/// The two forms, every request in the one form (tests).
void gated_delta_rule_recurrent(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                                const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                                const Tensor& out);
void gated_delta_rule_chunked(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                              const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                              const Tensor& out);

}  // namespace oxyd::backend::cpu
