// elementwise kernels compiled with AVX2 flags (see elementwise_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/elementwise_impl.h"
