// KvQuantizer (see kv_quant.h). Quantization runs in double so that the codes are those of the
// exact rotation (the oracle's, tools/kv_quant_oracle.py); reading runs in float.
#include "core/kv_quant.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/splitmix64.h"

namespace oxyd {
namespace {

// In-place unnormalized Walsh–Hadamard transform (Sylvester order) of n = 2^k values.
template <typename T>
void wht(T* v, int64_t n) {
  for (int64_t h = 1; h < n; h *= 2)
    for (int64_t i = 0; i < n; i += 2 * h)
      for (int64_t j = i; j < i + h; ++j) {
        const T a = v[j], b = v[j + h];
        v[j] = a + b, v[j + h] = a - b;
      }
}

double normal_pdf(double x) { return std::isinf(x) ? 0.0 : std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double p) {  // Φ⁻¹ by bisection (only seeds Lloyd's iteration)
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::vector<double> lloyd_max(int bits) {
  const int n = 1 << bits;
  std::vector<double> c(static_cast<size_t>(n)), t(static_cast<size_t>(n + 1));
  // Start from the high-resolution optimum (levels at the quantiles of N(0, 3), density ∝ pdf^⅓):
  // close enough that 256 levels converge in a few thousand steps rather than hundreds of thousands.
  for (int k = 0; k < n; ++k) c[size_t(k)] = std::sqrt(3.0) * normal_quantile((k + 0.5) / n);
  t[0] = -INFINITY, t[size_t(n)] = INFINITY;
  // 2..4 bits converge to 1e-12 in under a thousand steps; 8 bits creeps (each step ~1e-9 by
  // then), so it stops at 20,000 steps (~0.2 s once per process): its levels are Lloyd-Max to ~1e-7.
  for (int it = 0; it < 20000; ++it) {
    for (int k = 1; k < n; ++k) t[size_t(k)] = 0.5 * (c[size_t(k - 1)] + c[size_t(k)]);
    double change = 0;
    for (int k = 0; k < n; ++k) {
      // E[X | t_k < X < t_{k+1}] for X ~ N(0, 1)
      const double a = t[size_t(k)], b = t[size_t(k + 1)];
      const double m = (normal_pdf(a) - normal_pdf(b)) / (normal_cdf(b) - normal_cdf(a));
      change = std::max(change, std::abs(m - c[size_t(k)]));
      c[size_t(k)] = m;
    }
    if (change < 1e-12) break;
  }
  return c;
}

}  // namespace

const std::vector<double>& lloyd_max_normal_centroids(int bits) {
  if (bits < 1 || bits > kKvQuantMaxBits)
    throw_error(ErrorCode::INVALID_ARGUMENT, "kv quant: bits must be 1.." + std::to_string(kKvQuantMaxBits) + ", got " + std::to_string(bits));
  static std::mutex mu;
  static std::vector<double> levels[kKvQuantMaxBits + 1];
  std::lock_guard lock(mu);
  if (levels[bits].empty()) levels[bits] = lloyd_max(bits);
  return levels[bits];
}

KvQuantizer::KvQuantizer(int64_t head_dim, int bits) : d_(head_dim), bits_(bits) {
  if (head_dim <= 0 || head_dim > kKvQuantMaxHeadDim)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "kv quant: head_dim must be 1.." + std::to_string(kKvQuantMaxHeadDim) + ", got " + std::to_string(head_dim));
  if (bits < 2 || bits > kKvQuantMaxBits)
    throw_error(ErrorCode::INVALID_ARGUMENT, "kv quant: bits must be 2.." + std::to_string(kKvQuantMaxBits) + ", got " + std::to_string(bits));
  pow2_ = (head_dim & (head_dim - 1)) == 0;
  uint64_t state = kKvQuantSignSeed;
  signs_.resize(size_t(head_dim));
  for (float& s : signs_) s = (splitmix64_next(state) >> 63) ? -1.0f : 1.0f;
  if (kv_quant_uniform(bits)) return;  // no codebook: uniform codes (kv_quant.h)
  const std::vector<double>& c = lloyd_max_normal_centroids(bits);
  const double inv_sqrt_d = 1.0 / std::sqrt(double(head_dim));
  for (double v : c) levels_.push_back(float(v * inv_sqrt_d));
  for (size_t k = 1; k < c.size(); ++k) thresholds_.push_back(0.5 * (c[k - 1] + c[k]));
}

void KvQuantizer::quantize(const float* x, uint8_t* dst) const {
  if (uniform()) return quantize_uniform(x, dst);
  const size_t d = size_t(d_);
  double y[kKvQuantMaxHeadDim];  // on the stack: quantize runs on any thread, pool or not
  double ss = 0;
  for (size_t i = 0; i < d; ++i) ss += double(x[i]) * double(x[i]);
  const double norm = std::sqrt(ss), inv = norm > 0 ? 1.0 / norm : 0.0;
  for (size_t i = 0; i < d; ++i) y[i] = double(x[i]) * inv * double(signs_[i]);
  if (pow2_) wht(y, d_);  // R = H·D/√d; then √d·y = H·D·u
  else for (size_t i = 0; i < d; ++i) y[i] *= std::sqrt(double(d));  // R = D; √d·y
  const float nf = float(norm);
  std::memcpy(dst, &nf, 4);
  uint8_t* codes = dst + 4;
  std::memset(codes, 0, size_t(row_bytes() - 4));
  // code_i = the number of thresholds below y_i, by a branch-free binary search over the sorted
  // thresholds (a linear search per value mispredicts on random data).
  const double* t = thresholds_.data();
  for (size_t i = 0; i < d; ++i) {
    uint32_t code = 0;
    for (uint32_t step = 1u << (bits_ - 1); step > 0; step >>= 1) code += y[i] > t[code + step - 1] ? step : 0u;
    const size_t bit = i * size_t(bits_);
    codes[bit >> 3] |= uint8_t(code << (bit & 7));
    if ((bit & 7) + size_t(bits_) > 8) codes[(bit >> 3) + 1] |= uint8_t(code >> (8 - (bit & 7)));
  }
}

// z = R·x in double; scale = max |z_i| / L rounded to f32; c_i = z_i / scale rounded to the
// nearest integer (ties to even): an int8 byte at 8 bits, c_i + L packed at 5 and 6.
void KvQuantizer::quantize_uniform(const float* x, uint8_t* dst) const {
  const size_t d = size_t(d_);
  double z[kKvQuantMaxHeadDim];
  for (size_t i = 0; i < d; ++i) z[i] = double(x[i]) * double(signs_[i]);
  if (pow2_) {
    wht(z, d_);
    const double s = 1.0 / std::sqrt(double(d));
    for (size_t i = 0; i < d; ++i) z[i] *= s;
  }
  double m = 0;
  for (size_t i = 0; i < d; ++i) m = std::max(m, std::abs(z[i]));
  const double L = uniform_limit();
  const float scale = float(m / L);
  std::memcpy(dst, &scale, 4);
  uint8_t* codes = dst + 4;
  if (bits_ != 8) std::memset(codes, 0, size_t(row_bytes() - 4));
  for (size_t i = 0; i < d; ++i) {
    double c = scale > 0 ? std::nearbyint(z[i] / double(scale)) : 0.0;
    if (!std::isfinite(c)) c = 0;  // a NaN or infinite input: no undefined conversion
    c = std::clamp(c, -L, L);
    if (bits_ == 8) {
      codes[i] = uint8_t(int8_t(c));
      continue;
    }
    const uint32_t code = uint32_t(c + L);
    const size_t bit = i * size_t(bits_);
    codes[bit >> 3] |= uint8_t(code << (bit & 7));
    if ((bit & 7) + size_t(bits_) > 8) codes[(bit >> 3) + 1] |= uint8_t(code >> (8 - (bit & 7)));
  }
}

void KvQuantizer::dequantize_rotated(const uint8_t* src, float* out) const {
  float norm;
  std::memcpy(&norm, src, 4);
  const uint8_t* codes = src + 4;
  if (bits_ == 8) {  // uniform: norm holds the scale
    for (int64_t i = 0; i < d_; ++i) out[i] = float(int8_t(codes[i])) * norm;
    return;
  }
  if (uniform()) {
    const float L = float(uniform_limit());
    const uint32_t mask = (1u << bits_) - 1;
    for (int64_t i = 0; i < d_; ++i) {
      const size_t bit = size_t(i) * size_t(bits_), byte = bit >> 3;
      uint32_t v = codes[byte];
      if ((bit & 7) + size_t(bits_) > 8) v |= uint32_t(codes[byte + 1]) << 8;
      out[i] = (float((v >> (bit & 7)) & mask) - L) * norm;
    }
    return;
  }
  float lv[1 << kKvQuantMaxBits];  // the levels times this vector's norm
  for (size_t k = 0; k < levels_.size(); ++k) lv[k] = norm * levels_[k];
  int64_t i = 0;
  if (bits_ == 4) {  // two codes a byte
    for (; i + 2 <= d_; i += 2) out[i] = lv[codes[i >> 1] & 15], out[i + 1] = lv[codes[i >> 1] >> 4];
  } else if (bits_ == 2) {  // four codes a byte
    for (; i + 4 <= d_; i += 4) {
      const uint8_t c = codes[i >> 2];
      out[i] = lv[c & 3], out[i + 1] = lv[(c >> 2) & 3], out[i + 2] = lv[(c >> 4) & 3], out[i + 3] = lv[c >> 6];
    }
  }
  const uint32_t mask = (1u << bits_) - 1;
  for (; i < d_; ++i) {
    const size_t bit = size_t(i) * size_t(bits_), byte = bit >> 3;
    uint32_t v = codes[byte];
    if ((bit & 7) + size_t(bits_) > 8) v |= uint32_t(codes[byte + 1]) << 8;
    out[i] = lv[(v >> (bit & 7)) & mask];
  }
}

void KvQuantizer::dequantize(const uint8_t* src, float* out) const {
  dequantize_rotated(src, out);
  unrotate(out, out);
}

void KvQuantizer::rotate(const float* x, float* y) const {
  for (int64_t i = 0; i < d_; ++i) y[i] = x[i] * signs_[size_t(i)];
  if (!pow2_) return;
  wht(y, d_);
  const float s = 1.0f / std::sqrt(float(d_));
  for (int64_t i = 0; i < d_; ++i) y[i] *= s;
}

void KvQuantizer::unrotate(const float* y, float* x) const {
  if (x != y) std::memcpy(x, y, size_t(d_) * sizeof(float));
  if (pow2_) {
    wht(x, d_);  // H is symmetric: Rᵀ = D·H/√d
    const float s = 1.0f / std::sqrt(float(d_));
    for (int64_t i = 0; i < d_; ++i) x[i] *= s;
  }
  for (int64_t i = 0; i < d_; ++i) x[i] *= signs_[size_t(i)];
}

const KvQuantizer& kv_quantizer(int64_t head_dim, int bits) {
  // Attention asks for its quantizer per chunk of keys: a lock-free table answers after the first
  // time (a quantizer is never destroyed, so a published pointer stays valid).
  constexpr int64_t kFastDims = 1024;
  static std::atomic<const KvQuantizer*> fast[kKvQuantMaxBits + 1][kFastDims + 1] = {};
  const bool in_table = head_dim > 0 && head_dim <= kFastDims && bits >= 0 && bits <= kKvQuantMaxBits;
  if (in_table)
    if (const KvQuantizer* q = fast[bits][head_dim].load(std::memory_order_acquire)) return *q;
  static std::mutex mu;
  static std::map<std::pair<int64_t, int>, std::unique_ptr<KvQuantizer>> cache;
  std::lock_guard lock(mu);
  auto& q = cache[{head_dim, bits}];
  if (!q) q = std::make_unique<KvQuantizer>(head_dim, bits);
  if (in_table) fast[bits][head_dim].store(q.get(), std::memory_order_release);
  return *q;
}

}  // namespace oxyd
