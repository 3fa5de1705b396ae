// layer_norm kernels compiled with AVX512 flags (see layer_norm_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/layer_norm_impl.h"
