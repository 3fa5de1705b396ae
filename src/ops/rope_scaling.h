// RoPE frequencies from a model's rope scaling parameters (transformers' modeling_rope_utils): the
// inv_freq table and the attention_factor that multiplies cos and sin, for HF's rope types
// default, linear, dynamic, llama3, yarn, longrope and proportional, matching transformers'
// ROPE_INIT_FUNCTIONS (checked against goldens made by tools/gen_rope_goldens.py). Host-side,
// computed in float64 and rounded to float32 once. Field names are HF's rope_parameters keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace oxyd::ops {

enum class RopeType { DEFAULT, LINEAR, DYNAMIC, LLAMA3, YARN, LONGROPE, PROPORTIONAL };

/// HF rope_type / type string ("default", "linear", "dynamic", "llama3", "yarn", "longrope",
/// "proportional"); nullopt for anything else.
std::optional<RopeType> rope_type_from_name(std::string_view name);

struct RopeScaling {
  RopeType rope_type = RopeType::DEFAULT;
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;              // rot_dim = int(head_dim · this)
  std::optional<double> factor;                    // required: linear, dynamic, llama3
  int64_t max_position_embeddings = 0;             // dynamic; yarn/longrope default factor
  int64_t original_max_position_embeddings = 0;    // llama3, yarn, longrope (0 → max_position_embeddings)
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  std::optional<double> beta_fast, beta_slow;      // yarn (absent or 0 → 32 and 1)
  std::optional<double> mscale, mscale_all_dim;    // yarn
  std::optional<double> attention_factor;          // yarn, longrope (absent → derived)
  bool truncate = true;                            // yarn: floor/ceil the correction range
  std::vector<double> short_factor, long_factor;   // longrope, [rot_dim / 2] each
};

struct RopeFrequencies {
  std::vector<float> inv_freq;   // [rot_dim / 2]
  float attention_factor = 1.0f; // multiplies cos and sin
  int64_t rot_dim() const { return 2 * int64_t(inv_freq.size()); }
};

/// seq_len: the current sequence length, used by dynamic (NTK base stretch once past
/// max_position_embeddings) and longrope (long_factor once past the original context);
/// 0 = not known (dynamic: max_position_embeddings; longrope: short_factor).
/// Throws Error(INVALID_ARGUMENT) naming the missing or inconsistent field.
RopeFrequencies rope_frequencies(const RopeScaling& scaling, int64_t head_dim, int64_t seq_len = 0);

}  // namespace oxyd::ops
