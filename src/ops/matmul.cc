// ops::matmul front end: validation, then dispatch on device (CPU now; CUDA joins later).
#include "ops/matmul.h"

#include <string>

#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/pack.h"
#include "core/error.h"

namespace oxyd::ops {

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  if (x.dtype != DType::F32 || y.dtype != DType::F32)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: x and y must be F32, got x " +
                    std::string(dtype_name(x.dtype)) + ", y " + std::string(dtype_name(y.dtype)));
  if (w.ndim != 2)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: weight must be 2-D [n, k], got " + w.shape_str());
  if (x.ndim < 1 || y.ndim < 1 || x.cols() != w.cols() || y.cols() != w.dim(0) || x.rows() != y.rows())
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: shapes do not match: x " + x.shape_str() +
                    " · w " + w.shape_str() + "ᵀ → y " + y.shape_str() +
                    " (expected x [m, k], w [n, k], y [m, n])");
  if (!backend::cpu::decodable(w.dtype))
    throw_error(ErrorCode::UNSUPPORTED, "matmul: no kernel for weight dtype " + std::string(dtype_name(w.dtype)));
  const DTypeTraits& tr = dtype_traits(w.dtype);
  if (w.cols() % tr.block_elems != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: k = " + std::to_string(w.cols()) +
                    " is not a multiple of the " + std::string(tr.name) + " block of " +
                    std::to_string(tr.block_elems));
  if (!x.data || !w.data || !y.data)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: null data pointer");
  if (x.device != w.device || x.device != y.device)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: x, w and y must be on the same device");
  switch (x.device) {
    case Device::CPU: return backend::cpu::matmul(x, w, y);
    default: throw_error(ErrorCode::UNSUPPORTED, "matmul: no backend for this device yet");
  }
}

namespace {
bool packs_shape(DType t, int64_t rows, int64_t cols) {
  return cols % 32 == 0 && rows > 0 && backend::cpu::matmul_packs(t);
}
}  // namespace

bool matmul_wants_packed(const Tensor& w) {
  return w.device == Device::CPU && w.ndim == 2 && w.data && packs_shape(w.dtype, w.rows(), w.cols());
}
int64_t matmul_packed_extra_bytes(DType t, int64_t rows, int64_t cols) {
  if (!packs_shape(t, rows, cols)) return 0;
  return backend::cpu::matmul_packed_bytes(t, rows, cols) - rows * dtype_row_bytes(t, cols);
}
int64_t matmul_packed_bytes(const Tensor& w) {
  return backend::cpu::matmul_packed_bytes(w.dtype, w.rows(), w.cols());
}
void matmul_pack(Tensor& w, uint8_t* out) {
  const backend::cpu::PackLayout l = backend::cpu::matmul_pack_layout(w.dtype);
  backend::cpu::matmul_pack(w, l, out);
  w.packed = out;
  w.packed_layout = uint8_t(l);
}

int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k) {
  if (!backend::cpu::decodable(wtype)) return 0;
  return backend::cpu::matmul_scratch_bytes(wtype, m, k);
}
int64_t matmul_scratch_held() { return backend::cpu::matmul_scratch_held(); }
int64_t matmul_scratch_used() { return backend::cpu::matmul_scratch_used(); }
void matmul_reserve_scratch(int64_t bytes) { backend::cpu::matmul_reserve_scratch(bytes); }

}  // namespace oxyd::ops
