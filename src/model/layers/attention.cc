// Self-attention block (see attention.h). Shapes: q [T, nh, hd], k/v [T, nkv, hd].
#include "model/layers/attention.h"

#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/attention.h"
#include "ops/elementwise.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"

namespace oxyd::model::layers {

void place_rope_table(RopeTable& t, Device d) {
  const std::vector<float>* parts[3] = {&t.inv_freq, &t.freq_factors, &t.short_inv_freq};
  Tensor* views[3] = {&t.inv, &t.factors, &t.short_inv};
  size_t total = 0;
  for (const std::vector<float>* v : parts) total += v->size();
  if (d != Device::CPU && total > 0) t.device_copy = ops::device_backend(d).allocate(total * sizeof(float));
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const std::vector<float>& v = *parts[i];
    const int64_t n = static_cast<int64_t>(v.size());
    if (n == 0) {
      *views[i] = Tensor{};
    } else if (d == Device::CPU) {
      *views[i] = Tensor(DType::F32, const_cast<float*>(v.data()), {n});
    } else {
      *views[i] = Tensor(DType::F32, t.device_copy.as<float>() + at, {n}, d);
      ops::copy_from_host(v.data(), *views[i]);
      at += v.size();
    }
  }
}

void self_attention(const LayerWeights& w, const AttentionSpec& s, const BatchMeta& meta,
                    const Tensor& k_cache, const Tensor& v_cache, KvFormat kv_format, const Tensor& h,
                    AttentionWorkspace& ws, const Tensor& out) {
  const int64_t T = h.dim(0), nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  ws.q.resize(T * nh * hd);
  ws.k.resize(T * nkv * hd);
  ws.v.resize(T * nkv * hd);
  ws.out.resize(T * nh * hd);
  auto view = [](const Workspace& w, std::initializer_list<int64_t> d) { return w.view(d); };
  Tensor q = view(ws.q, {T, nh, hd}), k = view(ws.k, {T, nkv, hd}), v = view(ws.v, {T, nkv, hd});
  Tensor q2 = view(ws.q, {T, nh * hd}), k2 = view(ws.k, {T, nkv * hd}), v2 = view(ws.v, {T, nkv * hd});

  // q, k and v in one call: a backend prepares h once for all three (ops::matmul_same_x).
  if (s.reuse_kv) ops::matmul(h, w.q, q2);
  else if (w.v.data) ops::matmul_same_x(h, {{&w.q, &q2}, {&w.k, &k2}, {&w.v, &v2}});
  else ops::matmul_same_x(h, {{&w.q, &q2}, {&w.k, &k2}});
  if (w.q_bias.data) ops::add(q2, w.q_bias, q2);
  const float eps = s.rms_norm_eps;
  const int64_t qn = s.qk_norm_full_width ? 1 : nh, kn = s.qk_norm_full_width ? 1 : nkv;  // norm groups per row
  if (w.q_norm.data)
    ops::rms_norm(view(ws.q, {T * qn, nh * hd / qn}), &w.q_norm, eps, view(ws.q, {T * qn, nh * hd / qn}));
  if (!s.reuse_kv) {
    if (w.k_bias.data) ops::add(k2, w.k_bias, k2);
    if (w.v.data) {
      if (w.v_bias.data) ops::add(v2, w.v_bias, v2);
    } else {
      ops::scale(k2, 1.0f, v2);  // no v projection (ArchSpec::v_from_k_when_absent): v = the raw k
    }
    if (w.k_norm.data)
      ops::rms_norm(view(ws.k, {T * kn, nkv * hd / kn}), &w.k_norm, eps, view(ws.k, {T * kn, nkv * hd / kn}));
    if (s.v_norm) ops::rms_norm(view(ws.v, {T * nkv, hd}), nullptr, eps, view(ws.v, {T * nkv, hd}));
  }
  if (s.clip_qkv > 0)
    for (const Tensor* t : {&q2, &k2, &v2})
      if (t == &q2 || !s.reuse_kv) ops::clamp(*t, s.clip_qkv, *t);

  if (s.rope) {  // none: absolute position embeddings (encoders)
    const RopeTable& rt = *s.rope;
    const Tensor& inv = rt.inv;
    const Tensor* ffp = rt.factors.data ? &rt.factors : nullptr;
    if (!rt.short_inv.data || meta.rope_lens.empty()) {
      ops::rope(q, meta.positions, inv, ffp, rt.style, rt.attention_factor, q);
      if (!s.reuse_kv) ops::rope(k, meta.positions, inv, ffp, rt.style, rt.attention_factor, k);
    } else {
      // Length-dependent tables: each run of requests on the same side of switch_len gets one table.
      const Tensor& short_inv = rt.short_inv;
      const int32_t* qsl = meta.host_query_start_loc.data();
      const int32_t* pos = meta.positions.ptr<int32_t>();  // device memory: only offset, never read
      const int64_t num_reqs = static_cast<int64_t>(meta.rope_lens.size());
      auto is_long = [&](int64_t r) { return meta.rope_lens[r] > rt.switch_len; };
      for (int64_t r = 0; r < num_reqs;) {
        int64_t e = r + 1;
        while (e < num_reqs && is_long(e) == is_long(r)) ++e;
        const int64_t t0 = qsl[r], n = qsl[e] - qsl[r];
        if (n > 0) {
          const Tensor qs(DType::F32, q.ptr<float>() + t0 * nh * hd, {n, nh, hd}, q.device);
          const Tensor ks(DType::F32, k.ptr<float>() + t0 * nkv * hd, {n, nkv, hd}, k.device);
          const Tensor ps(DType::I32, const_cast<int32_t*>(pos + t0), {n}, meta.positions.device);
          const Tensor& table = is_long(r) ? inv : short_inv;
          ops::rope(qs, ps, table, ffp, rt.style, rt.attention_factor, qs);
          if (!s.reuse_kv) ops::rope(ks, ps, table, ffp, rt.style, rt.attention_factor, ks);
        }
        r = e;
      }
    }
  }
  if (s.temperature_floor > 0) ops::attn_temperature(q, meta.positions, s.temperature_beta, s.temperature_floor, q);
  if (!s.reuse_kv) ops::reshape_and_cache(k, v, k_cache, v_cache, meta.slot_mapping, kv_format);

  backend::AttentionParams ap;
  ap.q = q;
  ap.k_cache = k_cache;
  ap.v_cache = v_cache;
  ap.query_start_loc = meta.query_start_loc;
  ap.seq_lens = meta.seq_lens;
  ap.block_table = meta.block_table;
  ap.out = view(ws.out, {T, nh, hd});
  ap.scale = s.scale;
  ap.sliding_window = s.sliding_window;
  ap.logit_softcap = s.logit_softcap;
  ap.kv_format = kv_format;
  ap.causal = meta.causal;
  ap.sinks = w.sinks;  // data == nullptr: none
  ops::paged_attention(ap);
  if (w.q_gate.data) {  // output gate: out · sigmoid(h·q_gateᵀ)
    ws.gate.resize(T * nh * hd);
    ops::matmul(h, w.q_gate, view(ws.gate, {T, nh * hd}));
    ops::glu(backend::Activation::SIGMOID, view(ws.gate, {T, nh * hd}), view(ws.out, {T, nh * hd}),
             view(ws.out, {T, nh * hd}));
  }
  ops::matmul(view(ws.out, {T, nh * hd}), w.o, out);
  if (w.o_bias.data) ops::add(out, w.o_bias, out);
}

}  // namespace oxyd::model::layers
