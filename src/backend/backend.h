// The device seam (docs/architecture.md §2): one Backend per device, found by the device of the
// tensors. ops/ validates its arguments once and then calls the backend of their device; model/ and
// engine/ allocate their workspaces, KV pool and logits through it and ask it how to prepare weights
// and how much matmul scratch a shape needs. A backend never re-checks what ops/ validated. The CPU
// backend (backend/cpu/backend.h) is always there; others (CUDA) register themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend {

class Backend;

/// One product of Backend::matmul_same_x: weight w, output y.
struct MatmulOut {
  const Tensor* w;
  const Tensor* y;
};

/// A weight's prepared copy: bytes in the backend's own layout (tag `layout`, the backend's to
/// define; CPU: backend::cpu::PackLayout) that its matmul and get_rows read instead of the rows.
struct PreparedWeight {
  const uint8_t* bytes = nullptr;
  uint8_t layout = 0;
  /// The copy took the place of the rows (prepare_in_place): bytes == the weight's data, and the
  /// rows exist no more. A reader that cannot use the copy must unpack it (CPU: matmul_unpack_row).
  bool in_place = false;
};

/// Keeps one prepared copy registered with its backend; unregisters it when it dies. Whoever holds
/// it also owns the bytes (model::Weights). Move-only.
class PreparedHandle {
 public:
  PreparedHandle() = default;
  PreparedHandle(Backend* owner, const void* key) : owner_(owner), key_(key) {}
  PreparedHandle(PreparedHandle&& o) noexcept : owner_(o.owner_), key_(o.key_) { o.owner_ = nullptr; }
  PreparedHandle& operator=(PreparedHandle&& o) noexcept;
  PreparedHandle(const PreparedHandle&) = delete;
  PreparedHandle& operator=(const PreparedHandle&) = delete;
  ~PreparedHandle();

 private:
  Backend* owner_ = nullptr;
  const void* key_ = nullptr;
};

/// Memory of one backend, freed when the Allocation dies; not zeroed. On the CPU: a core::Buffer
/// (host memory aligned to 64 bytes, 2 MiB from 2 MiB on). Move-only.
class Allocation {
 public:
  Allocation() = default;
  Allocation(Backend* owner, void* data, void* handle, size_t bytes)
      : owner_(owner), data_(data), handle_(handle), bytes_(bytes) {}
  Allocation(Allocation&& o) noexcept { swap(o); }
  Allocation& operator=(Allocation&& o) noexcept {
    Allocation tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation();

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  size_t size() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }

 private:
  void swap(Allocation& o) noexcept;
  Backend* owner_ = nullptr;
  void* data_ = nullptr;
  void* handle_ = nullptr;  // the backend's own record of the memory
  size_t bytes_ = 0;
};

/// One device's implementation of every op of ops/, with the signatures of backend::cpu.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string_view name() const = 0;

  /// `bytes` of this device's memory (0 → an empty Allocation). Throws Error(OUT_OF_MEMORY)
  /// when the device has no room.
  Allocation allocate(size_t bytes);

  // Ops (inputs validated by ops/).
  virtual void matmul(const Tensor& x, const Tensor& w, const Tensor& y) = 0;
  /// y_i = x·w_iᵀ for the `count` pairs (w_i, y_i), all of one x that no y_i overlaps (a layer's
  /// q/k/v or gate/up projections): whatever the backend prepares from x it prepares once (CUDA:
  /// the int8 activations of its gemv). The default calls matmul per pair.
  virtual void matmul_same_x(const Tensor& x, const MatmulOut* outs, int count);
  /// ids: I32 [num_ids] on this device (range-checked by ops/ only where host-readable).
  virtual void get_rows(const Tensor& table, const Tensor& ids, const Tensor& out) = 0;
  virtual void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) = 0;
  virtual void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                          const Tensor& y) = 0;
  virtual void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, const Tensor* freq_factors,
                    RopeStyle style, float attention_factor, const Tensor& y) = 0;
  virtual void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale,
                                const Tensor& y) = 0;
  // Gated DeltaNet (ops/gated_delta_net.h).
  virtual void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state,
                             const Tensor& query_start_loc, const Tensor& state_slots, const Tensor& y) = 0;
  virtual void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias,
                          const Tensor& g, const Tensor& beta) = 0;
  virtual void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                                const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                                const Tensor& out) = 0;
  virtual void softmax(const Tensor& x, float scale, const Tensor& y) = 0;
  virtual void activation(Activation act, const Tensor& x, const Tensor& y) = 0;
  virtual void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) = 0;
  virtual void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) = 0;
  virtual void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) = 0;
  virtual void add(const Tensor& a, const Tensor& b, const Tensor& y) = 0;
  virtual void mul(const Tensor& a, const Tensor& b, const Tensor& y) = 0;
  virtual void scale(const Tensor& x, float s, const Tensor& y) = 0;
  virtual void softcap(const Tensor& x, float cap, const Tensor& y) = 0;
  virtual void clamp(const Tensor& x, float limit, const Tensor& y) = 0;
  virtual void paged_attention(const AttentionParams& p) = 0;
  virtual void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                                 const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format) = 0;
  virtual void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) = 0;
  virtual void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) = 0;
  /// Groups the (token, rank) pairs of ids [T, k] by expert (ops/moe.h moe_group).
  virtual void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows) = 0;
  /// The expert MLPs of a layer (op_params.h MoeExpertsParams). The default runs each expert with
  /// rows through this backend's matmul / add / glu ops, reading the offsets back to the host;
  /// a backend overrides it with a grouped form.
  virtual void moe_experts(const MoeExpertsParams& p);
  /// y = 0 (a contiguous F32 tensor).
  virtual void zero(const Tensor& y) = 0;
  /// ids I32 [rows] = the lowest id of the largest value among the first `cols` of each row of
  /// x F32 [rows, n] (NaN never the largest; 0 for a row without a number): greedy sampling where
  /// the logits are, so that only the ids cross to the host. The default reads x back and scans it.
  virtual void argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids);
  /// Copies src's bytes (contiguous) into host memory dst of src.nbytes() (the engine reads logits).
  virtual void copy_to_host(const Tensor& src, void* dst) = 0;
  /// Copies dst.nbytes() bytes of host memory src into dst (contiguous, this device's memory): a
  /// step's batch metadata and the weights at load. src may be reused once this returns.
  virtual void copy_from_host(const void* src, const Tensor& dst) = 0;

  /// Free and total bytes of this device's memory; {0, 0} where the backend does not manage a
  /// memory of its own (the CPU: host memory is planned elsewhere).
  struct MemoryInfo {
    int64_t free_bytes = 0, total_bytes = 0;
  };
  virtual MemoryInfo memory_info() const { return {}; }

  /// Step graphs (CUDA graphs): the ops queued between graph_capture_begin() and
  /// graph_capture_end() are recorded, not run, as one graph that graph_replay() runs with the same
  /// arguments (the same memory, read anew). A capture fails, and the caller runs the ops again,
  /// when an op inside it cannot be recorded (a host copy, an allocation). The default (the CPU):
  /// no graphs. model/step_graphs.h decides when to capture and replay.
  /// Starts recording; false where this backend has no graphs.
  virtual bool graph_capture_begin() { return false; }
  /// Stops recording: the graph's id (≥ 0), or -1 when the capture failed (nothing was run).
  virtual int64_t graph_capture_end() { return -1; }
  virtual void graph_replay(int64_t /*id*/) {}
  virtual void graph_release(int64_t /*id*/) {}
  /// A count of this device's frees so far: a graph captured at another count may name freed
  /// memory and must not be replayed.
  virtual uint64_t graph_memory_epoch() const { return 0; }

  /// Held for a whole step (its forward pass and the copies of its results) by whoever runs one on
  /// this device (runner::ModelRunner, Transformer::embed), where steps of models served at once
  /// must not interleave: CUDA queues everything on one stream, with one set of workspaces, and
  /// its host copies from other threads wait for the step too. nullptr (the CPU): steps overlap.
  virtual std::recursive_mutex* step_mutex() { return nullptr; }

  /// Whether matmul / get_rows have a kernel for weights of dtype t.
  virtual bool has_weight_kernel(DType t) const = 0;
  /// Bytes of activation scratch one matmul of x [m, k] against a `wtype` weight needs (0: none);
  /// the bytes the backend holds for it now (shared by every model it serves), the most one call
  /// used, and an early reserve.
  virtual int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k) const = 0;
  virtual int64_t matmul_scratch_held() const { return 0; }
  virtual int64_t matmul_scratch_used() const { return 0; }
  virtual void matmul_reserve_scratch(int64_t /*bytes*/) {}

  /// Weight preparation: whether this backend's matmul would rather read `w` from a copy in its own
  /// layout, and the bytes of that copy. packed_extra_bytes: the bytes such a copy of a [rows, cols]
  /// weight of dtype t holds beyond the rows as stored (0 where it would not be packed), from a
  /// header alone.
  virtual bool wants_packed(const Tensor& /*w*/) const { return false; }
  virtual int64_t packed_bytes(const Tensor& /*w*/) const { return 0; }
  virtual int64_t packed_extra_bytes(DType /*t*/, int64_t /*rows*/, int64_t /*cols*/) const { return 0; }
  /// Writes w's copy into `out` (packed_bytes(w) bytes, owned by the caller) and registers it for
  /// w: from then on this backend's matmul and get_rows of w (any tensor with w's data, dtype and
  /// shape) read the copy, until the handle dies. The original rows may then be released.
  PreparedHandle prepare(const Tensor& w, uint8_t* out);
  /// prepare() over w's own bytes, for rows the model owns (rewritten at load, not file pages that
  /// can be released): the copy replaces them, so the model holds one. Only where the copy has the
  /// rows' size (packed_bytes(w) == w.nbytes()); false, and nothing changed, otherwise.
  bool prepare_in_place(const Tensor& w, PreparedHandle& handle);
  /// Registers bytes already in `layout` as w's copy (tests and benches that pack themselves).
  PreparedHandle register_prepared(const Tensor& w, const uint8_t* bytes, uint8_t layout, bool in_place = false);
  /// The copy registered for w, or nullptr. Safe to call while other threads register.
  const PreparedWeight* prepared(const Tensor& w) const;

 protected:
  /// The allocator of allocate(): memory of `bytes` > 0 (and in *handle whatever raw_release needs),
  /// freed by raw_release().
  virtual void* raw_allocate(size_t bytes, void** handle) = 0;
  virtual void raw_release(void* data, void* handle, size_t bytes) noexcept = 0;
  /// prepare(): writes w's copy into out and returns its layout tag.
  virtual uint8_t pack(const Tensor& w, uint8_t* out) const;
  friend class Allocation;
  friend class PreparedHandle;

 private:
  struct Entry {
    DType dtype;
    int ndim;
    std::array<int64_t, kMaxDims> shape;
    PreparedWeight copy;
  };
  void unregister_prepared(const void* key) noexcept;
  mutable std::shared_mutex prepared_mu_;
  std::unordered_map<const void*, Entry> prepared_;  // keyed by the weight's data
};

/// Holds b.step_mutex() (where it has one) while it lives.
class StepLock {
 public:
  explicit StepLock(Backend& b) {
    if (std::recursive_mutex* m = b.step_mutex()) lock_ = std::unique_lock<std::recursive_mutex>(*m);
  }

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

/// Makes `b` the backend of b.device() (replacing any earlier one; the registry does not own it).
void register_backend(Backend& b);
/// Removes `b` if it is the one registered for its device (tests).
void unregister_backend(Backend& b);
/// The backend registered for `d`, or nullptr.
Backend* registered_backend(Device d);
/// The backend of `d`; the CPU one is always registered by its first use (backend::cpu::cpu_backend(),
/// which ops/ reaches). Throws Error(UNSUPPORTED) "<op>: no backend registered for device <d>".
Backend& find_backend(Device d, std::string_view op = "find_backend");

std::string_view device_name(Device d);

}  // namespace oxyd::backend
