// splitmix64 (Steele, Lea, Flood 2014; the seeding generator of xoshiro): a 64-bit state advanced by
// a fixed odd step, each output the state passed through a bijective mixer. Used where a few
// well-spread 64-bit values are derived from one seed (KV-quant signs, per-choice sampling seeds).
#pragma once

#include <cstdint>

namespace oxyd {

inline constexpr uint64_t kSplitmix64Step = 0x9E3779B97F4A7C15ull;

/// The output mixer: a bijection of 64-bit values.
inline constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Advances `state` and returns its next output.
inline constexpr uint64_t splitmix64_next(uint64_t& state) {
  state += kSplitmix64Step;
  return splitmix64_mix(state);
}

}  // namespace oxyd
