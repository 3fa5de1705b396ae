#include "hub/model_meta.h"
#include "hub/quant_name.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/json_parse.h"
#include "loader/quant_checkpoint.h"
#include "loader/model_validate.h"
#include "model/model_config.h"
#include "model/weights.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

std::string gguf_tokenizer_kind(const std::string& model) {
  if (model == "gpt2") return "gpt2 (byte-level BPE)";
  if (model == "llama") return "llama (SentencePiece)";  // not a model family: tokenizer.ggml.model
  if (model == "bert") return "bert (WordPiece)";  // not a model family: tokenizer.ggml.model
  if (model == "t5") return "t5 (Unigram)";
  return model.empty() ? "none" : model;
}

// The header of a safetensors file: 8 bytes of length, then that many bytes of JSON. `read`
// returns bytes [first, first+count) of the file.
template <typename Read>
loader::SafetensorsHeader read_safetensors_header(const std::string& name, uint64_t file_size, Read&& read) {
  std::string prefix = read(0, 8);
  auto span = [](const std::string& s) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  auto n = loader::safetensors_header_size(span(prefix), name, file_size);
  if (!n) throw_error(ErrorCode::INVALID_ARGUMENT, name + ": shorter than a safetensors header");
  std::string head = prefix + read(8, int64_t(*n) - 8);
  return loader::parse_safetensors_header(span(head), name, file_size);
}

void hf_tokenizer_and_template(const fs::path& dir, ModelMeta& m) {
  if (fs::exists(dir / "tokenizer.json")) {
    try {
      auto j = read_json_file((dir / "tokenizer.json").string());
      m.tokenizer_kind = "tokenizer.json " + j.at("model").value("type", std::string("?"));
    } catch (const std::exception&) {
      m.tokenizer_kind = "tokenizer.json (unreadable)";
    }
  } else if (fs::exists(dir / "tokenizer.model")) {
    m.tokenizer_kind = "SentencePiece (tokenizer.model)";
  } else {
    m.tokenizer_kind = "none";
  }
  for (const char* f : {"chat_template.jinja", "chat_template.json"})
    if (fs::exists(dir / f)) {
      m.has_chat_template = true;
      m.chat_template_source = f;
      return;
    }
  if (fs::exists(dir / "tokenizer_config.json")) {
    try {
      auto j = read_json_file((dir / "tokenizer_config.json").string());
      if (j.contains("chat_template") && !j["chat_template"].is_null()) {
        m.has_chat_template = true;
        m.chat_template_source = "tokenizer_config.json";
      }
    } catch (const std::exception&) {
    }
  }
}

}  // namespace

// A routed expert's tensor, by the naming both formats use for them (GGUF ffn_*_exps, HF
// mlp.experts.*); a shared expert is read for every token and does not count.
bool is_expert_tensor(const std::string& name) {
  return name.find("_exps.") != std::string::npos || name.find(".experts.") != std::string::npos;
}

namespace {
// A tensor of a multimodal wrapper's vision / audio tower or projector (transformers' component
// names), which the text engine never loads.
bool is_tower_tensor(const std::string& name) {
  for (const char* part : {"vision_tower.", "visual.", "multi_modal_projector.", "audio_tower.", "embed_vision.",
                           "embed_audio."})
    if (name.starts_with(part) || name.find(std::string(".") + part) != std::string::npos) return true;
  return false;
}
}  // namespace

// Parameters a tensor holds: its elements, except for MXFP4 experts stored as gpt-oss checkpoints
// are (U8 `<name>_blocks`, two 4-bit values a byte, and `<name>_scales`, one shared exponent per
// 32 values, which is no parameter of its own) and the int4 / FP8 checkpoints below.
int64_t tensor_params(const loader::SafetensorsTensorInfo& t) {
  if (t.dtype == DType::U8 && t.name.ends_with("_blocks")) return 2 * t.numel();
  if (t.dtype == DType::U8 && t.name.ends_with("_scales")) return 0;
  // AWQ / GPTQ int4 (loader/quant_checkpoint.h): 8 weights an int32; zeros, scales, g_idx and FP8
  // block scales are no parameters of their own.
  if (t.dtype == DType::I32 && t.name.ends_with(".qweight")) return 8 * t.numel();
  for (const char* aux : {".qzeros", ".scales", ".g_idx", ".weight_scale_inv"})
    if (t.name.ends_with(aux)) return 0;
  return t.numel();
}

void add_safetensors_header(const loader::SafetensorsHeader& h, ModelMeta& m) {
  for (const auto& t : h.tensors) {
    if (!m.config.unsupported_inputs.empty() && is_tower_tensor(t.name)) {
      m.tower_bytes += int64_t(t.nbytes());
      m.num_params += tensor_params(t);
      m.num_tensors += 1;
      continue;
    }
    m.weight_bytes += int64_t(t.nbytes());
    if (is_expert_tensor(t.name)) m.expert_weight_bytes += int64_t(t.nbytes());
    // Vectors are held as F32 copies (model/weights.cc vector_f32), stacked [E, n] expert biases too,
    // and so are the matrices the loader binds as vectors (a DeltaNet's conv1d, a shared expert's gate).
    const bool vector = t.shape.size() == 1 || (t.shape.size() == 2 && t.name.ends_with("_bias")) ||
                        model::held_as_f32_copy(m.config, t.name);
    if (vector && (t.dtype == DType::F16 || t.dtype == DType::BF16))
      m.vector_f32_extra_bytes += 4 * t.numel() - int64_t(t.nbytes());
    m.num_params += tensor_params(t);
    m.num_tensors += 1;
    m.tensor_types[std::string(dtype_name(t.dtype))] += 1;
  }
}

// FP8 / AWQ / GPTQ linears are held repacked (loader/quant_checkpoint.h): their bytes and format.
static void add_repacked(const std::vector<loader::TensorDesc>& tensors, ModelMeta& m) {
  m.weight_bytes += loader::repack_delta_bytes(m.config, tensors);
  for (const loader::QuantizedLinear& q : loader::quantized_linears(m.config, tensors)) {
    const std::string to = std::string(dtype_name(q.repacked));
    m.tensor_types[to] += 1;
    if (m.quantization.find(to) == std::string::npos)
      m.quantization += (m.quantization.empty() ? m.config.quantization_config->quant_method + ", repacked at load to "
                                                : std::string(" / ")) + to;
  }
}

void meta_from_gguf(const loader::GgufMetadata& md, const std::vector<const loader::GgufHeader*>& headers,
                    ModelMeta& m) {
  std::vector<loader::GgufTensorInfo> all;
  for (const auto* h : headers)
    for (const auto& t : h->tensors) {
      m.weight_bytes += int64_t(t.nbytes);
      if (is_expert_tensor(t.name)) m.expert_weight_bytes += int64_t(t.nbytes);
      m.num_params += t.numel();
      m.num_tensors += 1;
      m.tensor_types[std::string(dtype_name(t.dtype))] += 1;
      all.push_back(t);
    }
  m.config = model::model_config_from_gguf(md, &all);
  m.quantization = gguf_quantization(md, all);
  loader::validate_model_tensors(m.config, loader::tensor_descs(all), loader::gguf_token_count(md), md.source());
  m.gguf_tensors.insert(m.gguf_tensors.end(), all.begin(), all.end());
  m.tokenizer_kind = gguf_tokenizer_kind(md.get_string("tokenizer.ggml.model", ""));
  if (md.has("tokenizer.chat_template")) {
    m.has_chat_template = true;
    m.chat_template_source = "tokenizer.chat_template";
  }
}

ModelMeta read_local_meta(const LocalModel& lm) {
  ModelMeta m;
  if (lm.format == ModelFormat::GGUF) {
    loader::GgufFile g = loader::GgufFile::open(lm.weight_files.front());
    std::vector<const loader::GgufHeader*> hs;
    for (size_t i = 0; i < g.num_files(); ++i) hs.push_back(&g.header(i));
    // GgufFile holds the first shard's metadata; tensors come from every shard.
    meta_from_gguf(g, hs, m);
    return m;
  }
  m.config = model::load_hf_config((fs::path(lm.dir) / "config.json").string());
  std::vector<loader::TensorDesc> tensors;
  for (const auto& f : lm.weight_files) {
    std::ifstream in(f, std::ios::binary);
    auto read = [&](int64_t first, int64_t count) {
      std::string b(size_t(count), '\0');
      in.seekg(first);
      if (!in.read(b.data(), count)) throw_error(ErrorCode::INVALID_ARGUMENT, f + ": truncated safetensors header");
      return b;
    };
    const loader::SafetensorsHeader h = read_safetensors_header(f, fs::file_size(f), read);
    add_safetensors_header(h, m);
    for (auto& d : loader::tensor_descs(h.tensors)) tensors.push_back(std::move(d));
  }
  loader::validate_model_tensors(m.config, tensors, -1, lm.dir);
  add_repacked(tensors, m);
  hf_tokenizer_and_template(lm.dir, m);
  return m;
}

loader::GgufHeader fetch_remote_gguf_header(HubClient& hub, const std::string& repo, const std::string& rev,
                                            const RepoFile& file) {
  const uint64_t size = file.size > 0 ? uint64_t(file.size) : 0;
  std::string buf;
  uint64_t want = 256 * 1024;
  for (int round = 0; round < 40; ++round) {
    if (size) want = std::min(want, size);
    if (want > buf.size()) buf += hub.read_range(repo, rev, file.path, int64_t(buf.size()), int64_t(want - buf.size()));
    auto parse = loader::parse_gguf_header(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf.data()), buf.size()), repo + "/" + file.path, size);
    if (parse.complete()) return std::move(*parse.header);
    if (size && buf.size() >= size)
      throw_error(ErrorCode::INVALID_ARGUMENT, repo + "/" + file.path + ": the whole file does not hold a GGUF header");
    if (parse.bytes_needed <= buf.size() && (want <= buf.size()))
      throw_error(ErrorCode::INTERNAL, repo + "/" + file.path + ": header parser made no progress");
    want = std::max<uint64_t>(parse.bytes_needed, 2 * buf.size());
  }
  throw_error(ErrorCode::INVALID_ARGUMENT, repo + "/" + file.path + ": GGUF header did not end within 40 reads");
}

ModelMeta read_remote_meta(HubClient& hub, const RepoInfo& info, const std::string& rev, const Variant& v) {
  ModelMeta m;
  const std::string repo = info.id;
  if (v.is_gguf) {
    std::vector<loader::GgufHeader> headers;
    for (const auto& f : v.files) headers.push_back(fetch_remote_gguf_header(hub, repo, rev, f));
    std::vector<const loader::GgufHeader*> hs;
    for (const auto& h : headers) hs.push_back(&h);
    meta_from_gguf(headers.front().metadata, hs, m);
    return m;
  }
  if (!info.find("config.json")) throw_error(ErrorCode::NOT_FOUND, repo + " has safetensors but no config.json");
  const std::string cfg = hub.read_small_file(repo, rev, "config.json");
  m.config = model::parse_hf_config(parse_json_bounded(cfg, repo + "/config.json"), repo + "/config.json");
  if (const RepoFile* idx = v.find_file("model.safetensors.index.json")) {
    nlohmann::json j;
    try {
      j = parse_json_bounded(hub.read_small_file(repo, rev, idx->path), repo + "/" + idx->path);
    } catch (const Error&) {  // no total_size then: sum the shard headers below
    }
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object() &&
        j["metadata"].contains("total_size") && j["metadata"]["total_size"].is_number()) {
      m.weight_bytes = j["metadata"]["total_size"].get<int64_t>();
      return m;
    }
  }
  // (A sharded checkpoint sized from its index's total_size above counts FP8 / AWQ / GPTQ linears
  // at their file bytes: the repacked size needs the tensor headers.)
  std::vector<loader::TensorDesc> tensors;
  for (const auto& f : v.files) {
    if (f.path.size() < 12 || f.path.compare(f.path.size() - 12, 12, ".safetensors") != 0) continue;
    auto read = [&](int64_t first, int64_t count) { return hub.read_range(repo, rev, f.path, first, count); };
    const loader::SafetensorsHeader h =
        read_safetensors_header(repo + "/" + f.path, uint64_t(std::max<int64_t>(0, f.size)), read);
    add_safetensors_header(h, m);
    for (auto& d : loader::tensor_descs(h.tensors)) tensors.push_back(std::move(d));
  }
  add_repacked(tensors, m);
  return m;
}

}  // namespace oxyd::hub
