#include "hub/model_meta.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

std::string gguf_tokenizer_kind(const std::string& model) {
  if (model == "gpt2") return "gpt2 (byte-level BPE)";
  if (model == "llama") return "llama (SentencePiece)";
  if (model == "bert") return "bert (WordPiece)";
  if (model == "t5") return "t5 (Unigram)";
  return model.empty() ? "none" : model;
}

uint64_t read_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Local safetensors file: 8-byte little-endian header length, then the JSON header.
SafetensorsSummary read_safetensors_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char len_bytes[8];
  if (!in.read(len_bytes, 8)) throw_error(ErrorCode::INVALID_ARGUMENT, path + ": shorter than a safetensors header");
  const uint64_t n = read_le64(len_bytes);
  const uint64_t size = fs::file_size(path);
  if (n > size - 8 || n > (uint64_t(100) << 20))
    throw_error(ErrorCode::INVALID_ARGUMENT, path + ": safetensors header length " + std::to_string(n) +
                                                 " does not fit in the file (" + std::to_string(size) + " bytes)");
  std::string json(n, '\0');
  in.read(json.data(), std::streamsize(n));
  SafetensorsSummary s = summarize_safetensors_header(json, path);
  if (uint64_t(s.data_bytes) > size - 8 - n)
    throw_error(ErrorCode::INVALID_ARGUMENT, path + ": tensors need " + std::to_string(s.data_bytes) +
                                                 " data bytes, the file has " + std::to_string(size - 8 - n));
  return s;
}

void add_summary(const SafetensorsSummary& s, ModelMeta& m) {
  m.weight_bytes += s.data_bytes;
  m.num_params += s.numel;
  m.num_tensors += s.num_tensors;
  for (const auto& [k, v] : s.dtypes) m.tensor_types[k] += v;
}

void hf_tokenizer_and_template(const fs::path& dir, ModelMeta& m) {
  if (fs::exists(dir / "tokenizer.json")) {
    try {
      std::ifstream in(dir / "tokenizer.json");
      auto j = nlohmann::json::parse(in);
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
      std::ifstream in(dir / "tokenizer_config.json");
      auto j = nlohmann::json::parse(in);
      if (j.contains("chat_template") && !j["chat_template"].is_null()) {
        m.has_chat_template = true;
        m.chat_template_source = "tokenizer_config.json";
      }
    } catch (const std::exception&) {
    }
  }
}

}  // namespace

SafetensorsSummary summarize_safetensors_header(std::string_view json, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, name + ": safetensors header is not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw_error(ErrorCode::INVALID_ARGUMENT, name + ": safetensors header is not an object");
  SafetensorsSummary s;
  for (const auto& [tname, t] : j.items()) {
    if (tname == "__metadata__") continue;
    auto bad = [&](const std::string& what) {
      throw_error(ErrorCode::INVALID_ARGUMENT, name + ": tensor '" + tname + "': " + what);
    };
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string()) bad("no dtype");
    if (!t.contains("shape") || !t["shape"].is_array()) bad("no shape");
    if (!t.contains("data_offsets") || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2) bad("no data_offsets");
    int64_t numel = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad("bad shape");
      numel *= d.get<int64_t>();
    }
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned() || off[1].get<uint64_t>() < off[0].get<uint64_t>())
      bad("bad data_offsets");
    s.data_bytes += int64_t(off[1].get<uint64_t>() - off[0].get<uint64_t>());
    s.numel += numel;
    s.num_tensors += 1;
    s.dtypes[t["dtype"].get<std::string>()] += 1;
  }
  return s;
}

void meta_from_gguf(const loader::GgufMetadata& md, const std::vector<const loader::GgufHeader*>& headers,
                    ModelMeta& m) {
  std::vector<loader::GgufTensorInfo> all;
  for (const auto* h : headers)
    for (const auto& t : h->tensors) {
      m.weight_bytes += int64_t(t.nbytes);
      m.num_params += t.numel();
      m.num_tensors += 1;
      m.tensor_types[std::string(dtype_name(t.dtype))] += 1;
      all.push_back(t);
    }
  m.config = loader::model_config_from_gguf(md, &all);
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
  m.config = loader::load_hf_config((fs::path(lm.dir) / "config.json").string());
  for (const auto& f : lm.weight_files) add_summary(read_safetensors_file(f), m);
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
  try {
    m.config = loader::parse_hf_config(nlohmann::json::parse(cfg), repo + "/config.json");
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, repo + "/config.json: not JSON (" + e.what() + ")");
  }
  if (const RepoFile* idx = v.find_file("model.safetensors.index.json")) {
    auto j = nlohmann::json::parse(hub.read_small_file(repo, rev, idx->path), nullptr, false);
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object() &&
        j["metadata"].contains("total_size") && j["metadata"]["total_size"].is_number()) {
      m.weight_bytes = j["metadata"]["total_size"].get<int64_t>();
      return m;
    }
  }
  for (const auto& f : v.files) {
    if (f.path.size() < 12 || f.path.compare(f.path.size() - 12, 12, ".safetensors") != 0) continue;
    std::string head = hub.read_range(repo, rev, f.path, 0, 8);
    if (head.size() != 8) throw_error(ErrorCode::INVALID_ARGUMENT, repo + "/" + f.path + ": too short for safetensors");
    const int64_t n = int64_t(read_le64(head.data()));
    if (n < 0 || (f.size >= 0 && n > f.size - 8))
      throw_error(ErrorCode::INVALID_ARGUMENT, repo + "/" + f.path + ": bad safetensors header length");
    m.weight_bytes += f.size - 8 - n;
  }
  return m;
}

}  // namespace oxyd::hub
