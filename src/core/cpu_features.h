// CpuFeatures: the x86 instruction-set extensions this process may use, read once from CPUID and
// XGETBV (an extension counts only when the OS also saves its registers). Kernels pick their ISA
// variant from this at run time; nothing here depends on the flags this file was compiled with.
#pragma once

#include <string>

namespace oxyd {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false, bmi2 = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx512bf16 = false, avx512vbmi = false, avx512fp16 = false;
  bool avx_vnni = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;

  /// One line listing the extensions present, e.g. "avx2 fma f16c avx512f ...".
  std::string to_string() const;
};

/// Features of the CPU this process runs on (computed on first call, then cached; thread-safe).
const CpuFeatures& cpu_features();

}  // namespace oxyd
