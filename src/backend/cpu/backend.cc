// The CPU backend (see backend.h): every virtual forwards to the backend::cpu function of the
// same name and signature.
#include "backend/cpu/backend.h"

#include <cstring>

#include "backend/cpu/activation.h"
#include "backend/cpu/attention.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/gated_delta_net.h"
#include "backend/cpu/layer_norm.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/pack.h"
#include "backend/cpu/moe.h"
#include "backend/cpu/rms_norm.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/softmax.h"

namespace oxyd::backend::cpu {
namespace {

// F32 and BF16 weights pack only in whole 16-row groups: a padded group would cost memory that hub's estimate
// does not count for them (small routers and experts of tiny MoE models), for no speed that matters.
bool packs_shape(DType t, int64_t rows, int64_t cols) {
  const bool is_float = t == DType::F32 || t == DType::BF16;
  return cols % 32 == 0 && rows > 0 && (!is_float || rows % 16 == 0) && matmul_packs(t);
}

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::CPU; }
  std::string_view name() const override { return "cpu"; }

  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override { cpu::matmul(x, w, y); }
  void get_rows(const Tensor& table, const Tensor& ids, const Tensor& out) override {
    cpu::get_rows(table, ids.ptr<int32_t>(), ids.numel(), out);
  }
  void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) override {
    cpu::rms_norm(x, weight, eps, y);
  }
  void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps, const Tensor& y) override {
    cpu::layer_norm(x, weight, bias, eps, y);
  }
  void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, const Tensor* freq_factors,
            RopeStyle style, float attention_factor, const Tensor& y) override {
    cpu::rope(x, positions, inv_freq, freq_factors, style, attention_factor, y);
  }
  void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale,
                        const Tensor& y) override {
    cpu::attn_temperature(x, positions, beta, floor_scale, y);
  }
  void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                     const Tensor& state_slots, const Tensor& y) override {
    cpu::causal_conv1d(x, weight, conv_state, query_start_loc, state_slots, y);
  }
  void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                  const Tensor& beta) override {
    cpu::gdn_gating(a, b, A_log, dt_bias, g, beta);
  }
  void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                        const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                        const Tensor& out) override {
    cpu::gated_delta_rule(qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
  }
  void softmax(const Tensor& x, float scale, const Tensor& y) override { cpu::softmax(x, scale, y); }
  void activation(Activation act, const Tensor& x, const Tensor& y) override { cpu::activation(act, x, y); }
  void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) override {
    cpu::glu(act, gate, up, y);
  }
  void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) override { cpu::glu_fused(act, gate_up, y); }
  void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) override {
    cpu::glu_oai(gate, up, alpha, limit, y);
  }
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override { cpu::add(a, b, y); }
  void mul(const Tensor& a, const Tensor& b, const Tensor& y) override { cpu::mul(a, b, y); }
  void scale(const Tensor& x, float s, const Tensor& y) override { cpu::scale(x, s, y); }
  void softcap(const Tensor& x, float cap, const Tensor& y) override { cpu::softcap(x, cap, y); }
  void copy_to_host(const Tensor& src, void* dst) override {
    if (src.nbytes() > 0) std::memcpy(dst, src.data, size_t(src.nbytes()));
  }
  void copy_from_host(const void* src, const Tensor& dst) override {
    if (dst.nbytes() > 0 && src != dst.data) std::memcpy(dst.data, src, size_t(dst.nbytes()));
  }
  void clamp(const Tensor& x, float limit, const Tensor& y) override { cpu::clamp(x, limit, y); }
  void paged_attention(const AttentionParams& p) override { cpu::paged_attention(p); }
  void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache, const Tensor& v_cache,
                         const Tensor& slot_mapping, KvFormat kv_format) override {
    cpu::reshape_and_cache(key, value, k_cache, v_cache, slot_mapping, kv_format);
  }
  void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) override {
    cpu::moe_route(logits, p, ids, weights);
  }
  void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) override {
    cpu::moe_combine(expert_out, rows, weights, y);
  }
  void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows) override {
    cpu::moe_group(ids, offsets, gather, rows);
  }
  void moe_experts(const MoeExpertsParams& p) override { cpu::moe_experts(p); }
  void zero(const Tensor& y) override {
    if (y.nbytes() > 0) std::memset(y.data, 0, size_t(y.nbytes()));
  }

  bool has_weight_kernel(DType t) const override { return decodable(t); }
  int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k) const override {
    return decodable(wtype) ? cpu::matmul_scratch_bytes(wtype, m, k) : 0;
  }
  int64_t matmul_scratch_held() const override { return cpu::matmul_scratch_held(); }
  int64_t matmul_scratch_used() const override { return cpu::matmul_scratch_used(); }
  void matmul_reserve_scratch(int64_t bytes) override { cpu::matmul_reserve_scratch(bytes); }

  bool wants_packed(const Tensor& w) const override {
    return w.device == Device::CPU && w.ndim == 2 && w.data && packs_shape(w.dtype, w.rows(), w.cols());
  }
  int64_t packed_bytes(const Tensor& w) const override { return matmul_packed_bytes(w.dtype, w.rows(), w.cols()); }
  uint8_t pack(const Tensor& w, uint8_t* out) const override {
    const PackLayout l = matmul_pack_layout(w.dtype);
    matmul_pack(w, l, out);
    return uint8_t(l);
  }
  int64_t packed_extra_bytes(DType t, int64_t rows, int64_t cols) const override {
    if (!packs_shape(t, rows, cols)) return 0;
    return matmul_packed_bytes(t, rows, cols) - rows * dtype_row_bytes(t, cols);
  }

 protected:
  void* raw_allocate(size_t bytes, void** handle) override {
    auto* b = new Buffer(bytes);
    *handle = b;
    return b->data();
  }
  void raw_release(void*, void* handle, size_t) noexcept override { delete static_cast<Buffer*>(handle); }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend b;
  static const bool registered = [] {
    register_backend(b);
    return true;
  }();
  (void)registered;
  return b;
}

}  // namespace oxyd::backend::cpu
