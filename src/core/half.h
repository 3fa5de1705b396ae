// Scalar conversions between float and the 16/8-bit float formats stored in model files:
// IEEE binary16 (F16), bfloat16 (BF16, upper half of an f32) and FP8 E4M3FN. Round to nearest
// even on the way down, exact on the way up. Header-only so kernels can inline them.
#pragma once

#include <cstdint>
#include <cstring>

namespace oxyd {

inline float bits_to_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t f32_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float bf16_to_f32(uint16_t h) { return bits_to_f32(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                          // round to nearest even
  return uint16_t(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_to_f32(sign);
    // subnormal: value = mant * 2^-24
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_f32(sign | 0x7f800000u | (mant << 13));
  return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t f32_to_f16(float f) {
  uint32_t u = f32_to_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u;             // NaN
  if (u >= 0x477ff000u) return sign | 0x7c00u;            // overflow → inf (≥ 65520)
  if (u < 0x38800000u) {                                  // subnormal or zero in f16
    if (u < 0x33000000u) return sign;                     // < 2^-25 rounds to 0
    const uint32_t exp = u >> 23;
    const uint32_t mant = (u & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;                     // 14..24 (+ 10 bits kept)
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return sign | uint16_t(r);
  }
  uint32_t r = ((u >> 13) - (112u << 10));
  const uint32_t rem = u & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return sign | uint16_t(r);
}

/// FP8 E4M3FN (no infinities; S.1111.111 is NaN; max ±448).
inline float fp8_e4m3_to_f32(uint8_t v) {
  const bool neg = v & 0x80;
  const int e = (v >> 3) & 0xf;
  const int m = v & 7;
  float r;
  if (e == 15 && m == 7) return bits_to_f32(0x7fc00000u);
  if (e == 0) r = float(m) * (1.0f / 512.0f);  // (m/8) * 2^-6
  else r = (1.0f + float(m) / 8.0f) * bits_to_f32(uint32_t(e - 7 + 127) << 23);
  return neg ? -r : r;
}

}  // namespace oxyd
