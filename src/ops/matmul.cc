// ops::matmul front end: validation, then dispatch on the device of the tensors (ops/dispatch.h).
#include "ops/matmul.h"

#include <string>

#include "core/error.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

namespace {

// The checks of matmul (ops/matmul.h); the backend of the tensors' device.
backend::Backend& checked(const Tensor& x, const Tensor& w, const Tensor& y) {
  if (x.dtype != DType::F32 || y.dtype != DType::F32)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: x and y must be F32, got x " +
                    std::string(dtype_name(x.dtype)) + ", y " + std::string(dtype_name(y.dtype)));
  if (w.ndim != 2)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: weight must be 2-D [n, k], got " + w.shape_str());
  if (x.ndim < 1 || y.ndim < 1 || x.cols() != w.cols() || y.cols() != w.dim(0) || x.rows() != y.rows())
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: shapes do not match: x " + x.shape_str() +
                    " · w " + w.shape_str() + "ᵀ → y " + y.shape_str() +
                    " (expected x [m, k], w [n, k], y [m, n])");
  if (x.device != w.device || x.device != y.device)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: x, w and y must be on the same device");
  backend::Backend& b = device_backend(x.device, "matmul");
  if (!b.has_weight_kernel(w.dtype))
    throw_error(ErrorCode::UNSUPPORTED, "matmul: no kernel for weight dtype " + std::string(dtype_name(w.dtype)));
  const DTypeTraits& tr = dtype_traits(w.dtype);
  if (w.cols() % tr.block_elems != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: k = " + std::to_string(w.cols()) +
                    " is not a multiple of the " + std::string(tr.name) + " block of " +
                    std::to_string(tr.block_elems));
  if (!x.data || !w.data || !y.data)
    throw_error(ErrorCode::INVALID_ARGUMENT, "matmul: null data pointer");
  return b;
}

}  // namespace

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) { checked(x, w, y).matmul(x, w, y); }

void matmul_same_x(const Tensor& x, std::initializer_list<backend::MatmulOut> outs) {
  backend::Backend* b = nullptr;
  for (const backend::MatmulOut& o : outs) {
    b = &checked(x, *o.w, *o.y);
    const auto lo = [](const Tensor& t) { return static_cast<const uint8_t*>(t.data); };
    if (lo(*o.y) < lo(x) + x.nbytes() && lo(x) < lo(*o.y) + o.y->nbytes())
      throw_error(ErrorCode::INVALID_ARGUMENT, "matmul_same_x: an output overlaps x");
  }
  if (b) b->matmul_same_x(x, outs.begin(), int(outs.size()));
}

}  // namespace oxyd::ops
