// layer_norm kernels compiled with AVX2 flags (see layer_norm_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/layer_norm_impl.h"
