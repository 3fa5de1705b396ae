// Packing of the 32-block formats into 16-row groups; the two layouts are in matmul_pack.h.
#include "backend/cpu/matmul_pack.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/matmul_decode_impl.h"
#include "core/error.h"

namespace oxyd::backend::cpu {
namespace {

// bb block bytes, qoff offset of the code bytes, nd code dwords per row (8: 32 one-byte codes, 4:
// 32 nibbles), qh offset of Q5's 32 fifth bits (-1: none), flip XORed into every code byte in the
// AVX512 layout, ns f16 fields at the block's start (1: the scale; 2: scale and min).
struct PackFmt {
  int bb, qoff, nd, qh;
  uint8_t flip;
  int ns;
  uint32_t flip4(PackLayout l) const { return l == PackLayout::AVX512 ? flip * 0x01010101u : 0u; }
  int64_t gb() const { return 16 * int64_t(bb); }
  int mask_off() const { return 64 * nd; }
  int64_t scale_off() const { return gb() - 32 * ns; }
};

const PackFmt* pack_fmt(DType t) {
  static constexpr PackFmt kQ8_0{34, 2, 8, -1, 0x80, 1}, kQ4_0{18, 2, 4, -1, 0, 1}, kQ4_1{20, 4, 4, -1, 0, 2},
      kQ5_0{22, 6, 4, 2, 0, 1}, kQ5_1{24, 8, 4, 4, 0, 2}, kIQ4_NL{18, 2, 4, -1, 0, 1};
  switch (t) {
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
      for (int i = 0; i < f.ns; ++i) std::memcpy(out + f.scale_off() + 32 * i + 2 * L, blk + 2 * i, 2);
    }
  }
}

// Q4_K, AVX2 layout only (matmul_pack.h). Per super-block of a group: codes of sub-block j at
// 256·j, then sc[j][L] at 2048 + 16·j, m[j][L] at 2176 + 16·j, d[L] (f16) at 2304, dmin[L] at 2336.
constexpr int64_t kQ4KBlock = 144, kQ4KGroupSB = 8 * 256 + 2 * 128 + 2 * 32;

void pack_group_q4k(const uint8_t* w, int64_t row_bytes, int64_t n, int64_t g, int64_t nsb, uint8_t* out) {
  for (int64_t sb = 0; sb < nsb; ++sb, out += kQ4KGroupSB)
    for (int L = 0; L < 16; ++L) {
      const uint8_t* blk = w + std::min<int64_t>(16 * g + lane_row(L), n - 1) * row_bytes + sb * kQ4KBlock;
      std::memcpy(out + 2304 + 2 * L, blk, 2);
      std::memcpy(out + 2336 + 2 * L, blk + 2, 2);
      for (int j = 0; j < 8; ++j) {
        scale_min_k4(j, blk + 4, out[2048 + 16 * j + L], out[2176 + 16 * j + L]);
        const uint8_t* qs = blk + 16 + 32 * (j / 2);
        const int shift = 4 * (j % 2);
        for (int i = 0; i < 16; ++i)  // code byte i of the sub-block: element i, high nibble 16 + i
          out[256 * j + 64 * (i / 4) + 4 * L + i % 4] =
              uint8_t(((qs[i] >> shift) & 0xF) | (((qs[i + 16] >> shift) & 0xF) << 4));
      }
    }
}

void unpack_row_q4k(const uint8_t* packed, int64_t k, int64_t r, uint8_t* out) {
  const int L = lane_row(int(r % 16));
  const uint8_t* p = packed + r / 16 * (k / 256) * kQ4KGroupSB;
  for (int64_t sb = 0; sb < k / 256; ++sb, p += kQ4KGroupSB, out += kQ4KBlock) {
    std::memcpy(out, p + 2304 + 2 * L, 2);
    std::memcpy(out + 2, p + 2336 + 2 * L, 2);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = p[2048 + 16 * j + L];
      m[j] = p[2176 + 16 * j + L];
    }
    uint8_t* s = out + 4;
    for (int j = 0; j < 4; ++j) {
      s[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
      s[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
      s[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
    }
    uint8_t* qs = out + 16;
    std::memset(qs, 0, 128);
    for (int j = 0; j < 8; ++j)
      for (int e = 0; e < 32; ++e) {
        const uint8_t byte = p[256 * j + 64 * (e % 16 / 4) + 4 * L + e % 4];
        const uint8_t code = e < 16 ? byte & 0xF : byte >> 4;
        qs[32 * (j / 2) + e] |= uint8_t(code << (4 * (j % 2)));
      }
  }
}

// Q6_K, AVX2 layout only (matmul_pack.h). Per super-block of a group: sub-block j (32 elements) at
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

bool k_packable(DType t) { return t == DType::Q4_K || t == DType::Q6_K; }
int64_t k_group_sb(DType t) { return t == DType::Q4_K ? kQ4KGroupSB : kQ6KGroupSB; }

}  // namespace

bool packable(DType t) { return pack_fmt(t) != nullptr || k_packable(t); }
bool packable(DType t, PackLayout l) { return pack_fmt(t) != nullptr || (k_packable(t) && l == PackLayout::AVX2); }

int64_t matmul_packed_bytes(DType t, int64_t n, int64_t k) {
  const PackFmt* f = pack_fmt(t);
  if (k_packable(t) && k % 256 == 0) return (n + 15) / 16 * (k / 256) * k_group_sb(t);
  OXYD_CHECK(f && k % 32 == 0, "matmul_packed_bytes: not a packable weight");
  return (n + 15) / 16 * (k / 32) * f->gb();
}

void matmul_pack(const Tensor& w, PackLayout layout, uint8_t* out) {
  const PackFmt* f = pack_fmt(w.dtype);
  OXYD_CHECK(packable(w.dtype, layout) && w.ndim == 2 && w.cols() % (f ? 32 : 256) == 0 && w.rows() > 0,
             "matmul_pack: not a packable weight");
  const int64_t n = w.rows(), nb = w.cols() / 32, groups = (n + 15) / 16;
  const uint8_t* src = static_cast<const uint8_t*>(w.data);
  const int64_t row_bytes = w.row_bytes(), group_bytes = matmul_packed_bytes(w.dtype, 16, w.cols());
  // Own threads, not the global pool: a model may load while another model's engine runs on it.
  const int64_t parts = std::clamp<int64_t>(groups / 64, 1, std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&](int64_t part) {
    for (int64_t g = groups * part / parts; g < groups * (part + 1) / parts; ++g)
      if (f)
        pack_group(*f, layout, src, row_bytes, n, g, nb, out + g * group_bytes);
      else if (w.dtype == DType::Q4_K)
        pack_group_q4k(src, row_bytes, n, g, nb / 8, out + g * group_bytes);
      else
        pack_group_q6k(src, row_bytes, n, g, nb / 8, out + g * group_bytes);
  };
  std::vector<std::thread> threads;
  for (int64_t p = 1; p < parts; ++p) threads.emplace_back(work, p);
  work(0);
  for (auto& t : threads) t.join();
}

void matmul_unpack_row(DType t, PackLayout layout, const uint8_t* packed, int64_t k, int64_t r, uint8_t* out) {
  if (t == DType::Q4_K && layout == PackLayout::AVX2 && k % 256 == 0) return unpack_row_q4k(packed, k, r, out);
  if (t == DType::Q6_K && layout == PackLayout::AVX2 && k % 256 == 0) return unpack_row_q6k(packed, k, r, out);
  const PackFmt* f = pack_fmt(t);
  OXYD_CHECK(f && k % 32 == 0, "matmul_unpack_row: not a packable weight");
  const int64_t nb = k / 32;
  const int L = lane_row(int(r % 16));
  const uint8_t* p = packed + r / 16 * nb * f->gb();
  for (int64_t b = 0; b < nb; ++b, p += f->gb(), out += f->bb) {
    for (int i = 0; i < f->ns; ++i) std::memcpy(out + 2 * i, p + f->scale_off() + 32 * i + 2 * L, 2);
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
