// K-quant weight encoders (Q2_K..Q6_K), the reference algorithms of ggml without an importance
// matrix: per sub-block a scale (and min) search over a few candidate grids, then the sub-block
// scales are themselves quantized to 4/6/8 bits and every value is re-rounded against the stored
// scales. The float expressions keep ggml's order so output bytes are identical to llama.cpp's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/quant.h"
#include "core/quant_k.h"

namespace oxyd {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

// Signed symmetric levels in [-nmax, nmax-1], weighted by x² (ggml make_qx_quants, rmse_type 1):
// tries 19 scales around -nmax/max and keeps the one with the best weighted least-squares fit.
// L gets level + nmax. Returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, size_t(n));
    return 0.f;
  }
  auto fit = [&](float iscale, float* sumlx, float* suml2) {
    *sumlx = 0;
    *suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
      const float w = x[i] * x[i];
      *sumlx += w * x[i] * l;
      *suml2 += w * l * l;
    }
  };
  auto assign = [&](float iscale) {
    for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))));
  };
  float iscale = -nmax / max;
  float sumlx, suml2;
  fit(iscale, &sumlx, &suml2);
  assign(iscale);
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    fit(iscale, &sumlx, &suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      assign(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Asymmetric levels in [0, nmax] with a min ≤ 0 (ggml make_qkx2_quants): weighted least squares
// of scale and min over nstep+1 candidate grids. L gets the levels; *the_min = -min (≥ 0).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::memset(L, 0, size_t(n));
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = uint8_t(std::max(0, std::min(nmax, l)));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        std::memcpy(L, Laux, size_t(n));
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Signed levels in [-nmax, nmax-1] refined one element at a time (ggml make_q3_quants, do_rmse).
// L gets level + nmax (0 for an all-zero group). Returns the scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, size_t(n));
    return 0.f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        int new_l = nearest_int(x[i] * sl2 / slx);
        new_l = std::max(-nmax, std::min(nmax - 1, new_l));
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Packs 2-bit levels of a 256 block: element 128h + 32s + l → bits 2s of qs[32h + l].
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = uint8_t(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

// Stores 8 six-bit scales and mins into the 12-byte Q4_K/Q5_K layout (inverse of get_scale_min_k4).
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* s) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = ls[j];
      s[j + 4] = lm[j];
    } else {
      s[j + 4] = uint8_t((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
      s[j - 4] |= uint8_t((ls[j] >> 4) << 6);
      s[j] |= uint8_t((lm[j] >> 4) << 6);
    }
  }
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fills d, dmin, scales and the levels L [256].
void quantize_q45_k(const float* x, int nmax, float rmin, float rdelta, int nstep, uint16_t* d_out,
                    uint16_t* dmin_out, uint8_t* scales_out, uint8_t* L) {
  uint8_t Laux[32];
  float weights[32], mins[8], scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
    lm[j] = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
  }
  std::memset(scales_out, 0, kKScaleBytes);
  pack_scale_min_k4(ls, lm, scales_out);
  *d_out = f32_to_f16(max_scale / 63.f);
  *dmin_out = f32_to_f16(max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    get_scale_min_k4(j, scales_out, &sc, &m);
    const float d = f16_to_f32(*d_out) * sc;
    if (d == 0.0f) continue;
    const float dm = f16_to_f32(*dmin_out) * m;
    for (int i = 0; i < 32; ++i)
      L[32 * j + i] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[32 * j + i] + dm) / d))));
  }
}

}  // namespace

void quantize_block_q2_k(const float* x, BlockQ2_K* y) {
  uint8_t L[kQK_K], Laux[16];
  float weights[16], mins[16], scales[16];
  const float q4scale = 15.f;
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  if (max_scale > 0) {
    const float iscale = q4scale / max_scale;
    for (int j = 0; j < 16; ++j) y->scales[j] = uint8_t(nearest_int(iscale * scales[j]));
    y->d = f32_to_f16(max_scale / q4scale);
  } else {
    std::memset(y->scales, 0, 16);
    y->d = f32_to_f16(0.f);
  }
  if (max_min > 0) {
    const float iscale = q4scale / max_min;
    for (int j = 0; j < 16; ++j) y->scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
    y->dmin = f32_to_f16(max_min / q4scale);
  } else {
    y->dmin = f32_to_f16(0.f);
  }
  for (int j = 0; j < 16; ++j) {
    const float d = f16_to_f32(y->d) * (y->scales[j] & 0xF);
    if (d == 0.0f) continue;
    const float dm = f16_to_f32(y->dmin) * (y->scales[j] >> 4);
    for (int i = 0; i < 16; ++i)
      L[16 * j + i] = uint8_t(std::max(0, std::min(3, nearest_int((x[16 * j + i] + dm) / d))));
  }
  pack_2bit(L, y->qs);
}

void quantize_block_q3_k(const float* x, BlockQ3_K* y) {
  int8_t L[kQK_K];
  float scales[16];
  float max_scale = 0, amax = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    const float scale = std::fabs(scales[j]);
    if (scale > amax) {
      amax = scale;
      max_scale = scales[j];
    }
  }
  std::memset(y->scales, 0, 12);
  if (max_scale != 0.0f) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < 16; ++j) {
      int l = int(int8_t(nearest_int(iscale * scales[j])));
      l = std::max(-32, std::min(31, l)) + 32;
      if (j < 8) y->scales[j] = uint8_t(l & 0xF);
      else y->scales[j - 8] |= uint8_t((l & 0xF) << 4);
      y->scales[j % 4 + 8] |= uint8_t((l >> 4) << (2 * (j / 4)));
    }
    y->d = f32_to_f16(1 / iscale);
  } else {
    y->d = f32_to_f16(0.f);
  }
  int8_t sc[16];
  unpack_q3_k_scales(y->scales, sc);
  for (int j = 0; j < 16; ++j) {
    const float d = f16_to_f32(y->d) * sc[j];
    if (d == 0.0f) continue;
    for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::max(-4, std::min(3, nearest_int(x[16 * j + i] / d))) + 4);
  }
  // High bit of element e goes to bit e/32 of hmask[e%32]; the low 2 bits pack like Q2_K.
  std::memset(y->hmask, 0, 32);
  uint8_t low[kQK_K];
  for (int e = 0; e < kQK_K; ++e) {
    int l = L[e];
    if (l > 3) {
      y->hmask[e % 32] |= uint8_t(1 << (e / 32));
      l -= 4;
    }
    low[e] = uint8_t(l);
  }
  pack_2bit(low, y->qs);
}

void quantize_block_q4_k(const float* x, BlockQ4_K* y) {
  uint8_t L[kQK_K];
  quantize_q45_k(x, 15, -1.f, 0.1f, 20, &y->d, &y->dmin, y->scales, L);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) y->qs[32 * c + l] = uint8_t(L[64 * c + l] | L[64 * c + 32 + l] << 4);
}

void quantize_block_q5_k(const float* x, BlockQ5_K* y) {
  uint8_t L[kQK_K];
  quantize_q45_k(x, 31, -0.5f, 0.1f, 15, &y->d, &y->dmin, y->scales, L);
  std::memset(y->qh, 0, 32);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      int l1 = L[64 * c + l], l2 = L[64 * c + 32 + l];
      if (l1 > 15) {
        l1 -= 16;
        y->qh[l] |= uint8_t(1 << (2 * c));
      }
      if (l2 > 15) {
        l2 -= 16;
        y->qh[l] |= uint8_t(2 << (2 * c));
      }
      y->qs[32 * c + l] = uint8_t(l1 | l2 << 4);
    }
  }
}

void quantize_block_q6_k(const float* x, BlockQ6_K* y) {
  int8_t L[kQK_K];
  float scales[16];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
    const float abs_scale = std::fabs(scales[ib]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[ib];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(y, 0, sizeof(*y));
    return;
  }
  const float iscale = -128.f / max_scale;
  y->d = f32_to_f16(1 / iscale);
  for (int ib = 0; ib < 16; ++ib) y->scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
  for (int j = 0; j < 16; ++j) {
    const float d = f16_to_f32(y->d) * y->scales[j];
    if (d == 0.0f) continue;
    for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::max(-32, std::min(31, nearest_int(x[16 * j + i] / d))) + 32);
  }
  for (int h = 0; h < 2; ++h) {
    const int8_t* Lh = L + 128 * h;
    uint8_t* ql = y->ql + 64 * h;
    uint8_t* qh = y->qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      ql[l] = uint8_t((Lh[l] & 0xF) | (Lh[l + 64] & 0xF) << 4);
      ql[l + 32] = uint8_t((Lh[l + 32] & 0xF) | (Lh[l + 96] & 0xF) << 4);
      qh[l] = uint8_t((Lh[l] >> 4) | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 | (Lh[l + 96] >> 4) << 6);
    }
  }
}

}  // namespace oxyd
