// elementwise kernels compiled with AVX512 flags (see elementwise_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/elementwise_impl.h"
