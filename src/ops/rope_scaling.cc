// rope_frequencies (see rope_scaling.h). Follows transformers' modeling_rope_utils step by
// step; the exponent 2i/dim is rounded to float32 first, as HF does (torch float32 arange),
// so the table matches HF's to ~1 ulp rather than the exact real-number value.
#include "ops/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace oxyd::ops {
namespace {

[[noreturn]] void bad(const std::string& msg) {
  throw Error(ErrorCode::INVALID_ARGUMENT, "rope scaling: " + msg);
}

// base^(-(2i)/dim) for i < n, with HF's float32 exponent.
std::vector<double> base_inv_freq(double base, int64_t n, int64_t dim) {
  std::vector<double> inv(n);
  for (int64_t i = 0; i < n; ++i) inv[i] = 1.0 / std::pow(base, double(float(2 * i) / float(dim)));
  return inv;
}

double required_factor(const RopeScaling& s, const char* type) {
  if (!s.factor) bad(std::string("rope_type ") + type + " needs `factor`");
  if (!(*s.factor > 0)) bad("`factor` must be > 0, got " + std::to_string(*s.factor));
  return *s.factor;
}

int64_t original_max_pos(const RopeScaling& s, const char* type) {
  const int64_t v = s.original_max_position_embeddings ? s.original_max_position_embeddings : s.max_position_embeddings;
  if (v <= 0)
    bad(std::string("rope_type ") + type + " needs `original_max_position_embeddings` or `max_position_embeddings`");
  return v;
}

// factor, or max_position_embeddings / original when absent (yarn, longrope).
double factor_or_ratio(const RopeScaling& s, int64_t orig, const char* type) {
  if (s.factor) return required_factor(s, type);
  if (s.max_position_embeddings <= 0) bad(std::string("rope_type ") + type + " needs `factor` or `max_position_embeddings`");
  return double(s.max_position_embeddings) / double(orig);
}

double yarn_mscale(double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; }

void yarn(const RopeScaling& s, int64_t dim, std::vector<double>& inv, double& attention_factor) {
  const int64_t orig = original_max_pos(s, "yarn");
  const double factor = factor_or_ratio(s, orig, "yarn");
  if (s.attention_factor) attention_factor = *s.attention_factor;
  else if (s.mscale.value_or(0) != 0 && s.mscale_all_dim.value_or(0) != 0)
    attention_factor = yarn_mscale(factor, *s.mscale) / yarn_mscale(factor, *s.mscale_all_dim);
  else attention_factor = yarn_mscale(factor, 1.0);
  const double beta_fast = s.beta_fast.value_or(0) != 0 ? *s.beta_fast : 32.0;
  const double beta_slow = s.beta_slow.value_or(0) != 0 ? *s.beta_slow : 1.0;
  const double base = s.rope_theta;
  // The pair index at which a wavelength makes `rotations` turns over the original context.
  auto correction_dim = [&](double rotations) {
    return double(dim) * std::log(double(orig) / (rotations * 2.0 * M_PI)) / (2.0 * std::log(base));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (s.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0), high = std::min(high, double(dim - 1));
  if (low == high) high += 0.001;  // HF: avoid a zero-width ramp
  for (size_t i = 0; i < inv.size(); ++i) {
    // ramp = 1 → interpolated (inv / factor), ramp = 0 → extrapolated (inv)
    const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    inv[i] = inv[i] / factor * ramp + inv[i] * (1.0 - ramp);
  }
}

void llama3(const RopeScaling& s, std::vector<double>& inv) {
  const double factor = required_factor(s, "llama3");
  const double orig = double(original_max_pos(s, "llama3"));
  const double lo = s.low_freq_factor, hi = s.high_freq_factor;
  if (!(hi > lo)) bad("llama3 needs high_freq_factor > low_freq_factor");
  const double low_freq_wavelen = orig / lo, high_freq_wavelen = orig / hi;
  for (double& f : inv) {
    const double wavelen = 2.0 * M_PI / f;
    if (wavelen > low_freq_wavelen) {
      f /= factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (orig / wavelen - lo) / (hi - lo);
      f = (1.0 - smooth) * f / factor + smooth * f;
    }
  }
}

}  // namespace

std::optional<RopeType> rope_type_from_name(std::string_view name) {
  if (name == "default") return RopeType::DEFAULT;
  if (name == "linear") return RopeType::LINEAR;
  if (name == "dynamic") return RopeType::DYNAMIC;
  if (name == "llama3") return RopeType::LLAMA3;
  if (name == "yarn") return RopeType::YARN;
  if (name == "longrope") return RopeType::LONGROPE;
  if (name == "proportional") return RopeType::PROPORTIONAL;
  return std::nullopt;
}

RopeFrequencies rope_frequencies(const RopeScaling& s, int64_t head_dim, int64_t seq_len) {
  if (head_dim <= 0) bad("head_dim must be > 0, got " + std::to_string(head_dim));
  if (!(s.rope_theta > 0)) bad("rope_theta must be > 0, got " + std::to_string(s.rope_theta));
  if (!(s.partial_rotary_factor > 0 && s.partial_rotary_factor <= 1))
    bad("partial_rotary_factor must be in (0, 1], got " + std::to_string(s.partial_rotary_factor));
  RopeFrequencies out;
  double attention_factor = 1.0;
  std::vector<double> inv;

  if (s.rope_type == RopeType::PROPORTIONAL) {
    // Gemma4 full-attention layers: the first int(p·head_dim/2) pairs rotate with exponents over
    // the FULL head_dim, the remaining pairs get frequency 0 (identity); NEOX over head_dim.
    if (head_dim % 2) bad("proportional rope needs an even head_dim, got " + std::to_string(head_dim));
    const int64_t rope_angles = int64_t(std::floor(s.partial_rotary_factor * double(head_dim) / 2.0));
    inv = base_inv_freq(s.rope_theta, rope_angles, head_dim);
    inv.resize(head_dim / 2, 0.0);
    const double factor = s.factor.value_or(1.0);
    if (!(factor > 0)) bad("`factor` must be > 0");
    for (double& f : inv) f /= factor;
  } else {
    const int64_t dim = int64_t(double(head_dim) * s.partial_rotary_factor);
    if (dim < 2 || dim % 2)
      bad("rotary dim int(head_dim · partial_rotary_factor) = " + std::to_string(dim) + " must be even and ≥ 2");
    double base = s.rope_theta;
    if (s.rope_type == RopeType::DYNAMIC) {
      const double factor = required_factor(s, "dynamic");
      if (s.max_position_embeddings <= 0) bad("rope_type dynamic needs `max_position_embeddings`");
      const double max_pos = double(s.max_position_embeddings);
      const double len = std::max(double(seq_len), max_pos);
      base *= std::pow(factor * len / max_pos - (factor - 1.0), double(dim) / double(dim - 2));
    }
    inv = base_inv_freq(base, dim / 2, dim);
    switch (s.rope_type) {
      case RopeType::LINEAR: {
        const double factor = required_factor(s, "linear");
        for (double& f : inv) f /= factor;
        break;
      }
      case RopeType::LLAMA3: llama3(s, inv); break;
      case RopeType::YARN: yarn(s, dim, inv, attention_factor); break;
      case RopeType::LONGROPE: {
        const int64_t orig = original_max_pos(s, "longrope");
        const double factor = factor_or_ratio(s, orig, "longrope");
        if (s.attention_factor) attention_factor = *s.attention_factor;
        else attention_factor = factor <= 1 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(double(orig)));
        const std::vector<double>& ext = seq_len > orig ? s.long_factor : s.short_factor;
        if (int64_t(ext.size()) != dim / 2)
          bad(std::string(seq_len > orig ? "long_factor" : "short_factor") + " has " + std::to_string(ext.size()) +
              " entries, expected rotary dim / 2 = " + std::to_string(dim / 2));
        for (int64_t i = 0; i < dim / 2; ++i) inv[i] /= ext[i];
        break;
      }
      default: break;  // DEFAULT, DYNAMIC (base already stretched)
    }
  }
  out.inv_freq.assign(inv.begin(), inv.end());
  out.attention_factor = float(attention_factor);
  return out;
}

}  // namespace oxyd::ops
