// CPU Gated DeltaNet ops: same contracts as backend/reference/gated_delta_net.h, in float32.
// gated_delta_rule runs each request's tokens in the chunked (parallel, UT-transform) form when it
// has at least kGdnChunkMinTokens of them (prefill) and in the recurrent form otherwise (decode);
// both forms are exposed for the tests that hold them to transformers' torch functions and each
// other. The chunked form's products are register-tiled gemms; at Qwen3.5-0.8B's shapes (16 heads,
// dk = dv = 128, 512 tokens, 2 threads, bench/ops_bench) it runs 1.04-1.05× the recurrent form's
// speed with AVX-512 and 1.3× with AVX2 (with plain loops it ran 0.25×).
// Threaded over (request, value head) pairs; each pair owns its state slice.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// Chunk length of the chunked form. transformers and llama.cpp use 64; 32 measured faster here (the
/// products that grow with the chunk, K Kᵀ, the substitution and M V', cost half as much).
inline constexpr int64_t kGdnChunk = 32;
/// Requests with fewer new tokens than this take the recurrent form.
inline constexpr int64_t kGdnChunkMinTokens = kGdnChunk;

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
