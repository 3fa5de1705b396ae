// Gated DeltaNet block (see gated_delta_net.h). Shapes: mixed / qkv [T, conv_dim], z [T, Hv·dv],
// a / b (then g / beta) [T, Hv], core [T, Hv, dv].
#include "model/layers/gated_delta_net.h"

#include "ops/activation.h"
#include "ops/gated_delta_net.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"

namespace oxyd::model::layers {

void gated_delta_net(const LayerWeights& w, const LinearAttentionSpec& s, const Tensor& query_start_loc,
                     const Tensor& state_slots, const Tensor& conv_state, const Tensor& state, const Tensor& h,
                     LinearAttentionWorkspace& ws, const Tensor& out) {
  const int64_t T = h.dim(0), C = s.conv_dim(), Hv = s.num_v_heads, dv = s.head_v_dim;
  for (Workspace* b : {&ws.mixed, &ws.qkv}) b->resize(T * C);
  ws.z.resize(T * Hv * dv);
  ws.core.resize(T * Hv * dv);
  ws.a.resize(T * Hv);
  ws.b.resize(T * Hv);
  const Tensor mixed = ws.mixed.view({T, C}), qkv = ws.qkv.view({T, C}), z = ws.z.view({T, Hv * dv});
  const Tensor a = ws.a.view({T, Hv}), b = ws.b.view({T, Hv});
  ops::matmul(h, w.lin_qkv, mixed);
  ops::matmul(h, w.lin_z, z);
  ops::matmul(h, w.lin_a, a);
  ops::matmul(h, w.lin_b, b);
  ops::causal_conv1d(mixed, w.lin_conv, conv_state, query_start_loc, state_slots, qkv);
  ops::gdn_gating(a, b, w.lin_A_log, w.lin_dt_bias, a, b);  // a := g, b := beta
  ops::gated_delta_rule(qkv, s.num_k_heads, a, b, state, query_start_loc, state_slots, ws.core.view({T, Hv, dv}));
  const Tensor heads = ws.core.view({T * Hv, dv});
  ops::rms_norm(heads, &w.lin_norm, s.rms_norm_eps, heads);
  ops::glu(backend::Activation::SILU, ws.z.view({T * Hv, dv}), heads, heads);
  ops::matmul(ws.core.view({T, Hv * dv}), w.lin_out, out);
}

}  // namespace oxyd::model::layers
