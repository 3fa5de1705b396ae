// Which kernel serves a matmul: the one selection table of select.cc, keyed by how the weight is
// stored (its file rows or a packed copy), the matmul ISA, the weight format and the number of
// activation rows, each row with the reason it is there. The driver (driver.cc) asks it per call.
#pragma once

#include <cstdint>
#include <span>

#include "backend/backend.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/matmul/kernel.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// The ISA of the matmul kernels: active_isa(), lowered where the CPU lacks what the kernels need
/// beyond it (AVX-512: VNNI, BF16, VBMI and BMI2; AVX2: BMI2).
Isa matmul_isa();

/// The kernel for weight w against m activation rows: that of w's packed copy `prep` (null: none)
/// where its layout's kernel runs here (packed is then true), else that of its file rows.
MatmulKernel select_kernel(const Tensor& w, const PreparedWeight* prep, int64_t m, bool& packed);
/// Whether the kernel of packed copy `prep`'s layout runs here (false for null).
bool packed_copy_runs(const PreparedWeight* prep);
/// The kernel a `t` weight loaded now (packed as matmul_pack_layout(t) says) gets at m rows.
MatmulKernel select_kernel(DType t, int64_t m);

/// How a row's weights are stored: the file's rows, or a copy packed at load (pack.h).
enum class Stored : uint8_t { FILE_ROWS, PACKED_AVX512, PACKED_AVX2 };
/// The test/bench switch (matmul.h, pack.h) a row obeys: off skips the row.
enum class Switch : uint8_t { NONE, AMX, PANEL };
/// A format set: bit (1 << DType) per format; kAnyFormat for every one.
constexpr uint64_t kAnyFormat = ~uint64_t(0);
constexpr int64_t kAnyRows = INT64_MAX;

/// One row of the table. A call takes the first row that matches stored, isa (file rows: equal;
/// packed rows: the layout decides where they run), format, rows within [min_rows, max_rows] and
/// whose switch is on, and whose `get` gives a kernel for the format (empty where the CPU or the
/// OS lacks a feature, e.g. AMX tiles).
struct KernelRow {
  Stored stored;
  Isa isa;
  uint64_t formats;
  int64_t min_rows, max_rows;
  Switch needs;
  MatmulKernel (*get)(DType t);
  const char* name;
  const char* why;
};
/// The rows in the order they are tried (for tests and documentation).
std::span<const KernelRow> matmul_kernel_table();
/// Whether `formats` includes t.
bool serves(uint64_t formats, DType t);

}  // namespace oxyd::backend::cpu
