// softmax kernels compiled with AVX2 flags (see softmax_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/softmax_impl.h"
