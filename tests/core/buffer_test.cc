// Buffer's alignment contract: 64 bytes always (the kernels' aligned loads), 2 MiB from 2 MiB on (so
// Linux can back big weight and KV buffers with huge pages), and the whole size writable. Whether
// huge pages are granted is not asserted: THP may be off, and Linux may split them later.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/tensor.h"

namespace oxyd {
namespace {

TEST(Buffer, AlignmentBySize) {
  for (size_t bytes : {size_t(1), size_t(63), size_t(4096), (size_t(2) << 20) - 1, size_t(2) << 20,
                       (size_t(5) << 20) + 17}) {
    Buffer b(bytes);
    ASSERT_NE(b.data(), nullptr) << bytes;
    EXPECT_EQ(b.size(), bytes);
    const uintptr_t p = reinterpret_cast<uintptr_t>(b.data());
    EXPECT_EQ(p % 64, 0u) << bytes;
    if (bytes >= (size_t(2) << 20)) {
      EXPECT_EQ(p % (size_t(2) << 20), 0u) << bytes;
    }
    std::memset(b.data(), 0xA5, bytes);  // every byte of the size is writable
    EXPECT_EQ(b.data()[bytes - 1], 0xA5);
  }
  EXPECT_EQ(Buffer(0).data(), nullptr);
}

}  // namespace
}  // namespace oxyd
