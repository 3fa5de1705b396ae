// Mixture-of-experts MLP of one decoder layer: router logits = h · W_routerᵀ (+ bias), routing
// (ops::moe_route: softmax / sigmoid, top-k, optional renormalisation, or gpt-oss's top-k then
// softmax), then every selected expert's gated MLP, summed with the routing weights.
// Batched: the T·k (token, expert) pairs are grouped by expert (ops::moe_group); each expert with
// any rows runs ONCE over its gathered rows (ops::moe_experts, any weight format), so decode reads
// only the selected experts' weights. Batch invariance: a row's expert output does not depend on the other
// rows of its group (the matmul kernels compute each row alone for a given weight), and each
// token sums its k contributions in its own rank order (ops::moe_combine), never in group order.
// A shared expert (w.shexp_down present: Qwen3.5-MoE style) runs on every token as a gated MLP;
// its output, scaled by sigmoid(h · shexp_gate_inpᵀ), is added after the routed sum.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/op_params.h"
#include "core/tensor.h"
#include "model/layers/mlp.h"
#include "model/weights.h"
#include "model/workspace.h"

namespace oxyd::model::layers {

struct MoeSpec {
  backend::RouterParams route;  // top_k, scoring, norm_topk_prob, softmax_after_topk
  backend::Activation act = backend::Activation::SILU;
  /// > 0: gpt-oss's clamped SwiGLU (ops::glu_oai with swiglu_alpha) instead of act.
  float swiglu_limit = 0.0f, swiglu_alpha = 1.702f;
};

/// Scratch of the MoE MLP; gate / up come from the MlpWorkspace (sized for T·k rows of I_moe).
struct MoeWorkspace {
  Workspace logits;        // [T, E] router logits
  Workspace ids, weights;  // [T, k] I32 (stored in F32 slots), [T, k] F32
  Workspace rows;          // [T, k] I32: where pair (t, j)'s expert output sits in ys
  Workspace xs, ys;        // [T·k, H] gathered inputs, expert outputs (grouped by expert)
  Workspace gather;        // [T·k] I32: the token of each grouped row
  Workspace offsets;       // [E + 1] I32: the first grouped row of each expert
  // With a shared expert, weights, rows and ys hold T more entries after the routed ones: the
  // sigmoid gates [T, 1], the rows T·k + t of ys [T, 1], and the shared outputs [T, H].
};

/// h [T, H] → out [T, H] (may alias h). w.router and w.experts must be present. The router reads
/// `router_in` [T, H] (h itself in the overload without it); w.expert_scale, when present,
/// multiplies each routing weight by its expert's scale after routing.
void moe_mlp(const LayerWeights& w, const MoeSpec& spec, const Tensor& router_in, const Tensor& h,
             MlpWorkspace& mlp_ws, MoeWorkspace& ws, const Tensor& out);
inline void moe_mlp(const LayerWeights& w, const MoeSpec& spec, const Tensor& h, MlpWorkspace& mlp_ws,
                    MoeWorkspace& ws, const Tensor& out) {
  moe_mlp(w, spec, h, h, mlp_ws, ws, out);
}

}  // namespace oxyd::model::layers
