// Packing of the 32-block formats into 16-row groups; the two layouts are in pack.h.
#include "backend/cpu/matmul/pack.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/matmul/decode_impl.h"
#include "core/error.h"

namespace oxyd::backend::cpu {
namespace {

// bb block bytes, qoff offset of the code bytes, nd code dwords per row (8: 32 one-byte codes, 4:
// 32 nibbles), qh offset of Q5's 32 fifth bits (-1: none), flip XORed into every code byte in the
// AVX512 layout, ns scale fields of fs bytes at the block's start (f16: 1 the scale, 2 scale and
// min; MXFP4: one e8m0 byte).
struct PackFmt {
  int bb, qoff, nd, qh;
  uint8_t flip;
  int ns, fs;
  uint32_t flip4(PackLayout l) const { return l == PackLayout::AVX512 ? flip * 0x01010101u : 0u; }
  int64_t gb() const { return 16 * int64_t(bb); }
  int mask_off() const { return 64 * nd; }
  int64_t scale_off() const { return gb() - 16 * ns * fs; }
  // Field i of lane L's row.
  int64_t field_off(int i, int L) const { return scale_off() + 16 * fs * i + fs * L; }
};

const PackFmt* pack_fmt(DType t) {
  static constexpr PackFmt kQ8_0{34, 2, 8, -1, 0x80, 1, 2}, kQ4_0{18, 2, 4, -1, 0, 1, 2},
      kQ4_1{20, 4, 4, -1, 0, 2, 2}, kQ5_0{22, 6, 4, 2, 0, 1, 2}, kQ5_1{24, 8, 4, 4, 0, 2, 2},
      kIQ4_NL{18, 2, 4, -1, 0, 1, 2}, kMXFP4{17, 1, 4, -1, 0, 1, 1};
  switch (t) {
    case DType::MXFP4: return &kMXFP4;
    case DType::Q8_0: return &kQ8_0;
    case DType::Q4_0: return &kQ4_0;
    case DType::Q4_1: return &kQ4_1;
    case DType::Q5_0: return &kQ5_0;
    case DType::Q5_1: return &kQ5_1;
    case DType::IQ4_NL: return &kIQ4_NL;
    default: return nullptr;
  }
}

// Lane L of a group holds row π(L); π is its own inverse (a 4×4 transpose).
inline int lane_row(int L) { return 4 * (L % 4) + L / 4; }

// Where the fifth bit of element e (of row π(L)) goes in a block's 64 mask bytes: byte, bit.
inline std::pair<int, int> qh_bit(PackLayout l, int L, int e) {
  if (l == PackLayout::AVX512) return {8 * (e / 4) + L / 2, 4 * (L % 2) + e % 4};
  const int j = e % 4, d = e % 16 / 4;
  return {4 * L + j, e < 16 ? d : 4 + d};
}

void pack_group(const PackFmt& f, PackLayout l, const uint8_t* w, int64_t row_bytes, int64_t n, int64_t g,
                int64_t nb, uint8_t* out) {
  const uint8_t* src[16];
  for (int L = 0; L < 16; ++L) src[L] = w + std::min<int64_t>(16 * g + lane_row(L), n - 1) * row_bytes;
  for (int64_t b = 0; b < nb; ++b, out += f.gb()) {
    if (f.qh >= 0) std::memset(out + f.mask_off(), 0, 64);
    for (int L = 0; L < 16; ++L) {
      const uint8_t* blk = src[L] + b * f.bb;
      const uint32_t flip = f.flip4(l);
      for (int d = 0; d < f.nd; ++d) {  // 4 code bytes at a time
        uint32_t v;
        std::memcpy(&v, blk + f.qoff + 4 * d, 4);
        v ^= flip;
        std::memcpy(out + 64 * d + 4 * L, &v, 4);
      }
      if (f.qh >= 0) {
        uint32_t qh;
        std::memcpy(&qh, blk + f.qh, 4);
        for (int e = 0; e < 32; ++e)
          if ((qh >> e) & 1u) {
            const auto [byte, bit] = qh_bit(l, L, e);
            out[f.mask_off() + byte] |= uint8_t(1u << bit);
          }
      }
      for (int i = 0; i < f.ns; ++i) std::memcpy(out + f.field_off(i, L), blk + f.fs * i, size_t(f.fs));
    }
  }
}

// The 4-bit super-block formats, AVX2 layout only (pack.h): Q4_K, Q5_K, IQ4_XS. Per
// super-block of a group: sub-block j (32 elements) at cb·j, 4 code registers in Q4_0's nibble order
// (Q5_K: then 64 bytes of fifth bits in Q5_0's AVX2 order); at sc = 8·cb the per-sub-block scales
// (byte 16·j + L), Q4_K/Q5_K then the mins likewise and the f16 dmin after the f16 d.
struct KFmt {
  int64_t bb;     // file bytes per super-block
  int qs, qh;     // offsets of the low nibbles and of Q5_K's fifth bits (-1: none) in a file block
  bool xs;        // IQ4_XS: int8 scale ls - 32 per sub-block and d; else 6-bit sc, m, d, dmin
  int64_t cb() const { return qh >= 0 ? 320 : 256; }
  int64_t sc() const { return 8 * cb(); }
  int64_t d() const { return sc() + (xs ? 128 : 256); }
  int64_t group_sb() const { return d() + (xs ? 32 : 64); }
  // The 4-bit code of element e (0..31) of sub-block j in a file block.
  int nib(const uint8_t* blk, int j, int e) const {
    if (xs) return (blk[qs + 16 * j + e % 16] >> (4 * (e / 16))) & 0xF;
    return (blk[qs + 32 * (j / 2) + e] >> (4 * (j % 2))) & 0xF;
  }
  void set_nib(uint8_t* blk, int j, int e, int v) const {
    if (xs)
      blk[qs + 16 * j + e % 16] |= uint8_t(v << (4 * (e / 16)));
    else
      blk[qs + 32 * (j / 2) + e] |= uint8_t(v << (4 * (j % 2)));
  }
};

const KFmt* k_fmt(DType t) {
  static constexpr KFmt kQ4K{144, 16, -1, false}, kQ5K{176, 48, 16, false}, kIQ4XS{136, 8, -1, true};
  switch (t) {
    case DType::Q4_K: return &kQ4K;
    case DType::Q5_K: return &kQ5K;
    case DType::IQ4_XS: return &kIQ4XS;
    default: return nullptr;
  }
}

// The packed byte of element e (0..31) of a sub-block for lane L; the element is its nibble e / 16.
inline int64_t k_code_byte(int L, int e) { return 64 * (e % 16 / 4) + 4 * L + e % 4; }

void pack_group_k4(const KFmt& f, const uint8_t* w, int64_t row_bytes, int64_t n, int64_t g, int64_t nsb,
                   uint8_t* out) {
  for (int64_t sb = 0; sb < nsb; ++sb, out += f.group_sb()) {
    std::memset(out, 0, size_t(f.group_sb()));
    for (int L = 0; L < 16; ++L) {
      const uint8_t* blk = w + std::min<int64_t>(16 * g + lane_row(L), n - 1) * row_bytes + sb * f.bb;
      std::memcpy(out + f.d() + 2 * L, blk, 2);
      if (!f.xs) std::memcpy(out + f.d() + 32 + 2 * L, blk + 2, 2);
      uint16_t sh = 0;  // IQ4_XS: the high 2 bits of the 8 scales
      if (f.xs) std::memcpy(&sh, blk + 2, 2);
      for (int j = 0; j < 8; ++j) {
        if (f.xs) {
          const int ls = ((blk[4 + j / 2] >> (4 * (j % 2))) & 0xF) | (((sh >> (2 * j)) & 3) << 4);
          out[f.sc() + 16 * j + L] = uint8_t(int8_t(ls - 32));
        } else {
          scale_min_k4(j, blk + 4, out[f.sc() + 16 * j + L], out[f.sc() + 128 + 16 * j + L]);
        }
        uint8_t* cj = out + f.cb() * j;
        for (int e = 0; e < 32; ++e) {
          cj[k_code_byte(L, e)] |= uint8_t(f.nib(blk, j, e) << (4 * (e / 16)));
          if (f.qh >= 0 && ((blk[f.qh + e] >> j) & 1)) {
            const auto [byte, bit] = qh_bit(PackLayout::AVX2, L, e);
            cj[256 + byte] |= uint8_t(1u << bit);
          }
        }
      }
    }
  }
}

void unpack_row_k4(const KFmt& f, const uint8_t* packed, int64_t k, int64_t r, uint8_t* out) {
  const int L = lane_row(int(r % 16));
  const uint8_t* p = packed + r / 16 * (k / 256) * f.group_sb();
  for (int64_t sb = 0; sb < k / 256; ++sb, p += f.group_sb(), out += f.bb) {
    std::memset(out, 0, size_t(f.bb));
    std::memcpy(out, p + f.d() + 2 * L, 2);
    if (f.xs) {
      uint16_t sh = 0;
      for (int j = 0; j < 8; ++j) {
        const int ls = int(int8_t(p[f.sc() + 16 * j + L])) + 32;
        out[4 + j / 2] |= uint8_t((ls & 0xF) << (4 * (j % 2)));
        sh |= uint16_t((ls >> 4) << (2 * j));
      }
      std::memcpy(out + 2, &sh, 2);
    } else {
      std::memcpy(out + 2, p + f.d() + 32 + 2 * L, 2);
      uint8_t sc[8], m[8];
      for (int j = 0; j < 8; ++j) {
        sc[j] = p[f.sc() + 16 * j + L];
        m[j] = p[f.sc() + 128 + 16 * j + L];
      }
      uint8_t* s = out + 4;
      for (int j = 0; j < 4; ++j) {
        s[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
        s[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
      }
    }
    for (int j = 0; j < 8; ++j) {
      const uint8_t* cj = p + f.cb() * j;
      for (int e = 0; e < 32; ++e) {
        f.set_nib(out, j, e, (cj[k_code_byte(L, e)] >> (4 * (e / 16))) & 0xF);
        if (f.qh >= 0) {
          const auto [byte, bit] = qh_bit(PackLayout::AVX2, L, e);
          if ((cj[256 + byte] >> bit) & 1) out[f.qh + e] |= uint8_t(1u << j);
        }
      }
    }
  }
}

// Q6_K, AVX2 layout only (pack.h). Per super-block of a group: sub-block j (32 elements) at
// 384·j: 4 code registers of low nibbles in Q4_0's order, then 2 registers of high bits; the scale
// pairs at 3072 + 32·j, the f16 d at 3328. The same 210 bytes per row as the file.
constexpr int64_t kQ6KBlock = 210, kQ6KGroupSB = 8 * 384 + 8 * 32 + 32;

// Element e's 6-bit code in a Q6_K block (ql[128], qh[64], scales[16], d), as ggml lays it out.
inline int q6k_code(const uint8_t* blk, int e) {
  const int n = e / 128, t = e % 128 / 32, l = e % 32;
  const uint8_t ql = blk[64 * n + l + 32 * (t % 2)];
  return ((t / 2 ? ql >> 4 : ql & 0xF) | (((blk[128 + 32 * n + l] >> (2 * t)) & 3) << 4));
}
inline void q6k_set_code(uint8_t* blk, int e, int q) {
  const int n = e / 128, t = e % 128 / 32, l = e % 32;
  blk[64 * n + l + 32 * (t % 2)] |= uint8_t((q & 0xF) << (4 * (t / 2)));
  blk[128 + 32 * n + l] |= uint8_t((q >> 4) << (2 * t));
}
// Where element i (0..31) of a sub-block goes: code byte (register d, byte jj), nibble, high-bit shift.
struct Q6Pos {
  int d, jj, nib, plane, shift;
};
inline Q6Pos q6k_pos(int i) {
  const int d = i % 16 / 4, jj = i % 4, hi = i / 16;
  return {d, jj, hi, d / 2, 4 * (d % 2) + 2 * hi};
}

void pack_group_q6k(const uint8_t* w, int64_t row_bytes, int64_t n, int64_t g, int64_t nsb, uint8_t* out) {
  for (int64_t sb = 0; sb < nsb; ++sb, out += kQ6KGroupSB) {
    std::memset(out, 0, size_t(kQ6KGroupSB));
    for (int L = 0; L < 16; ++L) {
      const uint8_t* blk = w + std::min<int64_t>(16 * g + lane_row(L), n - 1) * row_bytes + sb * kQ6KBlock;
      std::memcpy(out + 3328 + 2 * L, blk + 208, 2);
      for (int s = 0; s < 16; ++s) out[3072 + 32 * (s / 2) + 2 * L + s % 2] = blk[192 + s];
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 32; ++i) {
          const int q = q6k_code(blk, 32 * j + i);
          const Q6Pos p = q6k_pos(i);
          out[384 * j + 64 * p.d + 4 * L + p.jj] |= uint8_t((q & 0xF) << (4 * p.nib));
          out[384 * j + 256 + 64 * p.plane + 4 * L + p.jj] |= uint8_t((q >> 4) << p.shift);
        }
    }
  }
}

void unpack_row_q6k(const uint8_t* packed, int64_t k, int64_t r, uint8_t* out) {
  const int L = lane_row(int(r % 16));
  const uint8_t* p = packed + r / 16 * (k / 256) * kQ6KGroupSB;
  for (int64_t sb = 0; sb < k / 256; ++sb, p += kQ6KGroupSB, out += kQ6KBlock) {
    std::memset(out, 0, size_t(kQ6KBlock));
    std::memcpy(out + 208, p + 3328 + 2 * L, 2);
    for (int s = 0; s < 16; ++s) out[192 + s] = p[3072 + 32 * (s / 2) + 2 * L + s % 2];
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 32; ++i) {
        const Q6Pos q = q6k_pos(i);
        const int lo = (p[384 * j + 64 * q.d + 4 * L + q.jj] >> (4 * q.nib)) & 0xF;
        const int hi = (p[384 * j + 256 + 64 * q.plane + 4 * L + q.jj] >> q.shift) & 3;
        q6k_set_code(out, 32 * j + i, lo | (hi << 4));
      }
  }
}

// F32, AVX512 layout only (pack.h): group g holds element e of row 16g + L at float 16e + L.
void pack_group_f32(const float* w, int64_t n, int64_t k, int64_t g, float* out) {
  const float* src[16];
  for (int L = 0; L < 16; ++L) src[L] = w + std::min<int64_t>(16 * g + L, n - 1) * k;
  for (int64_t e = 0; e < k; ++e)
    for (int L = 0; L < 16; ++L) out[16 * e + L] = src[L][e];
}

// BF16, AVX512 layout only (pack.h): dword 16p + L of group g holds elements 2p (low half) and
// 2p + 1 of row 16g + L; an odd k's last pair has a zero high half.
void pack_group_bf16(const uint16_t* w, int64_t n, int64_t k, int64_t g, uint32_t* out) {
  const uint16_t* src[16];
  for (int L = 0; L < 16; ++L) src[L] = w + std::min<int64_t>(16 * g + L, n - 1) * k;
  for (int64_t p = 0; 2 * p < k; ++p)
    for (int L = 0; L < 16; ++L)
      out[16 * p + L] = uint32_t(src[L][2 * p]) | (2 * p + 1 < k ? uint32_t(src[L][2 * p + 1]) << 16 : 0u);
}

bool is_float(DType t) { return t == DType::F32 || t == DType::BF16; }
bool k_packable(DType t) { return k_fmt(t) != nullptr || t == DType::Q6_K; }
int64_t k_group_sb(DType t) { return k_fmt(t) ? k_fmt(t)->group_sb() : kQ6KGroupSB; }

}  // namespace

bool packable(DType t) { return pack_fmt(t) != nullptr || k_packable(t) || is_float(t); }
bool packable(DType t, PackLayout l) {
  return pack_fmt(t) != nullptr || (k_packable(t) && l == PackLayout::AVX2) || (is_float(t) && l == PackLayout::AVX512);
}

int64_t matmul_packed_bytes(DType t, int64_t n, int64_t k) {
  if (t == DType::F32) return (n + 15) / 16 * 16 * k * int64_t(sizeof(float));
  if (t == DType::BF16) return (n + 15) / 16 * 16 * ((k + 1) / 2) * int64_t(sizeof(uint32_t));
  const PackFmt* f = pack_fmt(t);
  if (k_packable(t) && k % 256 == 0) return (n + 15) / 16 * (k / 256) * k_group_sb(t);
  OXYD_CHECK(f && k % 32 == 0, "matmul_packed_bytes: not a packable weight");
  return (n + 15) / 16 * (k / 32) * f->gb();
}

void matmul_pack(const Tensor& w, PackLayout layout, uint8_t* out) {
  const PackFmt* f = pack_fmt(w.dtype);
  OXYD_CHECK(packable(w.dtype, layout) && w.ndim == 2 && (is_float(w.dtype) || w.cols() % (f ? 32 : 256) == 0) && w.rows() > 0,
             "matmul_pack: not a packable weight");
  const int64_t n = w.rows(), nb = w.cols() / 32, groups = (n + 15) / 16;
  const uint8_t* src = static_cast<const uint8_t*>(w.data);
  const int64_t row_bytes = w.row_bytes(), group_bytes = matmul_packed_bytes(w.dtype, 16, w.cols());
  // Own threads, not the global pool: a model may load while another model's engine runs on it.
  const int64_t parts = std::clamp<int64_t>(groups / 64, 1, std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&](int64_t part) {
    for (int64_t g = groups * part / parts; g < groups * (part + 1) / parts; ++g)
      if (w.dtype == DType::F32)
        pack_group_f32(w.ptr<float>(), n, w.cols(), g, reinterpret_cast<float*>(out + g * group_bytes));
      else if (w.dtype == DType::BF16)
        pack_group_bf16(static_cast<const uint16_t*>(w.data), n, w.cols(), g, reinterpret_cast<uint32_t*>(out + g * group_bytes));
      else if (f)
        pack_group(*f, layout, src, row_bytes, n, g, nb, out + g * group_bytes);
      else if (const KFmt* kf = k_fmt(w.dtype))
        pack_group_k4(*kf, src, row_bytes, n, g, nb / 8, out + g * group_bytes);
      else
        pack_group_q6k(src, row_bytes, n, g, nb / 8, out + g * group_bytes);
  };
  std::vector<std::thread> threads;
  for (int64_t p = 1; p < parts; ++p) threads.emplace_back(work, p);
  work(0);
  for (auto& t : threads) t.join();
}

void matmul_unpack_row(DType t, PackLayout layout, const uint8_t* packed, int64_t k, int64_t r, uint8_t* out) {
  if (t == DType::F32 && layout == PackLayout::AVX512) {
    const float* p = reinterpret_cast<const float*>(packed) + r / 16 * 16 * k + r % 16;
    float* o = reinterpret_cast<float*>(out);
    for (int64_t e = 0; e < k; ++e) o[e] = p[16 * e];
    return;
  }
  if (t == DType::BF16 && layout == PackLayout::AVX512) {
    const uint32_t* p = reinterpret_cast<const uint32_t*>(packed) + r / 16 * 16 * ((k + 1) / 2) + r % 16;
    uint16_t* o = reinterpret_cast<uint16_t*>(out);
    for (int64_t e = 0; e < k; ++e) o[e] = uint16_t(p[16 * (e / 2)] >> (16 * (e % 2)));
    return;
  }
  if (k_fmt(t) && layout == PackLayout::AVX2 && k % 256 == 0) return unpack_row_k4(*k_fmt(t), packed, k, r, out);
  if (t == DType::Q6_K && layout == PackLayout::AVX2 && k % 256 == 0) return unpack_row_q6k(packed, k, r, out);
  const PackFmt* f = pack_fmt(t);
  OXYD_CHECK(f && k % 32 == 0, "matmul_unpack_row: not a packable weight");
  const int64_t nb = k / 32;
  const int L = lane_row(int(r % 16));
  const uint8_t* p = packed + r / 16 * nb * f->gb();
  for (int64_t b = 0; b < nb; ++b, p += f->gb(), out += f->bb) {
    for (int i = 0; i < f->ns; ++i) std::memcpy(out + f->fs * i, p + f->field_off(i, L), size_t(f->fs));
    for (int d = 0; d < f->nd; ++d)
      for (int j = 0; j < 4; ++j) out[f->qoff + 4 * d + j] = uint8_t(p[64 * d + 4 * L + j] ^ f->flip4(layout));
    if (f->qh >= 0) {
      uint32_t qh = 0;
      for (int e = 0; e < 32; ++e) {
        const auto [byte, bit] = qh_bit(layout, L, e);
        if ((p[f->mask_off() + byte] >> bit) & 1u) qh |= 1u << e;
      }
      std::memcpy(out + f->qh, &qh, 4);
    }
  }
}

}  // namespace oxyd::backend::cpu
