// The matmul selection table (backend/cpu/matmul/select.cc) says what the kernels do: each row's
// format set is exactly the formats its entry point serves, every row serves every number of
// activation rows (batch invariance), and each ISA ends with a row for every format.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/select.h"

namespace oxyd::backend::cpu {
namespace {

// Rows whose kernels can be asked here: their ISA runs, and AMX rows depend on the CPU and OS.
bool askable(const KernelRow& r) { return int(r.isa) <= int(matmul_isa()) && r.needs != Switch::AMX; }

TEST(MatmulSelect, FormatSetsAreExactlyWhatTheKernelsServe) {
  int checked = 0;
  for (const KernelRow& r : matmul_kernel_table()) {
    if (!askable(r)) continue;
    for (uint32_t v = 0; v < 64; ++v) {
      const DType t = DType(v);
      if (!decodable(t)) continue;
      EXPECT_EQ(r.get(t).tile != nullptr, serves(r.formats, t)) << r.name << ", dtype " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(MatmulSelect, EveryRowServesEveryBatch) {
  for (const KernelRow& r : matmul_kernel_table()) {
    EXPECT_EQ(r.min_rows, 1) << r.name;
    EXPECT_EQ(r.max_rows, kAnyRows) << r.name;
    EXPECT_FALSE(std::string(r.why).empty()) << r.name;
  }
}

TEST(MatmulSelect, EachIsaEndsWithEveryFormat) {
  for (Isa isa : {Isa::SCALAR, Isa::AVX2, Isa::AVX512}) {
    const KernelRow* last = nullptr;
    for (const KernelRow& r : matmul_kernel_table())
      if (r.stored == Stored::FILE_ROWS && r.isa == isa) last = &r;
    ASSERT_NE(last, nullptr) << isa_name(isa);
    EXPECT_EQ(last->formats, kAnyFormat) << isa_name(isa);
    EXPECT_EQ(last->needs, Switch::NONE) << isa_name(isa);
  }
}

TEST(MatmulSelect, EveryDecodableFormatGetsAKernel) {
  for (uint32_t v = 0; v < 64; ++v) {
    const DType t = DType(v);
    if (!decodable(t)) continue;
    for (int64_t m : {int64_t(1), int64_t(16), int64_t(512)}) EXPECT_NE(select_kernel(t, m).tile, nullptr) << v;
  }
}

}  // namespace
}  // namespace oxyd::backend::cpu
