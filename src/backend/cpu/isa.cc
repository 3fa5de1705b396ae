// CPUID-based variant selection (see isa.h).
#include "backend/cpu/isa.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "core/cpu_features.h"

namespace oxyd::backend::cpu {
namespace {

Isa detect() {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  const bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
  return avx512 ? Isa::AVX512 : avx2 ? Isa::AVX2 : Isa::SCALAR;
}

Isa env_cap() {
  const char* env = std::getenv("OXYD_ISA");
  if (!env) env = std::getenv("OXYD_CPU_ISA");
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

bool isa_supported(Isa isa) { return int(isa) <= int(detected_isa()); }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return "scalar";
    case Isa::AVX2: return "avx2";
    case Isa::AVX512: return "avx512";
  }
  return "?";
}

}  // namespace oxyd::backend::cpu
