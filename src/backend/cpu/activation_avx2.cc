// activation kernels compiled with AVX2 flags (see activation_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/activation_impl.h"
