// softmax kernels compiled with AVX512 flags (see softmax_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/softmax_impl.h"
