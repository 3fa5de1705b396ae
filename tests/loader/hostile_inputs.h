// Hostile model files for the regression tests of issue 28, generated at test time (nothing big
// is committed): deeply nested JSON documents (tokenizer.json Sequences, config.json, safetensors
// shapes) and tiny GGUF / safetensors models with one inconsistent count each. Each generator
// takes the defect as a parameter, so the same builder with the defect off is the control.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "loader/gguf_writer.h"

namespace oxyd::loader::test::hostile {

inline void write_text(const std::filesystem::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f.write(s.data(), static_cast<std::streamsize>(s.size()));
}

/// `depth` nested arrays around a 0: "[[[0]]]".
inline std::string nested_array(int64_t depth) {
  return std::string(size_t(depth), '[') + "0" + std::string(size_t(depth), ']');
}

/// A tokenizer.json whose `component` ("normalizer", "pre_tokenizer" or "decoder") is a Sequence
/// nested `depth` deep around one leaf; a one-token BPE model.
inline std::string nested_sequence_tokenizer(const std::string& component, int64_t depth) {
  std::string list, leaf;
  if (component == "normalizer") list = "normalizers", leaf = R"({"type":"Lowercase"})";
  else if (component == "pre_tokenizer") list = "pretokenizers", leaf = R"({"type":"Whitespace"})";
  else list = "decoders", leaf = R"({"type":"Fuse"})";
  std::string open = R"({"type":"Sequence",")" + list + R"(":[)";
  std::string s = R"({"version":"1.0",")" + component + "\":";
  s.reserve(s.size() + size_t(depth) * (open.size() + 2) + 200);
  for (int64_t i = 0; i < depth; ++i) s += open;
  s += leaf;
  for (int64_t i = 0; i < depth; ++i) s += "]}";
  s += R"(,"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]}})";
  return s;
}

/// A small valid Llama config.json with an extra key holding `nest_depth` nested arrays (0: none).
inline std::string llama_config(int64_t nest_depth = 0, const std::string& extra = "") {
  std::string s = R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","vocab_size":4,)"
                  R"("hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,)"
                  R"("num_key_value_heads":1,"max_position_embeddings":64,"rms_norm_eps":1e-5)";
  if (nest_depth > 0) s += ",\"x\":" + nested_array(nest_depth);
  if (!extra.empty()) s += "," + extra;
  return s + "}";
}

/// A safetensors file from a header JSON and a data section of `data_bytes` zero bytes.
inline std::string safetensors_bytes(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(data_bytes, '\0');
}

/// The F32 tensors of a one-layer Llama (hidden 8, kv 1 head of 4, ffn 16, vocab 4) as a
/// safetensors header + data; `embed_dtype` replaces the embedding's dtype (same byte size).
inline std::string llama_safetensors(const std::string& embed_dtype = "F32") {
  struct T { const char* name; std::vector<int64_t> shape; };
  const std::vector<T> ts = {{"model.embed_tokens.weight", {4, 8}},
                             {"model.norm.weight", {8}},
                             {"model.layers.0.input_layernorm.weight", {8}},
                             {"model.layers.0.post_attention_layernorm.weight", {8}},
                             {"model.layers.0.self_attn.q_proj.weight", {8, 8}},
                             {"model.layers.0.self_attn.k_proj.weight", {4, 8}},
                             {"model.layers.0.self_attn.v_proj.weight", {4, 8}},
                             {"model.layers.0.self_attn.o_proj.weight", {8, 8}},
                             {"model.layers.0.mlp.gate_proj.weight", {16, 8}},
                             {"model.layers.0.mlp.up_proj.weight", {16, 8}},
                             {"model.layers.0.mlp.down_proj.weight", {8, 16}},
                             {"lm_head.weight", {4, 8}}};
  std::string h = "{";
  size_t off = 0;
  for (const T& t : ts) {
    size_t n = 4;
    std::string shape;
    for (int64_t d : t.shape) n *= size_t(d), shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const std::string dt = std::string(t.name) == "model.embed_tokens.weight" ? embed_dtype : "F32";
    h += (h.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + dt + "\",\"shape\":[" + shape +
         "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + n) + "]}";
    off += n;
  }
  return safetensors_bytes(h + "}", off);
}

/// A tiny GGUF Llama header (hidden 8, 2 heads, 1 kv head, context 64, 4 tokens) with
/// token_embd [num_embd_rows, 8] and output_norm; `edit` changes it before writing.
inline void write_llama_gguf(const std::string& path, const std::function<void(GgufWriter&)>& edit = {},
                             int64_t num_embd_rows = 4, std::vector<int64_t> extra_tensor_shape = {}) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_scalar<uint32_t>("llama.block_count", 1);
  w.add_scalar<uint32_t>("llama.context_length", 64);
  w.add_scalar<uint32_t>("llama.embedding_length", 8);
  w.add_scalar<uint32_t>("llama.feed_forward_length", 16);
  w.add_scalar<uint32_t>("llama.attention.head_count", 2);
  w.add_scalar<uint32_t>("llama.attention.head_count_kv", 1);
  w.add_scalar<float>("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_string("tokenizer.ggml.model", "llama");
  w.add("tokenizer.ggml.tokens", GgufValue::string_array({"<unk>", "<s>", "</s>", "a"}));
  if (edit) edit(w);
  std::vector<uint8_t> embd(size_t(num_embd_rows) * 8 * 4), norm(8 * 4);
  w.add_tensor("token_embd.weight", DType::F32, {num_embd_rows, 8}, embd);
  w.add_tensor("output_norm.weight", DType::F32, {8}, norm);
  if (!extra_tensor_shape.empty()) {
    int64_t n = 1;
    for (int64_t d : extra_tensor_shape) n *= d;
    std::vector<uint8_t> data(size_t(n) * 4);
    w.add_tensor("blk.0.attn_norm.weight", DType::F32, extra_tensor_shape, data);
  }
  w.write(path);
}

}  // namespace oxyd::loader::test::hostile
