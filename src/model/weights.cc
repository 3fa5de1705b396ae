// Binding checkpoint tensors to LayerWeights, with the load-time fix-ups of weights.h.
#include "model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"
#include "loader/gguf.h"
#include "loader/model_validate.h"
#include "loader/quant_checkpoint.h"
#include "loader/safetensors.h"
#include "model/experts_layout.h"
#include "model/linear_attn_layout.h"
#include "model/archs/registry.h"
#include "ops/dispatch.h"

namespace oxyd::model {

struct Weights::Impl {
  std::optional<loader::GgufFile> gguf;
  std::optional<loader::SafetensorsFile> st;
  std::vector<Buffer> owned;   // converted 1-D tensors (F32 norms / biases)
  std::vector<Buffer> packed;  // the backend's prepared copies of 2-D weights (Backend::prepare)
  std::vector<backend::PreparedHandle> prepared;  // their registrations (die before the bytes)
  std::string path;

  std::unordered_map<std::string, Tensor> rewritten;  // checkpoint tensors in another layout, by name
  // Buffers of the FP8 / AWQ / GPTQ linears repacked at load, and of HF MXFP4 experts rewritten
  // into GGUF's blocks [begin, end): owned, so that packing a copy would hold two; the backend
  // packs them in place instead (pack_for_matmul), where its layout has the rows' size.
  std::vector<std::pair<uintptr_t, uintptr_t>> repacked;
  std::vector<Buffer> transient;  // rewritten tensors that binding copies again (split biases): freed after load
  const std::vector<std::pair<std::string, std::string>>* prefix_fallbacks = nullptr;  // ArchSpec's (HF)

  // The name `n` has in this file ("{}" = layer, "{e}" = expert): as declared, or the first of its
  // HF prefix fallbacks the checkpoint holds (the declared one when none is there).
  std::string name_of(const TensorName& n, int64_t layer, int64_t expert = -1) const {
    const std::string& raw = gguf ? n.gguf : n.hf;
    if (raw.empty()) return raw;
    std::string name = tensor_name(raw, layer, expert);
    if (gguf || !prefix_fallbacks || st->find_tensor(name) || rewritten.count(name)) return name;
    for (const auto& [from, to] : *prefix_fallbacks)
      if (name.starts_with(from))
        if (std::string alt = to + name.substr(from.size()); st->find_tensor(alt)) return alt;
    return name;
  }

  // The tensor named `name` ("{}" = layer, "{e}" = expert), or an absent Tensor.
  Tensor find(const TensorName& n, int64_t layer, int64_t expert = -1) const {
    const std::string name = name_of(n, layer, expert);
    if (name.empty()) return {};
    if (auto it = rewritten.find(name); it != rewritten.end()) return it->second;
    if (gguf) {
      const auto* t = gguf->find_tensor(name);
      return t ? gguf->view(*t) : Tensor{};
    }
    const auto* t = st->find_tensor(name);
    return t ? st->view(*t) : Tensor{};
  }

  std::string describe(const TensorName& n, int64_t layer, int64_t expert = -1) const {
    return path + ": tensor '" + name_of(n, layer, expert) + "'";
  }

  Tensor required(const TensorName& n, int64_t layer, int64_t expert = -1) const {
    Tensor t = find(n, layer, expert);
    if (!t.data) throw Error(ErrorCode::INVALID_ARGUMENT, describe(n, layer, expert) + " is missing");
    return t;
  }

  // A 1-D tensor as F32 [n] owned here, plus `add` to every element (Gemma's 1 + w).
  Tensor vector_f32(const Tensor& t, int64_t n, float add, const std::string& what) {
    if (!t.data) return {};
    if (t.numel() != n)
      throw Error(ErrorCode::INVALID_ARGUMENT, what + " has " + std::to_string(t.numel()) +
                                                   " elements, expected " + std::to_string(n));
    if (!can_dequantize(t.dtype))
      throw Error(ErrorCode::UNSUPPORTED, what + ": dtype " + std::string(dtype_name(t.dtype)) +
                                              " cannot be read as a vector");
    Buffer b(sizeof(float) * n);
    dequantize_row(t.dtype, t.data, b.as<float>(), n);
    if (add != 0.0f)
      for (int64_t i = 0; i < n; ++i) b.as<float>()[i] += add;
    Tensor out(DType::F32, b.data(), {n});
    owned.push_back(std::move(b));
    return out;
  }

  // ArchSpec::hf_experts_input_major: each layer's fused experts (dequantized or MXFP4) rewritten
  // into the stacked layout under their own names, the interleaved gate_up bias split in two.
  void rewrite_input_major_experts(const loader::ModelConfig& c, const TensorNames& n) {
    const int64_t E = c.num_experts, I = c.moe_intermediate_size, H = c.hidden_size;
    auto raw = [&](const std::string& name) {
      const auto* t = st->find_tensor(name);
      return t ? st->view(*t) : Tensor{};
    };
    auto expect = [&](const Tensor& t, const std::vector<int64_t>& dims, const std::string& name) {
      bool ok = t.ndim == int(dims.size());
      for (size_t i = 0; ok && i < dims.size(); ++i) ok = t.dim(int(i)) == dims[i];
      std::string want = "[";
      for (size_t i = 0; i < dims.size(); ++i) want += (i ? ", " : "") + std::to_string(dims[i]);
      if (!ok) throw Error(ErrorCode::INVALID_ARGUMENT, path + ": tensor '" + name + "' has shape " + t.shape_str() +
                                                            ", expected " + want + "]");
    };
    auto own = [&](DType dt, std::initializer_list<int64_t> dims) {
      Tensor t(dt, nullptr, dims);
      Buffer b(static_cast<size_t>(t.nbytes()));
      t.data = b.data();
      owned.push_back(std::move(b));
      return t;
    };
    // gate_up [E, H, 2I] → [E, 2I, H]; down [E, I, H] → [E, H, I]; or their MXFP4 blocks.
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      for (const bool is_gate_up : {true, false}) {
        const std::string name = tensor_name(is_gate_up ? n.expert_gate_up.hf : n.expert_down_stacked.hf, l);
        const int64_t rows = is_gate_up ? 2 * I : H, cols = is_gate_up ? H : I;  // of the rewritten [E, rows, cols]
        if (const Tensor t = raw(name); t.data) {
          expect(t, {E, cols, rows}, name);
          // F16 / BF16 experts stay in their dtype (the rewrite only moves values: exact), as the
          // estimate counts them and at half the bytes of F32.
          const bool half = t.dtype == DType::F16 || t.dtype == DType::BF16;
          Tensor o = own(half ? t.dtype : DType::F32, {E, rows, cols});
          std::vector<float> f32(half ? size_t(o.numel()) : 0);
          float* dst = half ? f32.data() : o.ptr<float>();
          if (is_gate_up) experts_gate_up_from_input_major(t, dst);
          else experts_down_from_input_major(t, dst);
          if (half) quantize_row(o.dtype, dst, o.data, o.numel());
          rewritten[name] = o;
        } else if (const Tensor b = raw(name + "_blocks"), s = raw(name + "_scales"); b.data && s.data) {
          if (cols % 32) throw Error(ErrorCode::INVALID_ARGUMENT, path + ": '" + name + "_blocks' rows of " +
                                                                      std::to_string(cols) + " are not whole MXFP4 blocks");
          expect(b, {E, rows, cols / 32, 16}, name + "_blocks");
          expect(s, {E, rows, cols / 32}, name + "_scales");
          Tensor o = own(DType::MXFP4, {E, rows, cols});
          if (is_gate_up) experts_gate_up_from_mxfp4(b, s, o.data);
          else experts_down_from_mxfp4(b, s, o.data);
          st->release(b.data, size_t(b.nbytes()));  // read once: their file pages go back
          st->release(s.data, size_t(s.nbytes()));
          const auto at = reinterpret_cast<uintptr_t>(o.data);
          repacked.emplace_back(at, at + uintptr_t(o.nbytes()));
          rewritten[name] = o;
        }
      }
      const std::string bias = tensor_name(n.expert_gate_up.hf, l) + "_bias";
      if (const Tensor b = raw(bias); b.data) {
        expect(b, {E, 2 * I}, bias);
        // vector_f32 copies them when binding: kept only until then.
        Buffer gb(sizeof(float) * size_t(E * I)), ub(sizeof(float) * size_t(E * I));
        Tensor g(DType::F32, gb.data(), {E, I}), u(DType::F32, ub.data(), {E, I});
        transient.push_back(std::move(gb)), transient.push_back(std::move(ub));
        experts_bias_split(b, g.ptr<float>(), u.ptr<float>());
        rewritten[tensor_name(n.expert_gate_bias.hf, l)] = g;
        rewritten[tensor_name(n.expert_up_bias.hf, l)] = u;
      }
    }
    std::sort(repacked.begin(), repacked.end());
  }

  // The checkpoint's quantized linears (loader/quant_checkpoint.h) repacked once, each bound
  // under its plain "<m>.weight" name (stacked int4 experts: their fused name); the file pages
  // they came from are released.
  void repack_quantized(const loader::ModelConfig& c) {
    auto view = [&](const std::string& name) {
      const auto* t = st->find_tensor(name);
      return t ? st->view(*t) : Tensor{};
    };
    for (const loader::QuantizedLinear& q : loader::quantized_linears(c, loader::tensor_descs(st->tensors()))) {
      const std::vector<int64_t> dims = q.shape();
      Tensor o(q.repacked, nullptr, {1});
      o.ndim = int(dims.size());
      for (size_t i = 0; i < dims.size(); ++i) o.shape[i] = dims[i];
      Buffer b(static_cast<size_t>(o.nbytes()));
      o.data = b.data();
      loader::repack_quantized_linear(c, q, view, b.data());
      for (const std::string& src : q.sources)
        if (const Tensor t = view(src); t.data) st->release(t.data, size_t(t.nbytes()));
      repacked.emplace_back(reinterpret_cast<uintptr_t>(b.data()), reinterpret_cast<uintptr_t>(b.data()) + b.size());
      owned.push_back(std::move(b));
      rewritten[q.bound_name()] = o;
    }
    std::sort(repacked.begin(), repacked.end());
  }

  // Whether t's data lies in a repacked buffer (`repacked` sorted first: an MoE has ~10^4).
  bool is_repacked(const Tensor& t) const {
    const auto p = reinterpret_cast<uintptr_t>(t.data);
    auto it = std::upper_bound(repacked.begin(), repacked.end(), std::pair{p, ~uintptr_t(0)});
    return it != repacked.begin() && p < std::prev(it)->second;
  }

  // GGUF Gated DeltaNet layers in the HF layout, under their GGUF names: llama.cpp stores
  // ssm_a = −exp(A_log), and with `tiled` the value heads in its tiled order (linear_attn_layout.h).
  void rewrite_gguf_linear(const loader::ModelConfig& c, const TensorNames& n, bool tiled) {
    const int64_t hk = c.linear_num_key_heads, hv = c.linear_num_value_heads, dv = c.linear_value_head_dim;
    const int64_t qk_rows = 2 * hk * c.linear_key_head_dim;
    tiled = tiled && hk > 0 && hv != hk;
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      if (c.layer_types[l] != loader::kLinearAttention) continue;
      auto own = [&](const Tensor& like, DType dt) {
        Tensor o = like;
        o.dtype = dt;
        Buffer b(static_cast<size_t>(o.nbytes()));
        o.data = b.data();
        owned.push_back(std::move(b));
        return o;
      };
      auto vec = [&](const TensorName& tn) {  // F32 copy, in the HF head order
        const Tensor t = required(tn, l);
        if (t.numel() != hv)
          throw Error(ErrorCode::INVALID_ARGUMENT, describe(tn, l) + " has " + std::to_string(t.numel()) +
                                                       " elements, expected " + std::to_string(hv));
        std::vector<float> v(static_cast<size_t>(hv));
        dequantize_row(t.dtype, t.data, v.data(), hv);
        Buffer b(sizeof(float) * size_t(hv));
        Tensor o(DType::F32, b.data(), {hv});
        if (tiled) vec_from_tiled(v.data(), 1, hk, hv, o.ptr<float>());
        else std::memcpy(o.data, v.data(), b.size());
        transient.push_back(std::move(b));
        rewritten[name_of(tn, l)] = o;
        return o;
      };
      const Tensor a = vec(n.lin_A_log);
      for (int64_t h = 0; h < hv; ++h) a.ptr<float>()[h] = std::log(-a.ptr<float>()[h]);
      if (!tiled) continue;
      vec(n.lin_dt_bias);
      auto rows = [&](const TensorName& tn, int64_t first, int64_t per_head, bool kept = true) {
        const Tensor t = required(tn, l);
        if (t.ndim != 2 || t.dim(0) != first + hv * per_head)
          throw Error(ErrorCode::INVALID_ARGUMENT, describe(tn, l) + " has shape " + t.shape_str() + ", expected " +
                                                       std::to_string(first + hv * per_head) + " rows");
        const Tensor o = own(t, t.dtype);
        if (!kept) transient.push_back(std::move(owned.back())), owned.pop_back();
        rows_from_tiled(t, first, per_head, hk, hv, o.data);
        gguf->release(t.data, size_t(t.nbytes()));  // the file's pages are not read again
        rewritten[name_of(tn, l)] = o;
      };
      rows(n.lin_qkv, qk_rows, dv);
      rows(n.lin_z, 0, dv);
      rows(n.lin_a, 0, 1);
      rows(n.lin_b, 0, 1);
      rows(n.lin_conv, qk_rows, dv, false);  // [conv_dim, K]: dv channels a value head; bound as an F32 copy
      const Tensor t = required(n.lin_out, l);
      const Tensor o = own(t, cols_from_tiled_dtype(t, dv));
      cols_from_tiled(t, dv, hk, hv, o.data);
      gguf->release(t.data, size_t(t.nbytes()));
      rewritten[name_of(n.lin_out, l)] = o;
    }
  }
  // Weights::load's steps, in order (weights.cc, below): each binds one group of w's tensors.
  void open(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec);
  void bind_globals(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec, float norm_add);
  void bind_layer_vectors(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec, float norm_add);
  void bind_moe_vectors(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec, float norm_add);
  void bind_matmul_weights(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec);
  bool exists(const TensorName& tn, int64_t l) const { return find(tn, l).data != nullptr; }
};

namespace {

// A [rows, cols] matrix, or with experts > 0 a stacked [experts, rows / experts, cols] one.
void check_matrix(const Tensor& t, int64_t rows, int64_t cols, const std::string& what, int64_t experts = 0) {
  const bool ok = experts > 0 ? t.ndim == 3 && t.dim(0) == experts && t.dim(0) * t.dim(1) == rows && t.dim(2) == cols
                              : t.ndim == 2 && t.dim(0) == rows && t.dim(1) == cols;
  if (!ok) {
    const std::string want = experts > 0 ? std::to_string(experts) + ", " + std::to_string(rows / experts) + ", "
                                         : std::to_string(rows) + ", ";
    throw Error(ErrorCode::INVALID_ARGUMENT,
                what + " has shape " + t.shape_str() + ", expected [" + want + std::to_string(cols) + "]");
  }
}

// Rows [begin, begin + n) of a 2-D weight, or of a stacked 3-D one read as [rows, cols], as a 2-D
// view (whole rows are addressable in every format).
Tensor row_slice(const Tensor& t, int64_t begin, int64_t n) {
  Tensor v = t;
  v.data = t.row(begin);
  v.ndim = 2;
  v.shape = {n, t.cols(), 0, 0};
  return v;
}

bool per_expert(const TensorName& n, bool gguf) {
  return (gguf ? n.gguf : n.hf).find("{e}") != std::string::npos;
}

bool is_gguf_path(const std::string& path) {
  namespace fs = std::filesystem;
  return !fs::is_directory(path) && fs::path(path).extension() == ".gguf";
}

}  // namespace

Weights::~Weights() = default;

int64_t Weights::mapped_bytes() const {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;  // [begin, end) of every 2-D weight
  // Load-time rewrites (ArchSpec::hf_experts_input_major) live in owned buffers, counted there.
  std::vector<std::pair<uintptr_t, uintptr_t>> owned;
  for (const Buffer& b : impl_->owned)
    owned.emplace_back(reinterpret_cast<uintptr_t>(b.data()), reinterpret_cast<uintptr_t>(b.data()) + b.size());
  std::sort(owned.begin(), owned.end());
  auto in_owned = [&](uintptr_t p) {
    auto it = std::upper_bound(owned.begin(), owned.end(), std::pair{p, ~uintptr_t(0)});
    return it != owned.begin() && p < std::prev(it)->second;
  };
  auto add = [&](const Tensor& t) {
    if (!t.data) return;
    const auto b = reinterpret_cast<uintptr_t>(t.data);
    if (in_owned(b)) return;
    // A weight with a prepared copy had its file pages released.
    if (!ops::device_backend(t.device).prepared(t)) ranges.emplace_back(b, b + uintptr_t(t.nbytes()));
  };
  add(embed);
  add(lm_head);
  add(ple_embed);
  add(ple_model_proj);
  for (const LayerWeights& L : layers) {
    for (const Tensor* t : {&L.q, &L.k, &L.v, &L.o, &L.gate, &L.up, &L.down, &L.router, &L.lin_qkv, &L.lin_z,
                            &L.lin_b, &L.lin_a, &L.lin_out, &L.ple_gate, &L.ple_proj, &L.shexp_gate, &L.shexp_up,
                      &L.shexp_down})
      if (!(t == &L.q && L.q_gate.data)) add(*t);  // q with an output gate: rows of an owned copy
    for (const LayerWeights::Expert& x : L.experts)
      for (const Tensor* t : {&x.gate, &x.up, &x.down}) add(*t);
  }
  std::sort(ranges.begin(), ranges.end());
  int64_t total = 0;
  uintptr_t end = 0;
  for (const auto& [b, e] : ranges) {
    const uintptr_t from = std::max(b, end);
    if (e > from) total += int64_t(e - from);
    end = std::max(end, e);
  }
  return total;
}

void Weights::pack_for_matmul(bool f32_as_bf16) {
  // Every packed copy is a 64-byte-aligned slice of one buffer: a decode step sweeps all of them,
  // and one allocation is backed by huge pages as a whole (see Buffer), where per-tensor buffers of
  // a small model (1-2 MiB each) were all on 4 KiB pages. Pages become resident as they are
  // written, while each tensor's file pages are released after its copy, so the peak is unchanged.
  backend::Backend& be = ops::device_backend(lm_head.device);
  std::vector<Tensor*> todo, to_bf16;
  bool as_bf16 = false;  // the layers' F32 weights under f32_as_bf16
  // An F32 or BF16 weight converted or rewritten at load (an owned buffer) stays unpacked: that
  // copy cannot be released as file pages are, so packing would hold it twice (and hub's estimate
  // counts the file-mapped ones only).
  auto owned = [&](const Tensor& t) {
    const auto p = reinterpret_cast<uintptr_t>(t.data);
    for (const Buffer& b : impl_->owned)
      if (p >= reinterpret_cast<uintptr_t>(b.data()) && p < reinterpret_cast<uintptr_t>(b.data()) + b.size())
        return true;
    return false;
  };
  // Repacked checkpoint linears and HF MXFP4 experts (owned, each the only view of its bytes):
  // packed over their own rows where the copy has their size (whole 16-row groups), else left
  // to the row kernels.
  auto consider = [&](Tensor* t) {
    if (!t->data || !be.wants_packed(*t)) return;
    if (backend::PreparedHandle h; impl_->is_repacked(*t)) {
      if (be.prepare_in_place(*t, h)) impl_->prepared.push_back(std::move(h));
    } else if (!((t->dtype == DType::F32 || t->dtype == DType::BF16) && owned(*t))) {
      (as_bf16 && t->dtype == DType::F32 ? to_bf16 : todo).push_back(t);
    }
  };
  consider(&lm_head);
  consider(&ple_model_proj);
  as_bf16 = f32_as_bf16;
  for (LayerWeights& L : layers) {
    for (Tensor* t : {&L.q, &L.k, &L.v, &L.o, &L.gate, &L.up, &L.down, &L.router, &L.q_gate, &L.lin_qkv, &L.lin_z,
                      &L.lin_b, &L.lin_a, &L.lin_out, &L.ple_gate, &L.ple_proj, &L.shexp_gate, &L.shexp_up,
                      &L.shexp_down})
      consider(t);
    for (LayerWeights::Expert& x : L.experts)
      for (Tensor* t : {&x.gate, &x.up, &x.down}) consider(t);
  }
  for (Tensor* t : to_bf16) {  // owned BF16 rows, the file's released, then packed over themselves
    Buffer& b = impl_->owned.emplace_back(size_t(t->numel()) * 2);
    const float* src = t->ptr<float>();
    uint16_t* dst = reinterpret_cast<uint16_t*>(b.data());
    for (int64_t i = 0; i < t->numel(); ++i) dst[i] = f32_to_bf16(src[i]);
    if (impl_->st) impl_->st->release(t->data, size_t(t->nbytes()));
    else if (impl_->gguf) impl_->gguf->release(t->data, size_t(t->nbytes()));
    t->data = b.data(), t->dtype = DType::BF16;
    if (backend::PreparedHandle h; be.prepare_in_place(*t, h)) impl_->prepared.push_back(std::move(h));
  }
  auto slice_bytes = [&](const Tensor& t) { return (size_t(be.packed_bytes(t)) + 63) / 64 * 64; };
  size_t total = 0;
  for (const Tensor* t : todo) total += slice_bytes(*t);
  if (total == 0) return;
  const Buffer& b = impl_->packed.emplace_back(total);
  size_t at = 0;
  for (Tensor* t : todo) {
    impl_->prepared.push_back(be.prepare(*t, b.data() + at));
    at += slice_bytes(*t);
    if (impl_->gguf) impl_->gguf->release(t->data, size_t(t->nbytes()));
    else if (impl_->st) impl_->st->release(t->data, size_t(t->nbytes()));  // F32 checkpoints' rows
  }
  // A tied head is the embedding (same data, dtype and shape): the lookups find the copy too.
}

int64_t Weights::owned_bytes() const {
  int64_t total = 0;
  for (const Buffer& b : impl_->owned) total += int64_t(b.size());
  for (const Buffer& b : impl_->packed) total += int64_t(b.size());
  return total;
}

// Weights::load, step 1: open the file, check its tensors, and rewrite what the model does not
// read as stored (GGUF's tiled DeltaNet tensors; checkpoint formats; input-major experts).
void Weights::Impl::open(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec) {
  if (is_gguf_path(path)) {
    gguf.emplace(loader::GgufFile::open(path));
    w.source_ = WeightSource::GGUF;
    loader::validate_model_tensors(c, loader::tensor_descs(gguf->tensors()), loader::gguf_token_count(*gguf),
                                   path);
    if (!spec.names.lin_qkv.gguf.empty()) rewrite_gguf_linear(c, spec.names, spec.gguf_lin_v_heads_tiled);
  } else {
    st.emplace(loader::SafetensorsFile::open(path));
    w.source_ = WeightSource::SAFETENSORS;
    loader::validate_model_tensors(c, loader::tensor_descs(st->tensors()), -1, path);
    repack_quantized(c);
    if (spec.hf_experts_input_major) rewrite_input_major_experts(c, spec.names);
  }
}

// Step 2: the tensors outside the layers (embeddings, final norm, encoder and classifier heads,
// rope factors, per-layer-input embedding).
void Weights::Impl::bind_globals(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec, float norm_add) {
  const TensorNames& n = spec.names;
  const int64_t H = c.hidden_size, V = c.vocab_size;
  w.embed = required(n.embed, 0);
  check_matrix(w.embed, V, H, describe(n.embed, 0));
  if (!name_of(n.final_norm, 0).empty())
    w.final_norm = vector_f32(required(n.final_norm, 0), H, norm_add, describe(n.final_norm, 0));
  if (spec.encoder) {
    w.pos_embed = required(n.pos_embed, 0);
    if (w.pos_embed.ndim != 2 || w.pos_embed.dim(1) != H)
      throw Error(ErrorCode::INVALID_ARGUMENT, describe(n.pos_embed, 0) + " has shape " +
                                                   w.pos_embed.shape_str() + ", expected [positions, " + std::to_string(H) + "]");
    w.type_embed = find(n.type_embed, 0);
    if (w.type_embed.data && (w.type_embed.ndim != 2 || w.type_embed.dim(1) != H))
      throw Error(ErrorCode::INVALID_ARGUMENT, describe(n.type_embed, 0) + " has shape " +
                                                   w.type_embed.shape_str() + ", expected [types, " + std::to_string(H) + "]");
    w.embed_norm = vector_f32(required(n.embed_norm, 0), H, 0.0f, describe(n.embed_norm, 0));
    w.embed_norm_bias = vector_f32(find(n.embed_norm_bias, 0), H, 0.0f, describe(n.embed_norm_bias, 0));
  }
  if (c.num_labels > 0 && c.rank_label_tokens.empty()) {  // else the labels are rows of the head
    w.cls_dense = find(n.cls_dense, 0);
    if (w.cls_dense.data) {
      check_matrix(w.cls_dense, H, H, describe(n.cls_dense, 0));
      w.cls_dense_bias = vector_f32(find(n.cls_dense_bias, 0), H, 0.0f, describe(n.cls_dense_bias, 0));
    }
    w.cls_out = required(n.cls_out, 0);
    check_matrix(w.cls_out, c.num_labels, H, describe(n.cls_out, 0));
    w.cls_out_bias = vector_f32(find(n.cls_out_bias, 0), c.num_labels, 0.0f, describe(n.cls_out_bias, 0));
  }
  if (gguf && !n.gguf_rope_factors.empty()) {
    if (const auto* t = gguf->find_tensor(n.gguf_rope_factors)) {
      Tensor f = gguf->view(*t);
      w.rope_factors = vector_f32(f, f.numel(), 0.0f, path + ": tensor '" + n.gguf_rope_factors + "'");
    }
  }
  if (const int64_t P = c.hidden_size_per_layer_input; P > 0 && !(gguf ? n.ple_embed.gguf : n.ple_embed.hf).empty()) {
    w.ple_embed = required(n.ple_embed, 0);
    check_matrix(w.ple_embed, c.vocab_size_per_layer_input > 0 ? c.vocab_size_per_layer_input : V,
                 c.num_hidden_layers * P, describe(n.ple_embed, 0));
    w.ple_proj_norm = vector_f32(required(n.ple_proj_norm, 0), P, norm_add, describe(n.ple_proj_norm, 0));
  }
}

// Step 3: every layer's norms and biases (F32 copies), DeltaNet layers' own vectors.
void Weights::Impl::bind_layer_vectors(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec,
                                       float norm_add) {
  const TensorNames& n = spec.names;
  const int64_t H = c.hidden_size;
  w.layers.resize(c.num_hidden_layers);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerWeights& L = w.layers[l];
    auto vec = [&](const TensorName& tn, int64_t len, float add, bool req) {
      Tensor t = req ? required(tn, l) : find(tn, l);
      return vector_f32(t, len, add, describe(tn, l));
    };
    if (c.layer_types[l] == loader::kLinearAttention) {
      const int64_t Hv = c.linear_num_value_heads, dv = c.linear_value_head_dim, K = c.linear_conv_kernel_dim;
      const int64_t conv = 2 * c.linear_num_key_heads * c.linear_key_head_dim + Hv * dv;
      L.lin_conv = vec(n.lin_conv, conv * K, 0.0f, true);
      L.lin_conv.ndim = 2;
      L.lin_conv.shape = {conv, K};
      L.lin_A_log = vec(n.lin_A_log, Hv, 0.0f, true);
      L.lin_dt_bias = vec(n.lin_dt_bias, Hv, 0.0f, true);
      L.lin_norm = vec(n.lin_norm, dv, 0.0f, true);
      L.attn_norm = vec(n.attn_norm, H, norm_add, true);
      L.ffn_norm = vec(n.ffn_norm, H, norm_add, true);
      continue;
    }
    const loader::ModelConfig::LayerDims d = c.layer_dims(l);
    const int64_t hd = d.head_dim, q_dim = c.num_attention_heads * hd, kv_dim = d.num_kv_heads * hd;
    L.attn_norm = vec(n.attn_norm, H, norm_add, true);
    L.q_bias = vec(n.q_bias, q_dim, 0.0f, false);
    L.k_bias = vec(n.k_bias, kv_dim, 0.0f, false);
    L.v_bias = vec(n.v_bias, kv_dim, 0.0f, false);
    L.o_bias = vec(n.o_bias, H, 0.0f, false);
    L.sinks = vec(n.sinks, c.num_attention_heads, 0.0f, false);
    L.q_norm = vec(n.q_norm, spec.qk_norm_full_width ? q_dim : hd, norm_add, false);
    L.k_norm = vec(n.k_norm, spec.qk_norm_full_width ? kv_dim : hd, norm_add, false);
    L.post_attn_norm = vec(n.post_attn_norm, H, norm_add, !n.post_attn_norm.hf.empty());
    L.ffn_norm = vec(n.ffn_norm, H, norm_add, true);
    L.post_ffw_norm = vec(n.post_ffw_norm, H, norm_add, !n.post_ffw_norm.hf.empty());
    if (w.ple_embed.data) L.ple_post_norm = vec(n.ple_post_norm, H, norm_add, true);
    if (const Tensor s = find(n.layer_scale, l); s.data) L.layer_scale = vector_f32(s, 1, 0.0f, describe(n.layer_scale, l)).ptr<float>()[0];
    L.attn_norm_bias = vec(n.attn_norm_bias, H, 0.0f, false);
    L.ffn_norm_bias = vec(n.ffn_norm_bias, H, 0.0f, false);
    L.up_bias = vec(n.up_bias, c.intermediate_size, 0.0f, false);
    L.down_bias = vec(n.down_bias, H, 0.0f, false);
  }
}

// Step 4: the vectors of the MoE layers (router bias, expert biases, Gemma 4's extra norms and
// scales, the shared expert's gate).
void Weights::Impl::bind_moe_vectors(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec, float norm_add) {
  const TensorNames& n = spec.names;
  const int64_t H = c.hidden_size;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (!is_moe_layer(c, l, [&] { return exists(n.router, l); },
                      [&] { return exists(n.gate, l) || exists(n.gate_up, l); }))
      continue;
    LayerWeights& L = w.layers[l];
    const int64_t E = c.num_experts, I = c.moe_intermediate_size;
    L.experts.resize(E);
    L.router_bias = vector_f32(find(n.router_bias, l), E, 0.0f, describe(n.router_bias, l));
    // Stacked [E, n] biases: one F32 copy, each expert a row of it.
    auto biases = [&](const TensorName& tn, int64_t len, Tensor LayerWeights::Expert::*dst) {
      Tensor all = vector_f32(find(tn, l), E * len, 0.0f, describe(tn, l));
      if (!all.data) return;
      for (int64_t e = 0; e < E; ++e) L.experts[e].*dst = Tensor(DType::F32, all.ptr<float>() + e * len, {len});
    };
    biases(n.expert_gate_bias, I, &LayerWeights::Expert::gate_bias);
    biases(n.expert_up_bias, I, &LayerWeights::Expert::up_bias);
    biases(n.expert_down_bias, H, &LayerWeights::Expert::down_bias);
    if (spec.moe_beside_dense) {
      L.post_ffw_norm_1 = vector_f32(required(n.post_ffw_norm_1, l), H, norm_add, describe(n.post_ffw_norm_1, l));
      L.pre_ffw_norm_2 = vector_f32(required(n.pre_ffw_norm_2, l), H, norm_add, describe(n.pre_ffw_norm_2, l));
      L.post_ffw_norm_2 = vector_f32(required(n.post_ffw_norm_2, l), H, norm_add, describe(n.post_ffw_norm_2, l));
      // Router input x̂·scale·H^-½: one norm weight with the constant folded in.
      L.router_norm = vector_f32(required(n.router_scale, l), H, 0.0f, describe(n.router_scale, l));
      const float rs = 1.0f / std::sqrt(static_cast<float>(H));
      for (int64_t i = 0; i < H; ++i) L.router_norm.ptr<float>()[i] *= rs;
      L.expert_scale = vector_f32(find(n.expert_scale, l), E, 0.0f, describe(n.expert_scale, l));
    }
    if (has_shared_expert(c, spec, gguf.has_value())) {  // its sigmoid gate [1, H] (GGUF: [H])
      L.shexp_gate_inp = vector_f32(required(n.shexp_gate_inp, l), H, 0.0f, describe(n.shexp_gate_inp, l));
      L.shexp_gate_inp.ndim = 2;
      L.shexp_gate_inp.shape = {1, H};
    }
  }
}

// Step 5: every matmul weight, as views of the file (or of a rewritten copy) in its slot.
void Weights::Impl::bind_matmul_weights(Weights& w, const loader::ModelConfig& c, const ArchSpec& spec) {
  const auto has = [&](const TensorName& tn, int64_t l) { return exists(tn, l); };
  for (const MatmulWeightRef& r : matmul_weight_refs(c, spec, has)) {
    using S = MatmulWeightRef::Slot;
    const bool own = r.expert >= 0 && per_expert(*r.name, gguf.has_value());  // one tensor per expert
    const Tensor t = required(*r.name, r.layer, own ? r.expert : -1);
    const bool stacked = r.expert >= 0 && !own;
    check_matrix(t, r.total_rows, r.cols, describe(*r.name, r.layer, own ? r.expert : -1),
                 stacked ? c.num_experts : 0);
    if (r.slot == S::HEAD) {
      w.lm_head = row_slice(t, r.row0, r.rows);
      continue;
    }
    LayerWeights& L = w.layers[r.layer];
    if (r.expert >= 0) {
      LayerWeights::Expert& x = L.experts[r.expert];
      Tensor* xdst[] = {&x.gate, &x.up, &x.down};
      *xdst[int(r.slot) - int(S::EXPERT_GATE)] = row_slice(t, r.row0, r.rows);
      continue;
    }
    if (r.slot == S::ROUTER) {
      L.router = row_slice(t, r.row0, r.rows);
      continue;
    }
    if (r.slot >= S::SHEXP_GATE) {
      Tensor* sh[] = {&L.shexp_gate, &L.shexp_up, &L.shexp_down};  // in Slot order
      *sh[int(r.slot) - int(S::SHEXP_GATE)] = row_slice(t, r.row0, r.rows);
      continue;
    }
    if (r.slot == S::PLE_MODEL_PROJ || r.slot == S::PLE_GATE || r.slot == S::PLE_PROJ) {
      Tensor* ple[] = {&w.ple_model_proj, &L.ple_gate, &L.ple_proj};  // in Slot order
      *ple[int(r.slot) - int(S::PLE_MODEL_PROJ)] = row_slice(t, r.row0, r.rows);
      continue;
    }
    if (r.slot >= S::LIN_QKV) {
      Tensor* lin[] = {&L.lin_qkv, &L.lin_z, &L.lin_b, &L.lin_a, &L.lin_out};  // in Slot order
      *lin[int(r.slot) - int(S::LIN_QKV)] = row_slice(t, r.row0, r.rows);
      continue;
    }
    Tensor* dst[] = {nullptr, &L.q, &L.k, &L.v, &L.o, &L.gate, &L.up, &L.down};  // in Slot order
    *dst[int(r.slot)] = row_slice(t, r.row0, r.rows);
    if (r.slot == S::Q && spec.attn_output_gate) {
      // q_proj rows are [q_h | gate_h] per head: reordered to all queries, then all gates. A
      // checkpoint's file rows go to an owned copy; rows repacked at load (FP8 / AWQ / GPTQ) are
      // our own buffer and are reordered in it, so they are neither held twice nor packed apart.
      const int64_t nh = c.num_attention_heads, hd = c.layer_dims(r.layer).head_dim, rb = dtype_row_bytes(t.dtype, t.cols());
      Buffer b(size_t(rb * 2 * nh * hd));
      for (int64_t h = 0; h < nh; ++h)
        for (int64_t half = 0; half < 2; ++half)
          std::memcpy(b.data() + ((half * nh + h) * hd) * rb, t.row((2 * h + half) * hd), size_t(rb * hd));
      Tensor all = t;
      if (is_repacked(t)) {
        std::memcpy(t.data, b.data(), b.size());
      } else {
        all.data = b.data();
        owned.push_back(std::move(b));
      }
      L.q = row_slice(all, 0, nh * hd);
      L.q_gate = row_slice(all, nh * hd, nh * hd);
    }
  }
}

std::unique_ptr<Weights> Weights::load(const std::string& path, const loader::ModelConfig& c,
                                       const ArchSpec& spec, Device device, bool f32_as_bf16) {
  std::unique_ptr<Weights> w(new Weights());
  w->impl_ = std::make_unique<Impl>();
  Impl& im = *w->impl_;
  im.path = path;
  if (!spec.hf_prefix_fallbacks.empty()) im.prefix_fallbacks = &spec.hf_prefix_fallbacks;
  im.open(*w, c, spec);
  const float norm_add = (spec.norm_one_plus_in_hf && !im.gguf) ? 1.0f : 0.0f;
  im.bind_globals(*w, c, spec, norm_add);
  im.bind_layer_vectors(*w, c, spec, norm_add);
  im.bind_moe_vectors(*w, c, spec, norm_add);
  im.bind_matmul_weights(*w, c, spec);
  if (spec.encoder) {  // no head: lm_head stays absent on the embedding's device
    w->lm_head = Tensor{};
    w->lm_head.device = w->embed.device;
  }
  if (device == Device::CPU) w->pack_for_matmul(f32_as_bf16);  // elsewhere: the caller uploads (upload_to) once bound
  im.rewritten.clear();
  im.transient.clear();
  // Every tensor is bound: drop the parsed metadata (a Gemma 3 vocabulary is ~10 MiB of strings),
  // keeping the mapping and the tensor table.
  if (im.gguf) static_cast<loader::GgufMetadata&>(*im.gguf) = loader::GgufMetadata(path);
  return w;
}

std::vector<MatmulWeightRef> matmul_weight_refs(const loader::ModelConfig& c, const ArchSpec& spec,
                                                const std::function<bool(const TensorName&, int64_t)>& exists) {
  using S = MatmulWeightRef::Slot;
  const TensorNames& n = spec.names;
  const int64_t H = c.hidden_size;
  std::vector<MatmulWeightRef> refs;
  auto whole = [&](S slot, const TensorName& tn, int64_t l, int64_t rows, int64_t cols) {
    refs.push_back({slot, &tn, l, 0, rows, rows, cols});
  };
  const bool gguf = !c.gguf_arch.empty();
  // Expert e's rows [row0, row0 + rows) of `tn`: its own tensor, or a slice of the stacked one.
  auto expert = [&](S slot, const TensorName& tn, int64_t l, int64_t e, int64_t offset, int64_t rows,
                    int64_t per_expert_rows, int64_t cols) {
    if (per_expert(tn, gguf)) refs.push_back({slot, &tn, l, 0, rows, rows, cols, e});
    else refs.push_back({slot, &tn, l, e * per_expert_rows + offset, rows, c.num_experts * per_expert_rows, cols, e});
  };
  const bool own_head = !c.tie_word_embeddings && exists(n.lm_head, 0);
  if (!spec.encoder) whole(S::HEAD, own_head ? n.lm_head : n.embed, 0, c.vocab_size, H);
  const int64_t P = c.hidden_size_per_layer_input;
  const bool ple = P > 0 && exists(n.ple_embed, 0);
  if (ple) whole(S::PLE_MODEL_PROJ, n.ple_model_proj, 0, c.num_hidden_layers * P, H);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const loader::ModelConfig::LayerDims d = c.layer_dims(l);
    const int64_t I = d.intermediate_size;
    const int64_t q_dim = c.num_attention_heads * d.head_dim, kv_dim = d.num_kv_heads * d.head_dim;
    const bool own_kv = d.kv_layer == l;  // a KV-sharing layer has no k / v projections
    const bool has_v = !(spec.v_from_k_when_absent && !exists(n.v, l));
    if (ple) {
      whole(S::PLE_GATE, n.ple_gate, l, P, H);
      whole(S::PLE_PROJ, n.ple_proj, l, H, P);
    }
    if (c.layer_types[l] == loader::kLinearAttention) {
      const int64_t Hv = c.linear_num_value_heads, vd = Hv * c.linear_value_head_dim;
      whole(S::LIN_QKV, n.lin_qkv, l, 2 * c.linear_num_key_heads * c.linear_key_head_dim + vd, H);
      whole(S::LIN_Z, n.lin_z, l, vd, H);
      whole(S::LIN_B, n.lin_b, l, Hv, H);
      whole(S::LIN_A, n.lin_a, l, Hv, H);
      whole(S::LIN_OUT, n.lin_out, l, H, vd);
    } else if (spec.attn_output_gate) {
      whole(S::Q, n.q, l, 2 * q_dim, H);  // [q | gate] per head, split at load
      whole(S::K, n.k, l, kv_dim, H);
      whole(S::V, n.v, l, kv_dim, H);
    } else if (exists(n.qkv, l)) {
      const int64_t total = q_dim + 2 * kv_dim;
      refs.push_back({S::Q, &n.qkv, l, 0, q_dim, total, H});
      refs.push_back({S::K, &n.qkv, l, q_dim, kv_dim, total, H});
      refs.push_back({S::V, &n.qkv, l, q_dim + kv_dim, kv_dim, total, H});
    } else {
      whole(S::Q, n.q, l, q_dim, H);
      if (own_kv) whole(S::K, n.k, l, kv_dim, H);
      if (own_kv && has_v) whole(S::V, n.v, l, kv_dim, H);
    }
    if (c.layer_types[l] != loader::kLinearAttention) whole(S::O, n.o, l, H, q_dim);
    if (is_moe_layer(c, l, [&] { return exists(n.router, l); },
                     [&] { return exists(n.gate, l) || exists(n.gate_up, l); })) {
      const int64_t E = c.num_experts, Im = c.moe_intermediate_size;
      whole(S::ROUTER, n.router, l, E, H);
      const bool fused = exists(n.expert_gate_up, l);  // HF v5 layout, or a GGUF's ffn_gate_up_exps
      for (int64_t e = 0; e < E; ++e) {
        if (fused) {
          expert(S::EXPERT_GATE, n.expert_gate_up, l, e, 0, Im, 2 * Im, H);
          expert(S::EXPERT_UP, n.expert_gate_up, l, e, Im, Im, 2 * Im, H);
          expert(S::EXPERT_DOWN, n.expert_down_stacked, l, e, 0, H, H, Im);
        } else {
          expert(S::EXPERT_GATE, n.expert_gate, l, e, 0, Im, Im, H);
          expert(S::EXPERT_UP, n.expert_up, l, e, 0, Im, Im, H);
          expert(S::EXPERT_DOWN, n.expert_down, l, e, 0, H, H, Im);
        }
      }
      if (has_shared_expert(c, spec, gguf)) {
        const int64_t Is = c.shared_expert_intermediate_size;
        whole(S::SHEXP_GATE, n.shexp_gate, l, Is, H);
        whole(S::SHEXP_UP, n.shexp_up, l, Is, H);
        whole(S::SHEXP_DOWN, n.shexp_down, l, H, Is);
      }
      if (!spec.moe_beside_dense) continue;  // else the dense MLP follows
    }
    if (exists(n.gate_up, l)) {
      refs.push_back({S::GATE, &n.gate_up, l, 0, I, 2 * I, H});
      refs.push_back({S::UP, &n.gate_up, l, I, I, 2 * I, H});
    } else {
      if (!(gguf ? n.gate.gguf : n.gate.hf).empty()) whole(S::GATE, n.gate, l, I, H);  // a plain MLP has none
      whole(S::UP, n.up, l, I, H);
    }
    whole(S::DOWN, n.down, l, H, I);
  }
  return refs;
}

std::string tensor_name(const std::string& name, int64_t layer, int64_t expert) {
  std::string s = name;
  if (auto pos = s.find("{e}"); pos != std::string::npos && expert >= 0) s.replace(pos, 3, std::to_string(expert));
  if (auto pos = s.find("{}"); pos != std::string::npos) s.replace(pos, 2, std::to_string(layer));
  return s;
}

bool has_shared_expert(const loader::ModelConfig& c, const ArchSpec& spec, bool gguf) {
  return c.shared_expert_intermediate_size > 0 && !(gguf ? spec.names.shexp_down.gguf : spec.names.shexp_down.hf).empty();
}

bool is_moe_layer(const loader::ModelConfig& c, int64_t l, const std::function<bool()>& has_router,
                  const std::function<bool()>& has_dense_mlp) {
  if (c.num_experts <= 0) return false;
  if (c.gguf_arch.empty()) {
    if (std::find(c.mlp_only_layers.begin(), c.mlp_only_layers.end(), l) != c.mlp_only_layers.end()) return false;
    return c.decoder_sparse_step <= 1 || (l + 1) % c.decoder_sparse_step == 0;
  }
  return has_router() || !has_dense_mlp();
}

}  // namespace oxyd::model
