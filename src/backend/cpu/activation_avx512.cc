// activation kernels compiled with AVX512 flags (see activation_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/activation_impl.h"
