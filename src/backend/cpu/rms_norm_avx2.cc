// RMSNorm kernels compiled with AVX2 flags (see rms_norm_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/rms_norm_impl.h"
