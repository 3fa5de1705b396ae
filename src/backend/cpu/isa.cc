// CPUID-based variant selection (see isa.h).
#include "backend/cpu/isa.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace oxyd::backend::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// clang's __builtin_cpu_supports has no "f16c"; read CPUID leaf 1 (ECX bit 29) directly.
bool has_f16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}
#endif

Isa detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq");
  return avx512 ? Isa::AVX512 : avx2 ? Isa::AVX2 : Isa::SCALAR;
#else
  return Isa::SCALAR;
#endif
}

Isa env_cap() {
  const char* env = std::getenv("OXYD_ISA");
  if (!env) return Isa::AVX512;
  const std::string v(env);
  if (v == "scalar") return Isa::SCALAR;
  if (v == "avx2") return Isa::AVX2;
  return Isa::AVX512;
}

std::atomic<int> g_override{-1};

}  // namespace

Isa detected_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() {
  static const Isa base = std::min(detected_isa(), env_cap());
  const int o = g_override.load(std::memory_order_relaxed);
  return o < 0 ? base : std::min(detected_isa(), Isa(o));
}

void set_isa_override(std::optional<Isa> isa) {
  g_override.store(isa ? int(*isa) : -1, std::memory_order_relaxed);
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return "scalar";
    case Isa::AVX2: return "avx2";
    case Isa::AVX512: return "avx512";
  }
  return "?";
}

}  // namespace oxyd::backend::cpu
