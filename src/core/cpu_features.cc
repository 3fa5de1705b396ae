// CPUID / XGETBV probing for CpuFeatures. AVX needs OS support of YMM state (XCR0 bits 1–2),
// AVX-512 of opmask/ZMM state (bits 5–7), AMX of tile state (bits 17–18).
#include "core/cpu_features.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define OXYD_X86 1
#endif

namespace oxyd {
namespace {

#ifdef OXYD_X86
uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}
#endif

CpuFeatures probe() {
  CpuFeatures f;
#ifdef OXYD_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  const bool avx = c & (1u << 28);
  const bool fma = c & (1u << 12);
  const bool f16c = c & (1u << 29);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_ok = (xcr0 & 0x6) == 0x6;
  const bool zmm_ok = ymm_ok && (xcr0 & 0xe0) == 0xe0;
  const bool amx_ok = (xcr0 & 0x60000) == 0x60000;
  if (!ymm_ok) return f;
  f.fma = fma;
  f.f16c = f16c;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = b & (1u << 5);
  f.bmi2 = b & (1u << 8);
  if (zmm_ok) {
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512vbmi = c & (1u << 1);
    f.avx512vnni = c & (1u << 11);
    f.avx512fp16 = d & (1u << 23);
  }
  f.amx_bf16 = amx_ok && (d & (1u << 22));
  f.amx_tile = amx_ok && (d & (1u << 24));
  f.amx_int8 = amx_ok && (d & (1u << 25));
  unsigned a1, b1, c1, d1;
  __cpuid_count(7, 1, a1, b1, c1, d1);
  f.avx_vnni = a1 & (1u << 4);
  if (zmm_ok) f.avx512bf16 = a1 & (1u << 5);
#endif
  return f;
}

}  // namespace

std::string CpuFeatures::to_string() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2"); add(fma, "fma"); add(f16c, "f16c"); add(bmi2, "bmi2");
  add(avx512f, "avx512f"); add(avx512bw, "avx512bw"); add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq"); add(avx512vnni, "avx512vnni"); add(avx512bf16, "avx512bf16");
  add(avx512vbmi, "avx512vbmi"); add(avx512fp16, "avx512fp16"); add(avx_vnni, "avx_vnni");
  add(amx_tile, "amx_tile"); add(amx_int8, "amx_int8"); add(amx_bf16, "amx_bf16");
  return s.empty() ? "none" : s;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = probe();
  return f;
}

}  // namespace oxyd
