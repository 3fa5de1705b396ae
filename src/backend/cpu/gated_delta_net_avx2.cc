// Gated DeltaNet kernels compiled with AVX2 flags (see gated_delta_net_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/gated_delta_net_impl.h"
