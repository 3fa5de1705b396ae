// rope kernels compiled with AVX2 flags (see rope_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/rope_impl.h"
