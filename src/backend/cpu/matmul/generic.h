// The generic matmul tile, instantiated once per ISA file with that file's f32 dot: decode a
// chunk of a weight row to f32 (portable decoders) once, then dot it with every activation row.
// Used for the scalar variant and for formats that have no hand-written kernel for an ISA.
// Include only from matmul/*.cc, inside that file's own namespace (ISA flags differ per file).
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/kernel.h"
#include "core/dtype.h"

namespace oxyd::backend::cpu {

/// Dot::rows(w, x, x_stride, nr, len, acc): acc[r] += Σ_e w[e]·x[r·x_stride + e], r < nr ≤ 4.
template <class Dot>
void generic_tile(const TileArgs& t) {
  constexpr int64_t kChunk = 1024;  // a multiple of every block size (32, 256)
  alignas(64) float buf[kChunk];
  const DTypeTraits& tr = dtype_traits(t.wtype);
  const int64_t x_stride = t.a_stride / int64_t(sizeof(float));
  const float* x = reinterpret_cast<const float*>(t.a);
  for (int64_t j = 0; j < t.n; ++j) {
    const uint8_t* wrow = t.w + j * t.w_stride;
    for (int64_t i = 0; i < t.m; ++i) t.y[i * t.y_stride + j] = 0.0f;
    for (int64_t c0 = 0; c0 < t.k; c0 += kChunk) {
      const int64_t len = std::min(kChunk, t.k - c0);
      decode_row(t.wtype, wrow + c0 / tr.block_elems * tr.block_bytes, buf, len);
      for (int64_t i = 0; i < t.m; i += 4) {
        const int nr = int(std::min<int64_t>(4, t.m - i));
        float acc[4] = {0, 0, 0, 0};
        Dot::rows(buf, x + i * x_stride + c0, x_stride, nr, len, acc);
        for (int r = 0; r < nr; ++r) t.y[(i + r) * t.y_stride + j] += acc[r];
      }
    }
  }
}

}  // namespace oxyd::backend::cpu
