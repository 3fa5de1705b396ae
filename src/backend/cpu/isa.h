// Run-time choice of the CPU kernel variant. Kernels are compiled three times (scalar, AVX2,
// AVX-512; files *_avx2.cc / *_avx512.cc get the ISA flags) and each op dispatches on
// active_isa(), which is what CPUID allows (core/cpu_features), lowered by OXYD_ISA (or
// OXYD_CPU_ISA)=scalar|avx2|avx512 or by
// set_isa_override() (tests force every variant this way). Never raises above what CPUID allows.
#pragma once

#include <optional>
#include <string_view>

namespace oxyd::backend::cpu {

enum class Isa : int { SCALAR = 0, AVX2 = 1, AVX512 = 2 };

/// The best variant this CPU (and OS) supports: AVX2 needs avx2+fma+f16c, AVX512 needs
/// avx512f/bw/vl/dq on top.
Isa detected_isa();
/// The variant kernels use now: min(detected, OXYD_ISA env, override).
Isa active_isa();
/// Whether this CPU can run the kernels of `isa` (isa <= detected_isa()).
bool isa_supported(Isa isa);
/// Forces a lower variant (tests, benchmarks); nullopt restores the default. Not for use while
/// kernels run on other threads.
void set_isa_override(std::optional<Isa> isa);
const char* isa_name(Isa isa);

/// RAII override for tests: ScopedIsa force(Isa::AVX2);
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa) { set_isa_override(isa); }
  ~ScopedIsa() { set_isa_override(std::nullopt); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;
};

}  // namespace oxyd::backend::cpu
