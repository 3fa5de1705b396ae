// IQ4_NL / IQ4_XS encoders: 4-bit indices into the non-linear codebook kIQ4NLValues, with ggml's
// reference search (quantize_row_iq4_nl_impl without an importance matrix, weights x²): pick the
// block scale by weighted least squares over a few candidate grids, then (IQ4_XS) quantize the
// eight sub-block scales to 6 bits and re-pick every index. Float order kept for bit-exactness.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/quant.h"
#include "core/quant_k.h"

namespace oxyd {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

// Nearest codebook entry to v (ties go to the upper one), by bisection of the sorted codebook.
int best_index_iq4(float v) {
  const int8_t* val = kIQ4NLValues;
  if (v <= val[0]) return 0;
  if (v >= val[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < val[mid]) hi = mid;
    else lo = mid;
  }
  return v - val[hi - 1] < val[hi] - v ? hi - 1 : hi;
}

// Scale of one 32-element sub-block; L gets its indices. ntry < 0: a single grid from max/-127
// (IQ4_NL); ntry > 0: also the 2*ntry+1 grids (itry - 127)/max (IQ4_XS). Returns 0 for a zero block.
float iq4_block_scale(const float* x, uint8_t* L, int ntry) {
  float weight[32];
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    weight[j] = x[j] * x[j];
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, 32);
    return 0;
  }
  const float v0 = kIQ4NLValues[0];
  float d = ntry > 0 ? -max / v0 : max / v0;
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const int l = best_index_iq4(id * x[j]);
    L[j] = uint8_t(l);
    const float q = kIQ4NLValues[l];
    sumqx += weight[j] * q * x[j];
    sumq2 += weight[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int itry = -ntry; itry <= ntry; ++itry) {
    id = (itry + kIQ4NLValues[0]) / max;
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = kIQ4NLValues[best_index_iq4(id * x[j])];
      sumqx += weight[j] * q * x[j];
      sumq2 += weight[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

void pack_nibbles(const uint8_t* L, uint8_t* qs, int num_sub_blocks) {
  for (int i = 0; i < num_sub_blocks; ++i)
    for (int j = 0; j < 16; ++j) qs[16 * i + j] = uint8_t(L[32 * i + j] | L[32 * i + 16 + j] << 4);
}

}  // namespace

void quantize_block_iq4_nl(const float* x, BlockIQ4_NL* y) {
  uint8_t L[32];
  y->d = f32_to_f16(iq4_block_scale(x, L, -1));
  pack_nibbles(L, y->qs, 1);
}

void quantize_block_iq4_xs(const float* x, BlockIQ4_XS* y) {
  uint8_t L[kQK_K];
  float scales[8];
  float max_scale = 0, amax_scale = 0;
  for (int ib = 0; ib < 8; ++ib) {
    scales[ib] = iq4_block_scale(x + 32 * ib, L + 32 * ib, 7);
    if (std::fabs(scales[ib]) > amax_scale) {
      amax_scale = std::fabs(scales[ib]);
      max_scale = scales[ib];
    }
  }
  // Sub-block scales as 6-bit multiples of d (stored +32); indices re-picked with the stored
  // scale (from the float d, as ggml does, not its f16 rounding).
  const float d = -max_scale / 32;
  y->d = f32_to_f16(d);
  y->scales_h = 0;
  const float id = d != 0.0f ? 1 / d : 0.f;
  for (int ib = 0; ib < 8; ++ib) {
    int l = std::max(-32, std::min(31, nearest_int(id * scales[ib])));
    const float dl = d * l;
    const float idl = dl != 0.0f ? 1 / dl : 0.f;
    for (int j = 0; j < 32; ++j) L[32 * ib + j] = uint8_t(best_index_iq4(idl * x[32 * ib + j]));
    l += 32;
    if (ib % 2 == 0) y->scales_l[ib / 2] = uint8_t(l & 0xF);
    else y->scales_l[ib / 2] |= uint8_t((l & 0xF) << 4);
    y->scales_h = uint16_t(y->scales_h | (l >> 4) << (2 * ib));
  }
  pack_nibbles(L, y->qs, 8);
}

}  // namespace oxyd
