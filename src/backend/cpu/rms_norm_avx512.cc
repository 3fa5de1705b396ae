// RMSNorm kernels compiled with AVX512 flags (see rms_norm_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/rms_norm_impl.h"
