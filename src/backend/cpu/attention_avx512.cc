// attention kernels compiled with AVX512 flags (see attention_prefill_impl.h).
#define OXYD_ISA_AVX512
#include "backend/cpu/attention_prefill_impl.h"
