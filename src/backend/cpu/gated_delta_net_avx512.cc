// Gated DeltaNet kernels compiled with AVX512 flags (see gated_delta_net_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/gated_delta_net_impl.h"
