// attention kernels compiled with AVX2 flags (see attention_prefill_impl.h).
#define OXYD_ISA_AVX2
#include "backend/cpu/attention_prefill_impl.h"
