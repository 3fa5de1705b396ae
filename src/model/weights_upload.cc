// Weights::upload_to (see weights.h): the weights of a model that runs on another device than
// the CPU, copied once at load into one allocation of that device's backend. Host rows (mapped
// file pages, load-time copies) stay where they are; only the Tensors are rebound.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "model/weights.h"
#include "ops/dispatch.h"

namespace oxyd::model {
namespace {

constexpr size_t kAlign = 256;  // cudaMalloc's alignment, kept for every slice

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void Weights::upload_to(Device d) {
  std::vector<Tensor*> all{&embed,     &final_norm, &lm_head,    &ple_embed,      &ple_model_proj,
                           &ple_proj_norm, &rope_factors, &pos_embed, &type_embed, &embed_norm,
                           &embed_norm_bias, &cls_dense, &cls_dense_bias, &cls_out, &cls_out_bias};
  for (LayerWeights& L : layers) {
    for (Tensor* t : {&L.attn_norm, &L.q, &L.k, &L.v, &L.o, &L.q_bias, &L.k_bias, &L.v_bias, &L.o_bias, &L.sinks,
                      &L.q_norm, &L.k_norm, &L.post_attn_norm, &L.ffn_norm, &L.post_ffw_norm, &L.gate, &L.up,
                      &L.down, &L.router, &L.router_bias, &L.router_norm, &L.expert_scale, &L.post_ffw_norm_1,
                      &L.pre_ffw_norm_2, &L.post_ffw_norm_2, &L.ple_gate, &L.ple_proj, &L.ple_post_norm,
                      &L.shexp_gate, &L.shexp_up, &L.shexp_down, &L.shexp_gate_inp, &L.q_gate, &L.lin_qkv,
                      &L.lin_z, &L.lin_b, &L.lin_a, &L.lin_out, &L.lin_conv, &L.lin_A_log, &L.lin_dt_bias,
                      &L.lin_norm, &L.attn_norm_bias, &L.ffn_norm_bias, &L.up_bias, &L.down_bias})
      all.push_back(t);
    for (LayerWeights::Expert& x : L.experts)
      for (Tensor* t : {&x.gate, &x.up, &x.down, &x.gate_bias, &x.up_bias, &x.down_bias}) all.push_back(t);
  }
  // One slice per distinct (data, bytes): a tied head shares the embedding's.
  struct Key {
    const void* data;
    int64_t bytes;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<const void*>()(k.data) ^ size_t(k.bytes); }
  };
  std::unordered_map<Key, size_t, KeyHash> at;  // → offset of its slice
  size_t total = 0;
  for (const Tensor* t : all)
    if (t->data && t->nbytes() > 0 && at.emplace(Key{t->data, t->nbytes()}, total).second)
      total += aligned(size_t(t->nbytes()));
  backend::Backend& be = ops::device_backend(d, "Weights::upload_to");
  for (const Tensor* t : all)  // before any byte moves: a format the device cannot run fails the load
    if (t->data && !be.has_weight_kernel(t->dtype))
      throw Error(ErrorCode::UNSUPPORTED, std::string(backend::device_name(d)) + " has no kernel for " +
                                              std::string(dtype_name(t->dtype)) + " weights (a " + t->shape_str() +
                                              " tensor of this model)");
  device_copy_ = be.allocate(total);
  auto* base = static_cast<uint8_t*>(device_copy_.data());
  for (Tensor* t : all) {
    if (t->data && t->nbytes() > 0) {
      const size_t off = at.at(Key{t->data, t->nbytes()});
      Tensor dst = *t;
      dst.data = base + off;
      dst.device = d;
      be.copy_from_host(t->data, dst);  // again for a shared slice: the same bytes, once per alias
      t->data = dst.data;
    }
    t->device = d;
  }
}

}  // namespace oxyd::model
