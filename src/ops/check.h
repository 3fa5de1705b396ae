// Shape / dtype / device checks shared by the op front ends. Each throws oxyd::Error naming the
// op and the argument ("ops::rms_norm: weight must be F32, got BF16"). Used once per op call,
// before dispatch; backends never re-check.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/kv_format.h"
#include "core/tensor.h"

namespace oxyd::ops::check {

[[noreturn]] void fail(std::string_view op, const std::string& msg);
/// t has this dtype, a non-null data pointer (unless empty) and, if rank > 0, that rank.
void tensor(std::string_view op, const char* name, const Tensor& t, DType dtype, int rank = 0);
/// t is F32 | F16 | BF16.
void kv_dtype(std::string_view op, const char* name, const Tensor& t);
/// A rank-4 KV cache of `kv_format`: its dtype with last dim head_dim, or for Q4 / Q3 / Q2 U8 with
/// last dim kv_format_row_bytes(kv_format, head_dim).
void kv_cache(std::string_view op, const char* name, const Tensor& t, int64_t head_dim, KvFormat kv_format);
void same_shape(std::string_view op, const char* a_name, const Tensor& a, const char* b_name, const Tensor& b);
void dim(std::string_view op, const char* name, const Tensor& t, int axis, int64_t expected, const char* what);

}  // namespace oxyd::ops::check
