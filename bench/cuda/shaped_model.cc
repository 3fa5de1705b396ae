// Shaped random GGUFs (see shaped_model.h).
#include "shaped_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/quant.h"
#include "core/splitmix64.h"
#include "loader/gguf_writer.h"

namespace oxyd::bench {
namespace {

constexpr ModelShape kShapes[] = {
    // Llama-3.2-1B: tied embeddings, head_dim 64, rope theta 5e5 (its llama3 rope scaling left out:
    // it changes no byte read).
    {"llama-1b", "llama", 16, 2048, 32, 8, 64, 8192, 128256, true, false, 500000.0},
    // Qwen3-8B: separate LM head, q/k norms.
    {"qwen3-8b", "qwen3", 36, 4096, 32, 8, 128, 12288, 151936, false, true, 1000000.0},
    {"tiny", "qwen3", 2, 256, 4, 2, 64, 512, 1024, false, true, 1000000.0},
};

constexpr int64_t kPoolWeights = int64_t(1) << 22;
constexpr int64_t kPoolRow = 4096;  // quantized in rows of this many weights (a multiple of 256)

// N(0, 0.02) weights of pool row r from the seed (Box-Muller over splitmix64), quantized to t.
void make_pool_row(DType t, uint64_t seed, int64_t r, uint8_t* dst) {
  std::vector<float> x(kPoolRow);
  uint64_t st = splitmix64_mix(seed * 0x100000001B3ull + uint64_t(r) + 1);
  for (int64_t i = 0; i < kPoolRow; i += 2) {
    const double u1 = (double(splitmix64_next(st) >> 11) + 1.0) * 0x1p-53, u2 = double(splitmix64_next(st) >> 11) * 0x1p-53;
    const double rad = std::sqrt(-2.0 * std::log(u1)) * 0.02;
    x[size_t(i)] = float(rad * std::cos(2.0 * M_PI * u2));
    x[size_t(i + 1)] = float(rad * std::sin(2.0 * M_PI * u2));
  }
  quantize_row(t, x.data(), dst, kPoolRow);
}

// The pool of one type: kPoolWeights weights as kPoolWeights / kPoolRow rows of t.
std::vector<uint8_t> make_pool(DType t, uint64_t seed, int threads) {
  const int64_t rows = kPoolWeights / kPoolRow, row_bytes = dtype_row_bytes(t, kPoolRow);
  std::vector<uint8_t> pool(size_t(rows * row_bytes));
  const int n = std::clamp(threads, 1, int(rows));
  std::vector<std::thread> workers;
  for (int w = 0; w < n; ++w)
    workers.emplace_back([&, w] {
      for (int64_t r = w; r < rows; r += n) make_pool_row(t, seed, r, pool.data() + r * row_bytes);
    });
  for (auto& th : workers) th.join();
  return pool;
}

// Fills `out` (whole blocks of the pool's type) with the pool's bytes from block `start` on, wrapping.
void fill_from_pool(const std::vector<uint8_t>& pool, int64_t block_bytes, uint64_t start, std::span<uint8_t> out) {
  const size_t n = pool.size();
  size_t at = size_t(start % (n / size_t(block_bytes))) * size_t(block_bytes), done = 0;
  while (done < out.size()) {
    const size_t k = std::min(out.size() - done, n - at);
    std::memcpy(out.data() + done, pool.data() + at, k);
    done += k;
    at = 0;
  }
}

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

}  // namespace

const ModelShape* find_shape(std::string_view name) {
  for (const ModelShape& s : kShapes)
    if (name == s.name) return &s;
  return nullptr;
}

std::string shape_names() {
  std::string out;
  for (const ModelShape& s : kShapes) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

DType shaped_weight_type(std::string_view name) {
  if (name == "F16") return DType::F16;
  if (name == "Q4_K") return DType::Q4_K;
  throw_error(ErrorCode::INVALID_ARGUMENT, "shaped model type '" + std::string(name) + "': F16 or Q4_K");
}

int64_t write_shaped_gguf(const std::string& path, const ModelShape& s, DType type, uint64_t seed, int threads) {
  if (type != DType::F16 && type != DType::Q4_K)
    throw_error(ErrorCode::INVALID_ARGUMENT, "shaped model type " + std::string(dtype_name(type)) + ": F16 or Q4_K");
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const DType head_type = type == DType::Q4_K ? DType::Q6_K : type;  // token_embd, output
  std::vector<uint8_t> pool = make_pool(type, seed, threads), head_pool;
  if (head_type != type) head_pool = make_pool(head_type, seed, threads);
  const int64_t block_bytes = dtype_block_bytes(type);
  const int64_t head_block_bytes = dtype_block_bytes(head_type);

  loader::GgufWriter w;
  const std::string a = s.arch;
  w.add_string("general.architecture", a);
  w.add_string("general.name", std::string(s.name) + "-shaped random " + std::string(dtype_name(type)));
  w.add_scalar<uint32_t>(a + ".block_count", uint32_t(s.layers));
  w.add_scalar<uint32_t>(a + ".context_length", 32768);
  w.add_scalar<uint32_t>(a + ".embedding_length", uint32_t(s.hidden));
  w.add_scalar<uint32_t>(a + ".feed_forward_length", uint32_t(s.ffn));
  w.add_scalar<uint32_t>(a + ".attention.head_count", uint32_t(s.heads));
  w.add_scalar<uint32_t>(a + ".attention.head_count_kv", uint32_t(s.kv_heads));
  w.add_scalar<uint32_t>(a + ".attention.key_length", uint32_t(s.head_dim));
  w.add_scalar<uint32_t>(a + ".attention.value_length", uint32_t(s.head_dim));
  w.add_scalar<uint32_t>(a + ".rope.dimension_count", uint32_t(s.head_dim));
  w.add_scalar<float>(a + ".rope.freq_base", float(s.rope_theta));
  w.add_scalar<float>(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_scalar<uint32_t>(a + ".vocab_size", uint32_t(s.vocab));

  auto weight = [&](const std::string& name, int64_t rows, int64_t cols, bool head) {
    const std::vector<uint8_t>& p = head ? head_pool.empty() ? pool : head_pool : pool;
    const int64_t bb = head ? head_block_bytes : block_bytes;
    const uint64_t start = splitmix64_mix(seed ^ name_hash(name));
    w.add_tensor_filled(name, head ? head_type : type, {rows, cols},
                        [&p, bb, start](std::span<uint8_t> out) { fill_from_pool(p, bb, start, out); });
  };
  auto norm = [&](const std::string& name, int64_t n) {
    w.add_tensor_filled(name, DType::F32, {n}, [](std::span<uint8_t> out) {
      const float one = 1.0f;
      for (size_t i = 0; i < out.size(); i += 4) std::memcpy(out.data() + i, &one, 4);
    });
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  weight("token_embd.weight", s.vocab, s.hidden, true);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    norm(p + "attn_norm.weight", s.hidden);
    weight(p + "attn_q.weight", q, s.hidden, false);
    weight(p + "attn_k.weight", kv, s.hidden, false);
    weight(p + "attn_v.weight", kv, s.hidden, false);
    if (s.qk_norm) {
      norm(p + "attn_q_norm.weight", s.head_dim);
      norm(p + "attn_k_norm.weight", s.head_dim);
    }
    weight(p + "attn_output.weight", s.hidden, q, false);
    norm(p + "ffn_norm.weight", s.hidden);
    weight(p + "ffn_gate.weight", s.ffn, s.hidden, false);
    weight(p + "ffn_up.weight", s.ffn, s.hidden, false);
    weight(p + "ffn_down.weight", s.hidden, s.ffn, false);
  }
  norm("output_norm.weight", s.hidden);
  if (!s.tied) weight("output.weight", s.vocab, s.hidden, true);
  const std::string tmp = path + ".tmp";
  w.write(tmp);
  std::filesystem::rename(tmp, path);
  return int64_t(std::filesystem::file_size(path));
}

}  // namespace oxyd::bench
