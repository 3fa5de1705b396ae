// KV-cache head-vector quantization for `--kv-quant lossless|balanced|aggressive` (8/6/5 bits;
// FEATURES-REFERENCE.md §1.11, TurboQuant-style MSE quantizer, no QJL). One head vector x of d
// values (one token, one KV head, K or V alike) is stored as
//   [f32 ‖x‖₂ (4 bytes, little-endian)] [d codes of b bits, packed LSB-first: code i occupies
//   bits i·b .. i·b+b−1 of the byte string] = kv_quant_row_bytes(d, b) = 4 + ceil(d·b / 8) bytes.
// Codes: u = x / ‖x‖, y = R·u with R = (1/√d)·H·D when d is a power of two (D = diag of the fixed
// ±1 signs below, H the unnormalized Walsh–Hadamard matrix in Sylvester order), else R = D;
// code_i = the nearest Lloyd-Max centroid of N(0, 1) (2^b levels) to √d·y_i, i.e. the number of
// decision thresholds (midpoints of adjacent centroids) strictly below √d·y_i. Reconstruction:
// x̂ = ‖x‖ · Rᵀ·ŷ, ŷ_i = c[code_i] / √d. R is orthonormal, so q·x̂ = ‖x‖·(R q)·ŷ: attention rotates
// q once and reads keys and values in the rotated space (rotated()), un-rotating its output once.
// Signs: s_i = −1 when bit 63 of the i-th splitmix64 output (state seeded kKvQuantSignSeed, the
// state advanced before each output) is set, else +1 — the same vector for every layer and head.
// 5, 6 and 8 bits (the modes aggressive, balanced, lossless) are uniform instead (kv_quant_uniform):
// [f32 scale] [codes], z = R·x (not normalized), L = 2^(b−1) − 1, scale = max_i |z_i| / L,
// c_i = round(z_i / scale) (ties to even) in −L..L; 8 bits store c_i as an int8 byte, 5 and 6 bits
// c_i + L packed as above; read as c_i · scale, one f32 product (c_i exact in f32). That decodes
// with a convert and a multiply, as fast as an f16 cache on AVX2, where 32 to 256 Lloyd-Max levels
// took 4-8 table lookups or a gather per 8 values. A rotated head vector's own range fits it about
// as well as a codebook for N(0, 1): KL to the f16 cache within −20..+7 % of the Lloyd-Max levels'
// (bench/kv_quant_quality.py; docs/performance-history.md, session 22). 2 to 4 bits keep the codebook.
// tools/kv_quant_oracle.py implements this independently (tests/core/kv_quant_test.cc).
#pragma once

#include <cstdint>
#include <vector>

namespace oxyd {

/// The widest code: 8 bits (256 levels).
inline constexpr int kKvQuantMaxBits = 8;
/// Whether `bits` are stored as uniform codes instead of Lloyd-Max ones (see above): 5, 6 and 8.
inline constexpr bool kv_quant_uniform(int bits) { return bits == 5 || bits == 6 || bits == 8; }
/// The largest head dimension a quantized cache takes (Gemma 4's global layers use 512).
inline constexpr int64_t kKvQuantMaxHeadDim = 1024;
inline constexpr uint64_t kKvQuantSignSeed = 0x6b765f7369676e73ull;  // "kv_signs"

/// Bytes of one quantized head vector of `head_dim` values at `bits` (2..8).
inline int64_t kv_quant_row_bytes(int64_t head_dim, int bits) { return 4 + (head_dim * bits + 7) / 8; }

/// The 2^bits Lloyd-Max reconstruction levels of the standard normal, ascending (computed once by
/// Lloyd's iteration with the exact conditional means; bits in 1..8).
const std::vector<double>& lloyd_max_normal_centroids(int bits);

/// The quantizer of one (head_dim, bits): immutable, shared, thread-safe (kv_quantizer()).
class KvQuantizer {
 public:
  KvQuantizer(int64_t head_dim, int bits);
  int64_t head_dim() const { return d_; }
  int bits() const { return bits_; }
  int64_t row_bytes() const { return kv_quant_row_bytes(d_, bits_); }
  /// x [d] → dst [row_bytes()].
  void quantize(const float* x, uint8_t* dst) const;
  /// Whether codes are uniform (kv_quant_uniform): no levels, a row's first 4 bytes its scale.
  bool uniform() const { return kv_quant_uniform(bits_); }
  /// Uniform codes: L, the largest |c_i| (127 at 8 bits, 31 at 6, 15 at 5).
  int uniform_limit() const { return (1 << (bits_ - 1)) - 1; }
  /// src [row_bytes()] → x̂ [d] in the original space.
  void dequantize(const uint8_t* src, float* out) const;
  /// src → ‖x‖·ŷ [d], the vector in the rotated space (R x̂).
  void dequantize_rotated(const uint8_t* src, float* out) const;
  /// y = R x, and x = Rᵀ y (in place allowed: x == y).
  void rotate(const float* x, float* y) const;
  void unrotate(const float* y, float* x) const;
  /// The ±1 signs [d] and the levels c / √d [2^bits] used by dequantize_rotated (none if uniform()).
  const std::vector<float>& signs() const { return signs_; }
  const std::vector<float>& scaled_levels() const { return levels_; }

 private:
  void quantize_uniform(const float* x, uint8_t* dst) const;
  int64_t d_;
  int bits_;
  bool pow2_;
  std::vector<float> signs_, levels_;
  std::vector<double> thresholds_;  // 2^bits − 1 midpoints of the N(0, 1) levels
};

/// The shared quantizer for (head_dim, bits); created on first use.
const KvQuantizer& kv_quantizer(int64_t head_dim, int bits);

}  // namespace oxyd
