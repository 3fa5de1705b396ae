// CPU Gated DeltaNet ops (see gated_delta_net.h): the per-request / per-head dispatch and the
// scalar copy of gated_delta_net_impl.h. Shapes: qkv [T, 2·Hk·dk + Hv·dv], g / beta [T, Hv], state
// [num_slots, Hv, dk, dv], out [T, Hv, dv]. Scratch is per pool thread.
#define OXYD_ISA_SCALAR
#include "backend/cpu/gated_delta_net_impl.h"

#include "backend/cpu/dispatch.h"
#include "backend/cpu/scratch_slots.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
#define OXYD_DECL                                                                                          \
  void gdn_head(bool, const Tensor&, int64_t, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, \
                int64_t, float*);                                                                          \
  void conv_rows(const float*, const float*, int64_t, int64_t, int64_t, float*)
namespace simd_avx2 { OXYD_DECL; }
namespace simd_avx512 { OXYD_DECL; }
#undef OXYD_DECL

namespace {

enum class Form { AUTO, RECURRENT, CHUNKED };

void run(Form form, const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta, const Tensor& state,
         const Tensor& query_start_loc, const Tensor& state_slots, const Tensor& out) {
  const auto head = pick(simd_scalar::gdn_head, simd_avx2::gdn_head, simd_avx512::gdn_head);
  const int64_t Hv = out.dim(1), dv = out.dim(2), dk = (qkv.dim(1) - Hv * dv) / (2 * num_k_heads);
  const int64_t R = state_slots.dim(0);
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  const int32_t* slots = state_slots.ptr<int32_t>();
  parallel_for(R * Hv, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t r = p / Hv, h = p % Hv, t0 = qsl[r], t1 = qsl[r + 1];
      float* S = state.ptr<float>() + (int64_t(slots[r]) * Hv + h) * dk * dv;
      const bool chunked = form == Form::CHUNKED || (form == Form::AUTO && t1 - t0 >= kGdnChunkMinTokens);
      head(chunked, qkv, num_k_heads, g, beta, out, h, t0, t1, S);
    }
  });
}

}  // namespace

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y) {
  const auto rows = pick(simd_scalar::conv_rows, simd_avx2::conv_rows, simd_avx512::conv_rows);
  const int64_t C = x.dim(1), K = weight.dim(1), R = state_slots.dim(0);
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  parallel_for(R, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t0 = qsl[r], n = qsl[r + 1] - qsl[r];
      float* st = conv_state.ptr<float>() + int64_t(state_slots.ptr<int32_t>()[r]) * (K - 1) * C;
      // the window [state | tokens] as rows of C, then one output row per token
      float* win = this_thread_scratch().get_as<float>(kConvWindowSlot, size_t((K - 1 + n) * C));
      std::copy_n(st, (K - 1) * C, win);
      std::copy_n(x.ptr<float>() + t0 * C, n * C, win + (K - 1) * C);
      rows(win, weight.ptr<float>(), K, C, n, y.ptr<float>() + t0 * C);
      std::copy_n(win + n * C, (K - 1) * C, st);
    }
  });
}

void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta) {
  const int64_t n = a.numel(), H = a.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t h = i % H;
    const float av = a.ptr<float>()[i] + dt_bias.ptr<float>()[h];
    const float sp = av > 20.0f ? av : std::log1p(std::exp(av));
    const float bv = b.ptr<float>()[i];
    g.ptr<float>()[i] = -std::exp(A_log.ptr<float>()[h]) * sp;
    beta.ptr<float>()[i] = 1.0f / (1.0f + std::exp(-bv));
  }
}

void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out) {
  run(Form::AUTO, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

void gated_delta_rule_recurrent(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                                const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                                const Tensor& out) {
  run(Form::RECURRENT, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

void gated_delta_rule_chunked(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                              const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                              const Tensor& out) {
  run(Form::CHUNKED, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

}  // namespace oxyd::backend::cpu
