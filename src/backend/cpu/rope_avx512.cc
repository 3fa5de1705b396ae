// rope kernels compiled with AVX512 flags (see rope_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/rope_impl.h"
