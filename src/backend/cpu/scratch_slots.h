// The slots of the pool threads' ThreadScratch (core/thread_scratch.h), all in one table so that
// two users never share a slot whose contents one of them still needs. Two kinds of use:
//   worker: any pool thread's own slot inside a job (this_thread_scratch(), or TileArgs::scratch);
//           the contents last until the job ends.
//   caller: thread 0's slot (ThreadPool::scratch(0)), used by the thread that holds the pool's
//           turn for the whole op; the contents last across the op's jobs.
// Thread 0 is a worker of its own jobs too, so a caller slot is never also a worker slot.
#pragma once

#include "core/thread_scratch.h"

namespace oxyd::backend::cpu {

enum ScratchSlot : int {
  kTileSlot0,         // worker: a matmul tile's working memory (matmul/kernel.h)
  kTileSlot1,         // worker: same
  kTileSlot2,         // worker: same
  kMatmulActSlot,     // caller: matmul's prepared activation rows (counted by matmul_scratch_held)
  kAttnKeySlot,       // worker: attention keys converted from F16 / BF16 / quantized cache rows
  kAttnTileSlot,      // worker: a prefill tile's rows (queries, accumulators, scores); split-K merges
  kAttnQueryRotSlot,  // caller: queries rotated into a quantized cache's space
  kAttnPlanSlot,      // caller: the per-request tile plan of one attention call
  kAttnPrepKeysSlot,  // caller: per-request prepared-key descriptors
  kAttnFirstUnitSlot, // caller: their first unit per request
  kAttnPartialsSlot,  // caller: split-K partial states
  kGdnHeadSlot,       // worker: one head's rows of the gated delta rule (recurrent or chunked)
  kConvWindowSlot,    // worker: causal_conv1d's [state | tokens] window
  kNumScratchSlots
};
static_assert(kNumScratchSlots <= ThreadScratch::kSlots, "ThreadScratch has too few slots");

}  // namespace oxyd::backend::cpu
