// Allocation and the backend registry (see backend.h).
#include "backend/backend.h"

#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace oxyd::backend {

Allocation::~Allocation() {
  if (owner_ && data_) owner_->raw_release(data_, handle_, bytes_);
}

void Allocation::swap(Allocation& o) noexcept {
  std::swap(owner_, o.owner_);
  std::swap(data_, o.data_);
  std::swap(handle_, o.handle_);
  std::swap(bytes_, o.bytes_);
}

Allocation Backend::allocate(size_t bytes) {
  if (bytes == 0) return {};
  void* handle = nullptr;
  void* data = raw_allocate(bytes, &handle);
  return Allocation(this, data, handle, bytes);
}

uint8_t Backend::pack(const Tensor&, uint8_t*) const {
  throw_error(ErrorCode::UNSUPPORTED, std::string(name()) + " backend: packs no weights");
}

namespace {

// Rows [row0, row0 + n) of a 2-D F32 tensor, as a tensor.
Tensor row_block(const Tensor& t, int64_t row0, int64_t n) {
  return Tensor(DType::F32, t.ptr<float>() + row0 * t.cols(), {n, t.cols()}, t.device);
}

}  // namespace

void Backend::matmul_same_x(const Tensor& x, const MatmulOut* outs, int count) {
  for (int i = 0; i < count; ++i) matmul(x, *outs[i].w, *outs[i].y);
}

void Backend::argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids) {
  const int64_t rows = x.rows(), n = x.cols();
  std::vector<float> host(static_cast<size_t>(rows * n));
  copy_to_host(x, host.data());
  std::vector<int32_t> out(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = host.data() + r * n;
    float best = -INFINITY;
    bool found = false;
    for (int64_t j = 0; j < cols; ++j)
      if (row[j] > best || (!found && row[j] == best)) best = row[j], out[size_t(r)] = int32_t(j), found = true;
  }
  copy_from_host(out.data(), ids);
}

void Backend::moe_experts(const MoeExpertsParams& p) {
  const int64_t E = p.offsets.numel() - 1;
  std::vector<int32_t> off(static_cast<size_t>(E + 1));
  copy_to_host(p.offsets, off.data());
  for (int64_t e = 0; e < E; ++e) {
    const int64_t r0 = off[size_t(e)], n = off[size_t(e) + 1] - r0;
    if (n == 0) continue;
    const ExpertWeights& x = p.experts[e];
    const Tensor xe = row_block(p.xs, r0, n), ye = row_block(p.ys, r0, n);
    const Tensor g = row_block(p.gate, r0, n), u = row_block(p.up, r0, n);
    const MatmulOut gate_up[] = {{&x.gate, &g}, {&x.up, &u}};
    matmul_same_x(xe, gate_up, 2);
    if (x.gate_bias.data) add(g, x.gate_bias, g);
    if (x.up_bias.data) add(u, x.up_bias, u);
    if (p.swiglu_limit > 0) glu_oai(g, u, p.swiglu_alpha, p.swiglu_limit, g);
    else glu(p.act, g, u, g);
    matmul(g, x.down, ye);
    if (x.down_bias.data) add(ye, x.down_bias, ye);
  }
}

PreparedHandle Backend::prepare(const Tensor& w, uint8_t* out) {
  return register_prepared(w, out, pack(w, out));
}

bool Backend::prepare_in_place(const Tensor& w, PreparedHandle& handle) {
  const size_t bytes = size_t(w.nbytes());
  if (!w.data || packed_bytes(w) != int64_t(bytes)) return false;
  Buffer copy(bytes);  // one weight at a time: the peak is one expert's or linear's bytes more
  const uint8_t layout = pack(w, copy.data());
  std::memcpy(w.data, copy.data(), bytes);
  handle = register_prepared(w, static_cast<const uint8_t*>(w.data), layout, true);
  return true;
}

PreparedHandle Backend::register_prepared(const Tensor& w, const uint8_t* bytes, uint8_t layout, bool in_place) {
  OXYD_CHECK(w.data && bytes, "register_prepared: a weight and its copy need data");
  std::unique_lock lock(prepared_mu_);
  prepared_[w.data] = Entry{w.dtype, w.ndim, w.shape, PreparedWeight{bytes, layout, in_place}};
  return PreparedHandle(this, w.data);
}

const PreparedWeight* Backend::prepared(const Tensor& w) const {
  std::shared_lock lock(prepared_mu_);
  if (prepared_.empty()) return nullptr;
  auto it = prepared_.find(w.data);
  if (it == prepared_.end()) return nullptr;
  const Entry& e = it->second;
  // Another view of the same bytes (a row slice, a reshape) is not the prepared weight.
  if (e.dtype != w.dtype || e.ndim != w.ndim || e.shape != w.shape) return nullptr;
  return &e.copy;
}

void Backend::unregister_prepared(const void* key) noexcept {
  std::unique_lock lock(prepared_mu_);
  prepared_.erase(key);
}

PreparedHandle& PreparedHandle::operator=(PreparedHandle&& o) noexcept {
  if (this != &o) {
    if (owner_) owner_->unregister_prepared(key_);
    owner_ = o.owner_, key_ = o.key_;
    o.owner_ = nullptr;
  }
  return *this;
}

PreparedHandle::~PreparedHandle() {
  if (owner_) owner_->unregister_prepared(key_);
}

namespace {
constexpr size_t kDevices = 2;  // Device::CPU, Device::CUDA
struct Registry {
  std::mutex mu;
  std::array<Backend*, kDevices> backends{};
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

void register_backend(Backend& b) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.backends[size_t(b.device())] = &b;
}

void unregister_backend(Backend& b) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.backends[size_t(b.device())] == &b) r.backends[size_t(b.device())] = nullptr;
}

Backend* registered_backend(Device d) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return size_t(d) < kDevices ? r.backends[size_t(d)] : nullptr;
}

Backend& find_backend(Device d, std::string_view op) {
  if (Backend* b = registered_backend(d)) return *b;
  std::string msg = std::string(op) + ": no backend registered for device " + std::string(device_name(d));
  if (d == Device::CUDA) msg += " (the CUDA backend is not wired into ops/ yet; use CPU tensors)";
  throw_error(ErrorCode::UNSUPPORTED, msg);
}

std::string_view device_name(Device d) {
  switch (d) {
    case Device::CPU: return "CPU";
    case Device::CUDA: return "CUDA";
  }
  return "unknown";
}

}  // namespace oxyd::backend
