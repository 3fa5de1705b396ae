// Gated DeltaNet tensors of a GGUF written by llama.cpp's qwen35 converter (ArchSpec::
// gguf_lin_v_heads_tiled): with Hv = r·Hk value heads, the converter moves the value heads from
// the HF order, grouped by key head (HF head g = ki·r + vi), to the tiled order (position
// vi·Hk + ki), in attn_qkv's v rows, attn_gate, ssm_alpha / ssm_beta, ssm_a, ssm_dt, ssm_conv1d's
// v channels and ssm_out's columns. These copies put them back in the HF order, so the layer and
// its kernels (value head j reads key head j / r) run unchanged.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::model {

/// Position in the tiled order of HF value head g.
inline int64_t tiled_position(int64_t g, int64_t hk, int64_t hv) {
  const int64_t r = hv / hk;
  return (g % r) * hk + g / r;
}

/// t [rows, cols] (any dtype, whole rows moved) → out (t.nbytes() bytes): rows
/// [first, first + hv·per_head) back in the HF head order (per_head rows a head), the others as they are.
void rows_from_tiled(const Tensor& t, int64_t first, int64_t per_head, int64_t hk, int64_t hv, void* out);

/// The dtype cols_from_tiled writes for t [rows, hv·dv]: t's own where a head's dv columns are
/// whole blocks, F32 otherwise (rows dequantized: exact, the format's values themselves).
DType cols_from_tiled_dtype(const Tensor& t, int64_t dv);
/// t [rows, hv·dv] → out (rows × hv·dv of cols_from_tiled_dtype): columns back in the HF head order.
void cols_from_tiled(const Tensor& t, int64_t dv, int64_t hk, int64_t hv, void* out);

/// v [hv·per_head] F32 → out: back in the HF head order.
void vec_from_tiled(const float* v, int64_t per_head, int64_t hk, int64_t hv, float* out);

}  // namespace oxyd::model
