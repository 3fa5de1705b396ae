// The matmul selection table: which kernel serves which (weights as stored, ISA, format, rows),
// and why. Every kernel serves every number of activation rows (1..kAnyRows): kernels that sum in
// different orders (row-dot, panel, AMX) would make a row's result depend on the rest of its batch,
// so the format alone picks the kernel (batch invariance). Rows are tried top to bottom.
#include "backend/cpu/matmul/select.h"

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/kernels_avx512.h"
#include "backend/cpu/matmul/pack.h"
#include "core/cpu_features.h"

namespace oxyd::backend::cpu {
namespace {

// The process-wide switches of tests and benches (set_matmul_amx, set_matmul_panel,
// set_matmul_pack): off, the rows that need them are skipped (AMX, PANEL) or no weight is packed
// at load (pack; OXYD_MATMUL_PACK=0 sets it from the environment, e.g. to compare). Relaxed: they
// are not for use while matmul runs on other threads.
struct Switches {
  std::atomic<bool> amx{true};
  std::atomic<bool> panel{true};
  std::atomic<bool> pack{[] {
    const char* env = std::getenv("OXYD_MATMUL_PACK");
    return !(env && std::string(env) == "0");
  }()};
};
Switches g_switches;

constexpr uint64_t fmt(std::initializer_list<DType> ts) {
  uint64_t bits = 0;
  for (DType t : ts) bits |= uint64_t(1) << uint32_t(t);
  return bits;
}
using D = DType;
constexpr uint64_t kBlock32 = fmt({D::Q8_0, D::Q4_0, D::Q4_1, D::Q5_0, D::Q5_1, D::IQ4_NL, D::MXFP4});
constexpr uint64_t kKQuant = fmt({D::Q2_K, D::Q3_K, D::Q4_K, D::Q5_K, D::Q6_K});
constexpr uint64_t kFloat = fmt({D::F32, D::F16, D::BF16});

constexpr KernelRow kTable[] = {
    // Weights packed at load (pack.h): the copy's layout picks its kernel (see select_kernel).
    {Stored::PACKED_AVX512, Isa::AVX512, kBlock32, 1, kAnyRows, Switch::NONE, avx512_q32_packed_kernel, "block32_panel_avx512.cc packed",
     "VNNI 16-row panel on 16-row groups packed at load: no transpose of 16 rows per call"},
    {Stored::PACKED_AVX512, Isa::AVX512, fmt({D::F32, D::BF16}), 1, kAnyRows, Switch::NONE,
     avx512_float_packed_kernel, "float_packed_avx512.cc",
     "outer product of 6 rows × 64 outputs on 16-row groups transposed at load: ~2x the FMA rate "
     "of the F32 row-dot (encoders such as all-MiniLM-L6-v2 are F32); BF16 as pairs, vdpbf16ps"},
    {Stored::PACKED_AVX2, Isa::AVX2,
     kBlock32 | fmt({D::Q4_K, D::Q5_K, D::Q6_K, D::IQ4_XS}), 1, kAnyRows, Switch::NONE,
     avx2_packed_kernel, "packed_avx2.cc",
     "AVX2 lanes = weight rows of a packed group; also the super-block formats' kernel on AVX-512 "
     "(they have no AVX-512 layout)"},

    // AVX-512 with VNNI, BF16 and VBMI, on the file's rows.
    {Stored::FILE_ROWS, Isa::AVX512, kBlock32, 1, kAnyRows, Switch::AMX, avx512_amx_q8_kernel,
     "amx_int8_avx512.cc",
     "AMX-INT8 tiles where the CPU has them and Linux grants the tile state; the same integer sums "
     "as VNNI, so these read the file rows and are not packed"},
    {Stored::FILE_ROWS, Isa::AVX512, fmt({D::BF16}), 1, kAnyRows, Switch::AMX, avx512_amx_kernel,
     "amx_bf16_avx512.cc",
     "AMX-BF16 tiles at every batch (below 16 rows mostly padding, but one summation order)"},
    {Stored::FILE_ROWS, Isa::AVX512, kBlock32, 1, kAnyRows, Switch::PANEL, avx512_q32_panel_kernel,
     "block32_panel_avx512.cc",
     "VNNI 16-row panel: one decoded block serves 16 activation rows (CPUs without AMX)"},
    {Stored::FILE_ROWS, Isa::AVX512, fmt({D::Q4_K, D::Q5_K, D::Q6_K}), 1, kAnyRows, Switch::PANEL,
     avx512_qk_panel_kernel, "kquant_panel_avx512.cc", "the same panel for the K-quants"},
    {Stored::FILE_ROWS, Isa::AVX512, kBlock32 | fmt({D::IQ4_XS}), 1, kAnyRows, Switch::NONE, avx512_q32_kernel,
     "block32_avx512.cc", "VNNI row-dot: vpermt2b lines 4 blocks up with 8-bit activations, vpdpbusd"},
    {Stored::FILE_ROWS, Isa::AVX512, kKQuant, 1, kAnyRows, Switch::NONE, avx512_qk_kernel, "kquant_avx512.cc",
     "VNNI row-dot per 256-element super-block against Q8_K-like activations"},
    {Stored::FILE_ROWS, Isa::AVX512, kFloat, 1, kAnyRows, Switch::NONE, avx512_float_kernel, "float_avx512.cc",
     "BF16: vdpbf16ps on activations rounded to bf16; F16, F32: exact f32 FMA"},
    {Stored::FILE_ROWS, Isa::AVX512, kAnyFormat, 1, kAnyRows, Switch::NONE, generic_avx512_kernel,
     "generic_avx512.cc", "any other format: decode to f32 once per row chunk, 16-wide FMA dot"},

    // AVX2 with FMA, F16C and BMI2, on the file's rows (most formats are packed there).
    {Stored::FILE_ROWS, Isa::AVX2, fmt({D::Q4_0, D::Q4_1, D::Q8_0, D::Q4_K, D::Q6_K}), 1, kAnyRows, Switch::NONE,
     avx2_rowdot_kernel, "rowdot_avx2.cc", "vpmaddubsw row-dot against 8-bit activations"},
    {Stored::FILE_ROWS, Isa::AVX2, kFloat, 1, kAnyRows, Switch::NONE, avx2_float_kernel, "float_avx2.cc",
     "4 activation × 2 weight rows per tile: the FMA units, not the loads, set the pace"},
    {Stored::FILE_ROWS, Isa::AVX2, fmt({D::Q2_K, D::Q3_K, D::MXFP4}), 1, kAnyRows, Switch::NONE,
     avx2_lowbit_kernel, "lowbit_rowdot_avx2.cc",
     "Q2_K, Q3_K: no packed layout (MXFP4: when not packed); the generic path ran at 2-3% of the "
     "bandwidth"},
    {Stored::FILE_ROWS, Isa::AVX2, kAnyFormat, 1, kAnyRows, Switch::NONE, generic_avx2_kernel,
     "generic_avx2.cc", "any other format: decode to f32, 8-wide FMA dot"},

    // Portable: CPUs without AVX2 (or a forced lower ISA), and a second opinion in tests.
    {Stored::FILE_ROWS, Isa::SCALAR, kAnyFormat, 1, kAnyRows, Switch::NONE, generic_scalar_kernel, "scalar.cc",
     "decode to f32, plain C++ dot"},
};

bool switched_on(Switch s) {
  switch (s) {
    case Switch::AMX: return g_switches.amx.load(std::memory_order_relaxed);
    case Switch::PANEL: return g_switches.panel.load(std::memory_order_relaxed);
    default: return true;
  }
}

MatmulKernel lookup(Stored stored, Isa isa, DType t, int64_t m) {
  for (const KernelRow& r : kTable) {
    if (r.stored != stored || (stored == Stored::FILE_ROWS && r.isa != isa) || !serves(r.formats, t)) continue;
    if (m < r.min_rows || m > r.max_rows || !switched_on(r.needs)) continue;
    if (const MatmulKernel k = r.get(t); k.tile) return k;
  }
  return {};
}

Stored stored_as(PackLayout l) { return l == PackLayout::AVX512 ? Stored::PACKED_AVX512 : Stored::PACKED_AVX2; }

// Whether layout l's packed kernel runs here: AVX512's on the AVX-512 matmul path, AVX2's on the
// AVX2 path and on the AVX-512 one (whose CPUs have AVX2 and BMI2).
bool layout_runs(PackLayout l) {
  const PackLayout here = packed_kernel_layout();
  return l != PackLayout::NONE && (l == here || (l == PackLayout::AVX2 && here == PackLayout::AVX512));
}

}  // namespace

bool serves(uint64_t formats, DType t) {
  return formats == kAnyFormat || (uint32_t(t) < 64 && (formats >> uint32_t(t) & 1) != 0);
}

std::span<const KernelRow> matmul_kernel_table() { return kTable; }

// The AVX-512 matmul kernels also need VNNI, BF16 and VBMI, and the AVX2 ones BMI2; on a CPU
// without them matmul drops to the next variant while the other ops keep theirs.
Isa matmul_isa() {
  const CpuFeatures& f = cpu_features();
  Isa isa = active_isa();
  if (isa == Isa::AVX512 && !(f.avx512vnni && f.avx512bf16 && f.avx512vbmi && f.bmi2)) isa = Isa::AVX2;
  if (isa == Isa::AVX2 && !f.bmi2) isa = Isa::SCALAR;
  return isa;
}

MatmulKernel select_kernel(const Tensor& w, const PreparedWeight* prep, int64_t m, bool& packed) {
  const PackLayout l = prep ? PackLayout(prep->layout) : PackLayout::NONE;
  packed = prep && layout_runs(l);
  return packed ? lookup(stored_as(l), matmul_isa(), w.dtype, m) : lookup(Stored::FILE_ROWS, matmul_isa(), w.dtype, m);
}

bool packed_copy_runs(const PreparedWeight* prep) { return prep && layout_runs(PackLayout(prep->layout)); }

MatmulKernel select_kernel(DType t, int64_t m) {
  if (const PackLayout l = matmul_pack_layout(t); l != PackLayout::NONE) return lookup(stored_as(l), matmul_isa(), t, m);
  return lookup(Stored::FILE_ROWS, matmul_isa(), t, m);
}

PackLayout packed_kernel_layout() {
  switch (matmul_isa()) {
    case Isa::AVX512: return PackLayout::AVX512;
    case Isa::AVX2: return PackLayout::AVX2;
    default: return PackLayout::NONE;
  }
}
bool packed_kernel_runs() { return packed_kernel_layout() != PackLayout::NONE; }

PackLayout matmul_pack_layout(DType t) {
  const PackLayout l = packed_kernel_layout();
  if (l == PackLayout::NONE || !g_switches.pack.load(std::memory_order_relaxed)) return PackLayout::NONE;
  if (l == PackLayout::AVX2) return packable(t, l) ? l : PackLayout::NONE;
  // Where the AMX kernels run (the AVX-512 rows with Switch::AMX), they read the original rows.
  if (switched_on(Switch::AMX) && (avx512_amx_q8_kernel(t).tile || avx512_amx_kernel(t).tile)) return PackLayout::NONE;
  if (packable(t, l)) return l;
  // The super-block formats (Q4_K, Q5_K, Q6_K, IQ4_XS) have no AVX-512 layout: they take the AVX2
  // one and its kernel, which runs every number of rows alike (the AVX-512 row-dot and panel kernels
  // on their file rows differ in summation order, and were picked by the number of rows).
  return packable(t, PackLayout::AVX2) ? PackLayout::AVX2 : PackLayout::NONE;
}
bool matmul_packs(DType t) { return matmul_pack_layout(t) != PackLayout::NONE; }

void set_matmul_amx(bool allowed) { g_switches.amx.store(allowed, std::memory_order_relaxed); }
void set_matmul_panel(bool allowed) { g_switches.panel.store(allowed, std::memory_order_relaxed); }
void set_matmul_pack(bool allowed) { g_switches.pack.store(allowed, std::memory_order_relaxed); }

}  // namespace oxyd::backend::cpu
