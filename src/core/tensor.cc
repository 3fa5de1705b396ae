#include "core/tensor.h"

#include <sys/mman.h>

namespace oxyd {

// Weights packed at load and KV pools are read in long sweeps over many megabytes; on 4 KiB pages
// every few KiB of such a sweep is a TLB miss. Where transparent huge pages are "madvise"-only
// (Debian's default), this asks for 2 MiB pages before the first touch. Advice only: ignored
// where the kernel has no THP.
void Buffer::advise_huge_pages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  ::madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace oxyd
