// estimate: KV/state/weights figures checked against arithmetic written out here (and the
// published Qwen3-4B figure of 144 KiB/token, 576 MiB at 4096 ctx, FEATURES-REFERENCE §1.14) for
// full, sliding-window, kv-quant, Gated DeltaNet and MoE configs; remote estimate over the fake
// hub reads GGUF headers with Range requests only (bytes served ≪ file size) and agrees with the
// local estimate of the same file; safetensors sizes from the index or the header length.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>

#include "fake_hub.h"
#include "hub/estimate.h"
#include "hub/model_meta.h"
#include "hub/progress.h"
#include "hub/report.h"
#include "hub_test_util.h"
#include "loader/gguf_writer.h"
#include "model/model_config.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using namespace oxyd::hub::testing;
using loader::GgufMetadata;
using loader::GgufValue;

template <typename T>
void put(GgufMetadata& md, const std::string& key, T v) {
  md.add(key, GgufValue::scalar<T>(v));
}

// Qwen3-4B geometry (36 layers, 32 q heads, 8 kv heads, head_dim 128, hidden 2560).
GgufMetadata qwen3_4b() {
  GgufMetadata md("qwen3-4b test metadata");
  md.add("general.architecture", GgufValue::string("qwen3"));
  put<uint32_t>(md, "qwen3.block_count", 36);
  put<uint32_t>(md, "qwen3.embedding_length", 2560);
  put<uint32_t>(md, "qwen3.context_length", 40960);
  put<uint32_t>(md, "qwen3.attention.head_count", 32);
  put<uint32_t>(md, "qwen3.attention.head_count_kv", 8);
  put<uint32_t>(md, "qwen3.attention.key_length", 128);
  put<uint32_t>(md, "qwen3.feed_forward_length", 9728);
  put<uint32_t>(md, "qwen3.vocab_size", 151936);
  return md;
}

TEST(Estimate, FullAttentionMatchesPublishedQwen3Figure) {
  auto cfg = model::model_config_from_gguf(qwen3_4b());
  EstimateParams p;  // 4096 ctx, 1 seq
  p.kv_format = KvFormat::F16;
  MemoryEstimate e = estimate_memory(cfg, 1000, p);
  EXPECT_EQ(e.kv_bytes, int64_t(576) << 20);  // 144 KiB/token × 4096
  EXPECT_EQ(e.kv_bytes / 4096, 144 * 1024);
  EXPECT_EQ(e.num_full_layers, 36);
  EXPECT_EQ(e.weight_bytes, 1000);
  p.context_len = 8192;
  p.num_sequences = 4;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, int64_t(4608) << 20);  // 4.5 GiB
  p.context_len = 4100;  // rounded up to whole 16-token blocks: 4112 tokens
  p.num_sequences = 1;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, int64_t(2) * 36 * 8 * 128 * 2 * 4112);
  p.kv_format = KvFormat::F32;
  p.context_len = 4096;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, int64_t(1152) << 20);
}

TEST(Estimate, KvQuantModesCountCodesAndNorms) {
  auto cfg = model::model_config_from_gguf(qwen3_4b());
  EstimateParams p;
  // head_dim 128: 128·b/8 code bytes + one 4-byte f32 norm per head vector.
  const int64_t vectors = int64_t(2) * 36 * 8 * 4096;
  p.kv_format = parse_kv_format("bf16", "lossless");  // 8 bits
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, vectors * (128 + 4));
  p.kv_format = parse_kv_format("bf16", "Balanced");  // 6 bits
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, vectors * (96 + 4));
  p.kv_format = parse_kv_format("bf16", "aggressive");  // 5 bits
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, vectors * (80 + 4));
  p.kv_format = parse_kv_format("bf16", "q4");
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, vectors * (64 + 4));
  EXPECT_EQ(kv_format_row_bytes(KvFormat::Q3, 80), 30 + 4);  // 240 bits = 30 bytes
  EXPECT_EQ(kv_format_row_bytes(KvFormat::Q3, 72), 27 + 4);
  expect_error([] { parse_kv_format("bf16", "8bit"); }, ErrorCode::INVALID_ARGUMENT, {"lossless", "aggressive"});
}

TEST(Estimate, SlidingLayersAtFullContextAsThePagedPoolHoldsThem) {
  // Gemma 3 270M geometry: 18 layers, 5 sliding : 1 full, window 512, 1 kv head × 256.
  GgufMetadata md("gemma3 test metadata");
  md.add("general.architecture", GgufValue::string("gemma3"));
  put<uint32_t>(md, "gemma3.block_count", 18);
  put<uint32_t>(md, "gemma3.embedding_length", 640);
  put<uint32_t>(md, "gemma3.context_length", 32768);
  put<uint32_t>(md, "gemma3.attention.head_count", 4);
  put<uint32_t>(md, "gemma3.attention.head_count_kv", 1);
  put<uint32_t>(md, "gemma3.attention.key_length", 256);
  put<uint32_t>(md, "gemma3.feed_forward_length", 2048);
  put<uint32_t>(md, "gemma3.attention.sliding_window", 512);
  put<uint32_t>(md, "gemma3.vocab_size", 262144);  // model validation needs a vocabulary
  auto cfg = model::model_config_from_gguf(md);
  EstimateParams p;
  p.context_len = 32768;
  p.kv_format = KvFormat::F16;
  MemoryEstimate e = estimate_memory(cfg, 0, p);
  EXPECT_EQ(e.num_full_layers, 3);
  EXPECT_EQ(e.num_sliding_layers, 15);
  const int64_t per_token = 2 * 1 * 256 * 2;                   // K+V, 1 head, f16
  const int64_t full = 3 * 32768 * per_token;                   // 96 MiB
  const int64_t sliding = 15 * (512 + 16) * per_token;          // window + one straddled block
  // The engine's paged pool: one block table per sequence for all layers, so every layer holds
  // the whole context (576 MiB here); the windowed figure is reported beside it.
  EXPECT_EQ(e.kv_bytes, 18 * 32768 * per_token);
  EXPECT_EQ(e.kv_bytes_windowed, full + sliding);
  EXPECT_NE(describe_kv(e, p).find("the paged pool is sized for whole contexts on every layer (" + format_bytes(full + sliding) +
                                   " with sliding layers at their window)"),
            std::string::npos) << describe_kv(e, p);
  p.windowed_sliding_kv = true;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, full + sliding);
  // Short contexts: a sliding layer holds no more than the context.
  p.context_len = 100;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, 18 * 112 * per_token);
  p.windowed_sliding_kv = false;
  EXPECT_EQ(estimate_memory(cfg, 0, p).kv_bytes, 18 * 112 * per_token);
}

TEST(Estimate, GatedDeltaNetLayersCountedByState) {
  // Qwen3.5-style hybrid: 8 layers, every 4th full attention, the rest Gated DeltaNet.
  GgufMetadata md("qwen35 test metadata");
  md.add("general.architecture", GgufValue::string("qwen35"));
  put<uint32_t>(md, "qwen35.block_count", 8);
  put<uint32_t>(md, "qwen35.embedding_length", 256);
  put<uint32_t>(md, "qwen35.context_length", 8192);
  put<uint32_t>(md, "qwen35.attention.head_count", 4);
  put<uint32_t>(md, "qwen35.attention.head_count_kv", 2);
  put<uint32_t>(md, "qwen35.attention.key_length", 64);
  put<uint32_t>(md, "qwen35.feed_forward_length", 512);
  put<uint32_t>(md, "qwen35.full_attention_interval", 4);
  put<uint32_t>(md, "qwen35.ssm.conv_kernel", 4);
  put<uint32_t>(md, "qwen35.ssm.state_size", 16);     // dk
  put<uint32_t>(md, "qwen35.ssm.group_count", 2);     // Hk
  put<uint32_t>(md, "qwen35.ssm.time_step_rank", 4);  // Hv
  put<uint32_t>(md, "qwen35.ssm.inner_size", 64);     // Hv·dv → dv = 16
  put<uint32_t>(md, "qwen35.vocab_size", 248320);     // model validation needs a vocabulary
  auto cfg = model::model_config_from_gguf(md);
  EstimateParams p;
  p.context_len = 2048;
  p.num_sequences = 3;
  p.kv_format = KvFormat::F16;
  MemoryEstimate e = estimate_memory(cfg, 0, p);
  EXPECT_EQ(e.num_linear_layers, 6);
  EXPECT_EQ(e.num_full_layers, 2);
  EXPECT_EQ(e.kv_bytes, int64_t(2) * 2 * 2048 * 2 * 64 * 2 * 3);  // 2 layers, K+V, 2 heads × 64, f16, 3 seqs
  const int64_t delta_state = 4 * 16 * 16 * 4;                    // Hv·dk·dv f32
  const int64_t conv_state = (2 * 2 * 16 + 4 * 16) * 3 * 4;       // conv_dim × (kernel−1) f32
  // Each of the 3 sequences: its live state and, with the prefix cache on (the server's default),
  // one snapshot slot; without the prefix cache the live states only.
  EXPECT_EQ(e.state_bytes, 6 * (delta_state + conv_state) * (3 + 3));
  p.prefix_caching = false;
  EXPECT_EQ(estimate_memory(cfg, 0, p).state_bytes, 6 * (delta_state + conv_state) * 3);
  p.prefix_caching = true;
  // The state does not grow with the context.
  p.context_len = 8192;
  EXPECT_EQ(estimate_memory(cfg, 0, p).state_bytes, e.state_bytes);
}

TEST(Estimate, RuntimeBuffersFollowTheWrittenFormula) {
  auto cfg = model::model_config_from_gguf(qwen3_4b());
  EstimateParams p;
  // T = 1024 tokens; per token x, h (2·2560), q, attention out (2·32·128), k, v (2·8·128), gate,
  // up (2·9728) f32; one row into the head (2560) and its logits (151936).
  const int64_t per_token = 2 * 2560 + 2 * 32 * 128 + 2 * 8 * 128 + 2 * 9728;
  const int64_t rows = 2560 + 151936;
  // Default scratch: this machine's CPU kernels (the test lists no tensor types: Q8_0 weights),
  // over the widest input (9728) or the head (one row of 2560).
  const int64_t scratch = std::max({cpu_matmul_scratch("Q8_0", 1024, 2560), cpu_matmul_scratch("Q8_0", 1024, 4096),
                                    cpu_matmul_scratch("Q8_0", 1024, 9728), cpu_matmul_scratch("Q8_0", 1, 2560)});
  EXPECT_GT(scratch, 0);
  EXPECT_EQ(estimate_memory(cfg, 0, p).runtime_bytes, (int64_t(1024) * per_token + rows) * 4 + scratch);
  EXPECT_EQ(cpu_matmul_scratch("NOT_A_TYPE", 1024, 9728), 0);
  // F32 / F16 weights are read as they are: no scratch.
  EXPECT_EQ(estimate_memory(cfg, 0, p, {{"F16", 3}, {"F32", 2}}).runtime_bytes, (int64_t(1024) * per_token + rows) * 4);
  // The machine's own figure when given (the CLI passes the CPU backend's).
  p.matmul_scratch = [](const std::string& t, int64_t m, int64_t k) { return t == "Q4_K" ? m * k : 0; };
  EXPECT_EQ(estimate_memory(cfg, 0, p, {{"Q4_K", 3}, {"F32", 2}}).runtime_bytes,
            (int64_t(1024) * per_token + rows) * 4 + 1024 * 9728);
  p.context_len = 100;  // fewer tokens than the step budget
  p.num_sequences = 3;  // three logits rows
  EXPECT_EQ(estimate_memory(cfg, 0, p, {{"F32", 1}}).runtime_bytes, (int64_t(300) * per_token + 3 * rows) * 4);
  expect_error([&] { p.context_len = 0; estimate_memory(cfg, 0, p); }, ErrorCode::INVALID_ARGUMENT, {"positive"});
}

// A qwen3 GGUF with a `vocab`-token vocabulary (so the header spans several Range reads) and
// tensors whose byte sizes the test knows: [rows, 256] Q8_0 (34 B / 32 values) + a dense F16.
struct Built {
  std::string bytes;
  int64_t weight_bytes;
};
// shexp: also a shared expert's up projection [128, 256] F16 (expert_shared_feed_forward_length).
Built qwen3_gguf(int64_t rows, int vocab, uint32_t seed, bool moe = false, bool shexp = false) {
  loader::GgufWriter w;
  w.add_string("general.architecture", moe ? "qwen3moe" : "qwen3");
  const std::string a = moe ? "qwen3moe." : "qwen3.";
  w.add_scalar<uint32_t>(a + "block_count", 2);
  w.add_scalar<uint32_t>(a + "embedding_length", 256);
  w.add_scalar<uint32_t>(a + "context_length", 4096);
  w.add_scalar<uint32_t>(a + "attention.head_count", 4);
  w.add_scalar<uint32_t>(a + "attention.head_count_kv", 2);
  w.add_scalar<uint32_t>(a + "attention.key_length", 64);
  w.add_scalar<uint32_t>(a + "feed_forward_length", 512);
  if (moe) {
    w.add_scalar<uint32_t>(a + "expert_count", 8);
    w.add_scalar<uint32_t>(a + "expert_used_count", 2);
    w.add_scalar<uint32_t>(a + "expert_feed_forward_length", 128);
    if (shexp) w.add_scalar<uint32_t>(a + "expert_shared_feed_forward_length", 128);
  }
  w.add_string("tokenizer.ggml.model", "gpt2");
  std::vector<std::string> toks;
  for (int i = 0; i < vocab; ++i) toks.push_back("token_" + std::to_string(i));
  w.add("tokenizer.ggml.tokens", GgufValue::string_array(toks));
  w.add_string("tokenizer.chat_template", "{{ messages }}");
  std::string q8 = random_bytes(size_t(rows * 256 / 32 * 34), seed);
  // The bulk of the file, `rows` long; not token_embd, whose rows must equal the token count.
  w.add_tensor("blk.0.attn_q.weight", DType::Q8_0, {rows, 256},
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(q8.data()), q8.size()));
  int64_t weights = int64_t(q8.size());
  if (moe) {  // all 8 experts' up projections: [8, 128, 256] F16
    std::string ex = random_bytes(8 * 128 * 256 * 2, seed + 1);
    w.add_tensor("blk.0.ffn_up_exps.weight", DType::F16, {8, 128, 256},
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(ex.data()), ex.size()));
    weights += int64_t(ex.size());
  }
  if (shexp) {
    std::string sh = random_bytes(128 * 256 * 2, seed + 3);
    w.add_tensor("blk.0.ffn_up_shexp.weight", DType::F16, {128, 256},
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(sh.data()), sh.size()));
    weights += int64_t(sh.size());
  }
  std::string norm = random_bytes(256 * 4, seed + 2);
  w.add_tensor("output_norm.weight", DType::F32, {256},
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(norm.data()), norm.size()));
  weights += 1024;
  auto b = w.to_bytes();
  return {std::string(b.begin(), b.end()), weights};
}

TEST(Estimate, MoeExpertsCountedWhole) {
  TempDir tmp;
  Built b = qwen3_gguf(64, 10, 5, /*moe=*/true);
  write_file(tmp / "m/Moe-GGUF/Moe-F16.gguf", b.bytes);
  LocalModel lm = local_model_for_path(tmp / "m/Moe-GGUF/Moe-F16.gguf");
  ModelMeta meta = read_local_meta(lm);
  EXPECT_EQ(meta.weight_bytes, b.weight_bytes);  // includes 8 × 128 × 256 × 2 B of experts
  EXPECT_EQ(meta.config.num_experts, 8);
  std::string r = render_local_estimate(lm, meta, EstimateParams{});
  EXPECT_NE(r.find("all 8 experts counted (2 active per token)"), std::string::npos) << r;
  // Per token: everything but 6 of the 8 experts' [128, 256] F16 slices.
  EXPECT_EQ(meta.expert_weight_bytes, 8 * 128 * 256 * 2);
  EXPECT_EQ(active_weight_bytes(meta), b.weight_bytes - 6 * 128 * 256 * 2);
  EXPECT_NE(r.find("Per token"), std::string::npos) << r;
  EXPECT_NE(r.find("2 of 8 experts"), std::string::npos) << r;
}

// `estimate` lists what one token of K+V costs in F16 and in each --kv-quant mode (issue 29), each
// figure the estimate of that format.
TEST(Estimate, PrintsKvBytesPerTokenOfEachMode) {
  TempDir tmp;
  Built b = qwen3_gguf(64, 10, 5, /*moe=*/true);
  write_file(tmp / "m/Moe-GGUF/Moe-F16.gguf", b.bytes);
  LocalModel lm = local_model_for_path(tmp / "m/Moe-GGUF/Moe-F16.gguf");
  ModelMeta meta = read_local_meta(lm);
  const std::string r = render_local_estimate(lm, meta, EstimateParams{});
  auto per_token = [&](KvFormat f) {
    EstimateParams p;
    p.kv_format = f;
    return std::to_string(estimate_memory(meta.config, 0, p).kv_bytes_per_token);
  };
  EXPECT_NE(r.find("KV/token"), std::string::npos) << r;
  EXPECT_NE(r.find("F16 " + per_token(KvFormat::F16)), std::string::npos) << r;
  EXPECT_NE(r.find("lossless Q8 " + per_token(KvFormat::Q8)), std::string::npos) << r;
  EXPECT_NE(r.find("balanced Q6 " + per_token(KvFormat::Q6)), std::string::npos) << r;
  EXPECT_NE(r.find("aggressive Q5 " + per_token(KvFormat::Q5)), std::string::npos) << r;
}

// A shared expert (ffn_*_shexp; HF mlp.shared_expert.*) runs on every token: it is no routed
// expert, so the per-token figure keeps all of it and drops only the unselected routed experts.
TEST(Estimate, MoeSharedExpertCountedAsActive) {
  TempDir tmp;
  Built b = qwen3_gguf(64, 10, 5, /*moe=*/true, /*shexp=*/true);
  write_file(tmp / "m/Moe-GGUF/Moe-F16.gguf", b.bytes);
  LocalModel lm = local_model_for_path(tmp / "m/Moe-GGUF/Moe-F16.gguf");
  ModelMeta meta = read_local_meta(lm);
  EXPECT_EQ(meta.weight_bytes, b.weight_bytes);  // routed experts + the shared one + the rest
  EXPECT_EQ(meta.config.shared_expert_intermediate_size, 128);
  EXPECT_EQ(meta.expert_weight_bytes, 8 * 128 * 256 * 2);  // the routed experts only
  EXPECT_EQ(active_weight_bytes(meta), b.weight_bytes - 6 * 128 * 256 * 2);
  std::string r = render_local_estimate(lm, meta, EstimateParams{});
  EXPECT_NE(r.find("2 of 8 experts + the shared expert"), std::string::npos) << r;
  EXPECT_TRUE(is_expert_tensor("model.layers.0.mlp.experts.gate_up_proj"));
  EXPECT_FALSE(is_expert_tensor("model.language_model.layers.0.mlp.shared_expert.gate_proj.weight"));
  EXPECT_FALSE(is_expert_tensor("model.layers.0.mlp.shared_expert_gate.weight"));
  EXPECT_FALSE(is_expert_tensor("blk.0.ffn_down_shexp.weight"));
}

// A valid safetensors file: "w" F32 [n] then "b" BF16 [1000], header padded to 8 bytes.
std::string tiny_safetensors(int64_t n, uint32_t seed) {
  std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[)" + std::to_string(n) +
                       R"(],"data_offsets":[0,)" + std::to_string(4 * n) + R"(]},"b":{"dtype":"BF16","shape":[1000],"data_offsets":[)" +
                       std::to_string(4 * n) + "," + std::to_string(4 * n + 2000) + "]}}";
  while (header.size() % 8) header += ' ';
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[size_t(i)] = char((header.size() >> (8 * i)) & 0xff);
  return len + header + random_bytes(size_t(4 * n + 2000), seed);
}

// gpt-oss experts stored as MXFP4 blocks / scales (U8) hold two parameters a block byte and none in
// a scale byte: the same architecture with F32 experts (tests/data/archs/gpt_oss, made from the same
// config by tools/gen_tiny_models.py) counts each parameter as one element.
TEST(Estimate, Mxfp4BlocksCountTheirParameters) {
  const std::string archs = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/";
  const ModelMeta f32 = read_local_meta(local_model_for_path(archs + "gpt_oss/model.safetensors"));
  const ModelMeta mxfp4 = read_local_meta(local_model_for_path(archs + "gpt_oss_mxfp4/model.safetensors"));
  EXPECT_GT(f32.num_params, 0);
  EXPECT_EQ(mxfp4.num_params, f32.num_params);
  EXPECT_LT(mxfp4.weight_bytes, f32.weight_bytes);
}

TEST(Estimate, LocalSafetensorsFromHeaders) {
  TempDir tmp;
  write_file(tmp / "ns/St/config.json", R"({"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":256,
    "intermediate_size":512,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,
    "vocab_size":1000,"max_position_embeddings":4096})");
  write_file(tmp / "ns/St/model.safetensors", tiny_safetensors(300, 1));
  write_file(tmp / "ns/St/tokenizer.json", R"({"model":{"type":"BPE"}})");
  write_file(tmp / "ns/St/chat_template.jinja", "{{ x }}");
  ModelMeta m = read_local_meta(local_model_for_path(tmp / "ns/St"));
  EXPECT_EQ(m.weight_bytes, 1200 + 2000);
  EXPECT_EQ(m.num_params, 1300);
  EXPECT_EQ(m.config.num_hidden_layers, 2);
  EXPECT_EQ(m.tokenizer_kind, "tokenizer.json BPE");
  EXPECT_EQ(m.chat_template_source, "chat_template.jinja");
  write_file(tmp / "ns/St/model.safetensors", tiny_safetensors(300, 1).substr(0, 100));  // truncated
  expect_error([&] { read_local_meta(local_model_for_path(tmp / "ns/St")); }, ErrorCode::INVALID_ARGUMENT,
               {"model.safetensors"});
}

struct RemoteFixture : ::testing::Test {
  FakeHub hub;
  TempDir tmp;
  // Built once per process (a few hundred ms of generation).
  static const Built& built(int i) {
    static const Built b[4] = {qwen3_gguf(6000, 40000, 1), qwen3_gguf(40000, 40000, 2),  // q8: 11 MB, header ~0.7 MB
                               qwen3_gguf(2000, 40000, 3), qwen3_gguf(1000, 10, 4)};
    return b[i];
  }
  const Built &q4 = built(0), &q8 = built(1), &s1 = built(2), &s2 = built(3);
  std::string st_config = R"({"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":256,
    "intermediate_size":512,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,
    "vocab_size":1000,"max_position_embeddings":4096,"rms_norm_eps":1e-6,"rope_theta":1000000})";
  void SetUp() override {
    hub.add_repo({"Qwen/Est-GGUF", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c",
                  {{"Est-Q4_K_M.gguf", q4.bytes, true},
                   {"Est-Q8_0.gguf", q8.bytes, true},
                   {"Est-Q2_K-00001-of-00002.gguf", s1.bytes, true},
                   {"Est-Q2_K-00002-of-00002.gguf", s2.bytes, true},
                   {"config.json", st_config, false},
                   {"model.safetensors.index.json", R"({"metadata":{"total_size":123456},"weight_map":{"a":"model.safetensors"}})", false},
                   {"model.safetensors", tiny_safetensors(250, 5), true}},
                  ""});
    std::string st = tiny_safetensors(1250, 6);
    hub.add_repo({"meta/One-ST", "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c",
                  {{"config.json", st_config, false}, {"model.safetensors", st, true}}, ""});
  }
};

TEST_F(RemoteFixture, ReadsHeadersOnlyAndAgreesWithLocal) {
  HubClient client(hub.endpoint(), "");
  RepoInfo info = client.model_info("Qwen/Est-GGUF");
  auto vs = list_variants(info);
  const Variant& v = vs[size_t(find_variant(vs, "Q8_0"))];
  hub.reset_counters();
  ModelMeta remote = read_remote_meta(client, info, info.sha, v);
  EXPECT_EQ(remote.weight_bytes, q8.weight_bytes);
  EXPECT_GT(hub.ranges().size(), 1u);  // the 40k-token vocabulary needs more than the first read
  for (const auto& r : hub.ranges()) EXPECT_EQ(r.range.rfind("bytes=", 0), 0u) << "a non-Range request";
  EXPECT_LT(hub.body_bytes_served.load() * 8, int64_t(q8.bytes.size()))
      << hub.body_bytes_served.load() << " of " << q8.bytes.size() << " bytes served";

  write_file(tmp / "Est-GGUF/Est-Q8_0.gguf", q8.bytes);
  ModelMeta local = read_local_meta(local_model_for_path(tmp / "Est-GGUF/Est-Q8_0.gguf"));
  EXPECT_EQ(local.weight_bytes, remote.weight_bytes);
  EXPECT_EQ(local.num_params, remote.num_params);
  EXPECT_EQ(local.config.num_hidden_layers, remote.config.num_hidden_layers);
  EXPECT_EQ(remote.tokenizer_kind, "gpt2 (byte-level BPE)");
  EXPECT_TRUE(remote.has_chat_template);
  EstimateParams p;
  EXPECT_EQ(estimate_memory(local.config, local.weight_bytes, p).total(),
            estimate_memory(remote.config, remote.weight_bytes, p).total());

  // Split variant: every shard's header, tensors summed across shards.
  const Variant& split = vs[size_t(find_variant(vs, "Q2_K"))];
  EXPECT_EQ(read_remote_meta(client, info, info.sha, split).weight_bytes, s1.weight_bytes + s2.weight_bytes);
  // safetensors: the index's total_size.
  EXPECT_EQ(read_remote_meta(client, info, info.sha, vs[size_t(find_variant(vs, "safetensors"))]).weight_bytes, 123456);
}

TEST_F(RemoteFixture, ServerIgnoringRangeIsNotReadWhole) {
  HubClient client(hub.endpoint(), "");
  RepoInfo info = client.model_info("Qwen/Est-GGUF");
  auto vs = list_variants(info);
  hub.ignore_range = true;
  expect_error([&] { read_remote_meta(client, info, info.sha, vs[size_t(find_variant(vs, "Q8_0"))]); },
               ErrorCode::IO, {"ignores Range", "stopped reading"});
  EXPECT_LT(client.bytes_received(), int64_t(q8.bytes.size()) / 4);
}

TEST_F(RemoteFixture, SafetensorsWithoutIndexUsesHeaderLength) {
  HubClient client(hub.endpoint(), "");
  RepoInfo info = client.model_info("meta/One-ST");
  auto vs = list_variants(info);
  ModelMeta m = read_remote_meta(client, info, info.sha, vs[0]);
  EXPECT_EQ(m.weight_bytes, 5000 + 2000);  // "w" F32 [1250] + "b" BF16 [1000], from the header read by Range
  EXPECT_EQ(m.num_params, 2250);
  EXPECT_EQ(m.tensor_types["F32"], 1);
  EXPECT_EQ(m.tensor_types["BF16"], 1);
  EXPECT_EQ(m.config.family, "qwen3");
}

TEST_F(RemoteFixture, TableHasEveryVariantAndNoAccuracyColumn) {
  HubClient client(hub.endpoint(), "");
  RemoteEstimateOptions o;
  o.repo = "Qwen/Est-GGUF";
  o.params.context_len = 8192;
  o.params.num_sequences = 4;
  o.params.kv_format = KvFormat::F16;
  std::string t = remote_estimate(client, o);
  for (const char* s : {"safetensors", "Q2_K", "Q4_K_M", "Q8_0", "★ Q4_K_M", "8192 ctx × 4 seq, F16", "2 full layers",
                        "of headers and config (no weights)"})
    EXPECT_NE(t.find(s), std::string::npos) << "missing '" << s << "' in\n" << t;
  EXPECT_EQ(t.find("ccuracy"), std::string::npos);
  // KV: 2 layers × K+V × 2 heads × 64 × f16 × 8192 × 4 = 32 MiB, on every row.
  EXPECT_NE(t.find("32.0 MiB"), std::string::npos) << t;
  o.variant = "q8_0";
  t = remote_estimate(client, o);
  EXPECT_EQ(t.find("Q4_K_M"), std::string::npos);
  EXPECT_NE(t.find("Q8_0"), std::string::npos);
}

}  // namespace
}  // namespace oxyd::hub
