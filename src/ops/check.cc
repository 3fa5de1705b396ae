// Argument checks of the op front ends (see check.h).
#include "ops/check.h"

#include "core/kv_quant.h"

namespace oxyd::ops::check {

void fail(std::string_view op, const std::string& msg) {
  throw Error(ErrorCode::INVALID_ARGUMENT, "ops::" + std::string(op) + ": " + msg);
}

void tensor(std::string_view op, const char* name, const Tensor& t, DType dtype, int rank) {
  if (t.dtype != dtype)
    fail(op, std::string(name) + " must be " + std::string(dtype_name(dtype)) + ", got " +
                 std::string(dtype_name(t.dtype)));
  if (rank > 0 && t.ndim != rank)
    fail(op, std::string(name) + " must have rank " + std::to_string(rank) + ", got shape " + t.shape_str());
  if (t.ndim == 0) fail(op, std::string(name) + " is an empty (rank-0) tensor view");
  for (int i = 0; i < t.ndim; ++i)
    if (t.shape[i] < 0) fail(op, std::string(name) + " has a negative dim: " + t.shape_str());
  if (!t.data && t.numel() > 0) fail(op, std::string(name) + " has no data pointer");
}

void kv_dtype(std::string_view op, const char* name, const Tensor& t) {
  if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
    fail(op, std::string(name) + " must be F32, F16 or BF16, got " + std::string(dtype_name(t.dtype)));
  tensor(op, name, t, t.dtype, 4);
}

void kv_cache(std::string_view op, const char* name, const Tensor& t, int64_t head_dim, KvFormat kv_format) {
  if (!kv_format_quantized(kv_format)) {
    kv_dtype(op, name, t);
    if (t.dtype != kv_format_dtype(kv_format))
      fail(op, std::string(name) + " is " + std::string(dtype_name(t.dtype)) + " but the KV format is " +
                   std::string(kv_format_name(kv_format)));
    dim(op, name, t, 3, head_dim, "head_dim");
    return;
  }
  tensor(op, name, t, DType::U8, 4);
  dim(op, name, t, 3, kv_format_row_bytes(kv_format, head_dim), "bytes of one quantized head vector");
}

void same_shape(std::string_view op, const char* a_name, const Tensor& a, const char* b_name, const Tensor& b) {
  bool same = a.ndim == b.ndim;
  for (int i = 0; same && i < a.ndim; ++i) same = a.shape[i] == b.shape[i];
  if (!same)
    fail(op, std::string(b_name) + " must have the shape of " + a_name + " " + a.shape_str() + ", got " +
                 b.shape_str());
}

void dim(std::string_view op, const char* name, const Tensor& t, int axis, int64_t expected, const char* what) {
  if (t.dim(axis) != expected)
    fail(op, std::string(name) + " " + t.shape_str() + ": dim " + std::to_string(axis) + " must be " +
                 std::to_string(expected) + " (" + what + ")");
}

}  // namespace oxyd::ops::check
