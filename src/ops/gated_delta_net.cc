// Gated DeltaNet op front ends (see gated_delta_net.h): every shape, slot and row range checked
// once here; the backends trust them.
#include "ops/gated_delta_net.h"

#include <string>
#include <vector>

#include "ops/check.h"
#include "ops/dispatch.h"

namespace oxyd::ops {
namespace {

using std::to_string;

// query_start_loc [R+1] non-decreasing from 0 to T; state_slots [R] distinct in [0, num_slots).
// Values are read only from host memory (as ops::paged_attention does with its metadata).
void check_requests(const char* op, const Tensor& qsl, const Tensor& slots, int64_t T, int64_t num_slots) {
  check::tensor(op, "query_start_loc", qsl, DType::I32, 1);
  check::tensor(op, "state_slots", slots, DType::I32, 1);
  const int64_t R = slots.dim(0);
  check::dim(op, "query_start_loc", qsl, 0, R + 1, "num_reqs + 1");
  if (qsl.device != Device::CPU || slots.device != Device::CPU) return;  // device memory: the backend's
  const int32_t* q = qsl.ptr<int32_t>();
  if (q[0] != 0 || q[R] != T) check::fail(op, "query_start_loc must run from 0 to num_tokens = " + to_string(T));
  for (int64_t r = 0; r < R; ++r)
    if (q[r + 1] < q[r]) check::fail(op, "query_start_loc must be non-decreasing");
  std::vector<bool> seen(static_cast<size_t>(num_slots));
  for (int64_t r = 0; r < R; ++r) {
    const int32_t s = slots.ptr<int32_t>()[r];
    if (s < 0 || s >= num_slots || seen[s])
      check::fail(op, "state slot " + to_string(s) + " of request " + to_string(r) +
                          " is outside [0, " + to_string(num_slots) + ") or used twice");
    seen[s] = true;
  }
}

}  // namespace

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y) {
  constexpr const char* op = "causal_conv1d";
  check::tensor(op, "x", x, DType::F32, 2);
  check::tensor(op, "y", y, DType::F32, 2);
  check::same_shape(op, "x", x, "y", y);
  if (x.data == y.data && x.numel() > 0) check::fail(op, "y must not alias x");
  check::tensor(op, "weight", weight, DType::F32, 2);
  check::dim(op, "weight", weight, 0, x.dim(1), "channels of x");
  const int64_t K = weight.dim(1);
  if (K < 2) check::fail(op, "kernel size must be ≥ 2, got " + to_string(K));
  check::tensor(op, "conv_state", conv_state, DType::F32, 3);
  check::dim(op, "conv_state", conv_state, 1, K - 1, "kernel size − 1");
  check::dim(op, "conv_state", conv_state, 2, x.dim(1), "channels of x");
  check_requests(op, query_start_loc, state_slots, x.dim(0), conv_state.dim(0));
  backend_for(op, {&x, &weight, &conv_state, &query_start_loc, &state_slots, &y})
      .causal_conv1d(x, weight, conv_state, query_start_loc, state_slots, y);
}

void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta) {
  constexpr const char* op = "gdn_gating";
  check::tensor(op, "a", a, DType::F32, 2);
  for (const auto& [name, t] : {std::pair{"b", &b}, std::pair{"g", &g}, std::pair{"beta", &beta}}) {
    check::tensor(op, name, *t, DType::F32, 2);
    check::same_shape(op, "a", a, name, *t);
  }
  check::tensor(op, "A_log", A_log, DType::F32, 1);
  check::dim(op, "A_log", A_log, 0, a.dim(1), "value heads of a");
  check::tensor(op, "dt_bias", dt_bias, DType::F32, 1);
  check::dim(op, "dt_bias", dt_bias, 0, a.dim(1), "value heads of a");
  backend_for(op, {&a, &b, &A_log, &dt_bias, &g, &beta}).gdn_gating(a, b, A_log, dt_bias, g, beta);
}

void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out) {
  constexpr const char* op = "gated_delta_rule";
  check::tensor(op, "qkv", qkv, DType::F32, 2);
  check::tensor(op, "out", out, DType::F32, 3);
  check::dim(op, "out", out, 0, qkv.dim(0), "num_tokens of qkv");
  const int64_t T = qkv.dim(0), Hv = out.dim(1), dv = out.dim(2);
  if (num_k_heads <= 0 || Hv % num_k_heads != 0)
    check::fail(op, "value heads (" + to_string(Hv) + ") must be a multiple of key heads (" + to_string(num_k_heads) + ")");
  const int64_t rest = qkv.dim(1) - Hv * dv;
  if (rest <= 0 || rest % (2 * num_k_heads) != 0)
    check::fail(op, "qkv width " + to_string(qkv.dim(1)) + " is not 2·Hk·dk + Hv·dv with Hk = " +
                        to_string(num_k_heads) + ", Hv·dv = " + to_string(Hv * dv));
  const int64_t dk = rest / (2 * num_k_heads);
  for (const auto& [name, t] : {std::pair{"g", &g}, std::pair{"beta", &beta}}) {
    check::tensor(op, name, *t, DType::F32, 2);
    check::dim(op, name, *t, 0, T, "num_tokens of qkv");
    check::dim(op, name, *t, 1, Hv, "value heads of out");
  }
  check::tensor(op, "state", state, DType::F32, 4);
  check::dim(op, "state", state, 1, Hv, "value heads of out");
  check::dim(op, "state", state, 2, dk, "key head dim");
  check::dim(op, "state", state, 3, dv, "value head dim of out");
  check_requests(op, query_start_loc, state_slots, T, state.dim(0));
  backend_for(op, {&qkv, &g, &beta, &state, &query_start_loc, &state_slots, &out})
      .gated_delta_rule(qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

}  // namespace oxyd::ops
