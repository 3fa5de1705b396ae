// safetensors header validation and sharded opening; see safetensors.h.
#include "loader/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_parse.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(ErrorCode::INVALID_ARGUMENT, name + ": " + what);
}

// Parses JSON text with the project's depth limit; duplicate keys directly under the root are
// errors (nlohmann would keep the last silently).
json parse_json_strict(std::string_view text, const std::string& name, const char* what) {
  std::set<std::string> seen;
  std::string dup;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::key && depth == 1 && dup.empty())
      if (!seen.insert(parsed.get<std::string>()).second) dup = parsed.get<std::string>();
    return true;
  };
  json j = parse_json_bounded(text, name + " (" + what + ")", cb);
  if (!dup.empty()) fail(name, std::string(what) + " has the key '" + dup + "' twice");
  return j;
}

// A shape for an error message: at most 8 entries, each a number or its JSON type.
std::string shape_str(const json& sh) {
  std::string s = "[";
  size_t i = 0;
  for (const auto& d : sh) {
    if (i) s += ", ";
    if (i++ == 8) return s + "...]";
    s += d.is_number() ? d.dump() : std::string("<") + d.type_name() + ">";
  }
  return s + "]";
}

}  // namespace

int64_t SafetensorsTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<DType> safetensors_dtype(std::string_view s) {
  static const std::pair<std::string_view, DType> kMap[] = {
      {"F64", DType::F64}, {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
      {"I64", DType::I64}, {"I32", DType::I32}, {"I16", DType::I16}, {"I8", DType::I8},
      {"U8", DType::U8}, {"BOOL", DType::BOOL}, {"F8_E4M3", DType::F8_E4M3},
      {"F8_E5M2", DType::F8_E5M2}};
  for (const auto& [n, d] : kMap)
    if (n == s) return d;
  return std::nullopt;
}

std::optional<uint64_t> safetensors_header_size(std::span<const uint8_t> prefix,
                                                const std::string& name, uint64_t file_size) {
  if (prefix.size() < 8) {
    if (file_size && file_size < 8)
      fail(name, "file of " + std::to_string(file_size) + " bytes is too small for safetensors (8-byte header length)");
    return std::nullopt;
  }
  uint64_t n;
  std::memcpy(&n, prefix.data(), 8);
  if (n < 2 || n > kSafetensorsMaxHeaderBytes)
    fail(name, "header length " + std::to_string(n) + " is outside [2, " +
                   std::to_string(kSafetensorsMaxHeaderBytes) + "] (not a safetensors file?)");
  if (file_size && n > file_size - 8)
    fail(name, "header length " + std::to_string(n) + " exceeds the " +
                   std::to_string(file_size - 8) + " bytes after the length field (truncated file?)");
  return 8 + n;
}

SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> bytes, const std::string& name,
                                           uint64_t file_size) {
  std::optional<uint64_t> hs = safetensors_header_size(bytes, name, file_size);
  if (!hs) fail(name, "truncated before the 8-byte header length");
  if (file_size < *hs)
    fail(name, "file size " + std::to_string(file_size) + " is smaller than its " +
                   std::to_string(*hs) + "-byte header");
  if (bytes.size() < *hs)
    fail(name, "have " + std::to_string(bytes.size()) + " bytes, the header needs " + std::to_string(*hs));
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), *hs - 8);
  if (text.empty() || text[0] != '{') fail(name, "header does not start with '{'");
  json j = parse_json_strict(text, name, "header");
  if (!j.is_object()) fail(name, "header is not a JSON object");

  SafetensorsHeader h;
  h.data_offset = *hs;
  h.data_bytes = file_size - *hs;
  for (auto& [key, v] : j.items()) {
    if (key == "__metadata__") {
      if (!v.is_object()) fail(name, "__metadata__ is not an object");
      for (auto& [mk, mv] : v.items()) {
        if (!mv.is_string()) fail(name, "__metadata__ value '" + mk + "' is not a string");
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + key + "'";
    if (!v.is_object()) fail(name, what + ": entry is not an object");
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) fail(name, what + ": missing string 'dtype'");
    auto dtype = safetensors_dtype(dt->get<std::string>());
    if (!dtype)
      fail(name, what + ": unknown or unsupported dtype '" + dt->get<std::string>() +
                     "' (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL F8_E4M3 F8_E5M2)");
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array()) fail(name, what + ": missing array 'shape'");
    SafetensorsTensorInfo t;
    t.name = key;
    t.dtype = *dtype;
    int64_t numel = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
        fail(name, what + ": shape " + shape_str(*sh) + " must hold non-negative integers");
      uint64_t u = d.get<uint64_t>();
      if (u > uint64_t(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, static_cast<int64_t>(u), &numel))
        fail(name, what + ": shape " + shape_str(*sh) + " overflows 64 bits");
      t.shape.push_back(static_cast<int64_t>(u));
    }
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      fail(name, what + ": 'data_offsets' must be [begin, end] with non-negative integers");
    t.begin = (*off)[0].get<uint64_t>();
    t.end = (*off)[1].get<uint64_t>();
    if (t.begin > t.end)
      fail(name, what + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] are reversed");
    int64_t expect = 0;
    if (__builtin_mul_overflow(numel, dtype_block_bytes(t.dtype), &expect))
      fail(name, what + ": byte size overflows 64 bits");
    if (t.end - t.begin != static_cast<uint64_t>(expect))
      fail(name, what + ": data_offsets span " + std::to_string(t.end - t.begin) + " bytes but " +
                     std::string(dtype_name(t.dtype)) + " " + shape_str(*sh) + " needs " + std::to_string(expect));
    if (t.end > h.data_bytes)
      fail(name, what + ": data [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     ") extends past the " + std::to_string(h.data_bytes) +
                     "-byte data buffer (truncated file?)");
    h.tensors.push_back(std::move(t));
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(),
                   [](const auto& a, const auto& b) { return a.begin < b.begin; });
  const SafetensorsTensorInfo* prev = nullptr;
  for (const auto& t : h.tensors) {
    if (t.nbytes() == 0) continue;
    if (prev && prev->end > t.begin)
      fail(name, "tensors '" + prev->name + "' and '" + t.name + "' overlap in the data buffer ([" +
                     std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ") and [" +
                     std::to_string(t.begin) + ", " + std::to_string(t.end) + "))");
    if (!prev || t.end > prev->end) prev = &t;
  }
  return h;
}

SafetensorsHeader parse_safetensors(std::span<const uint8_t> file, const std::string& name) {
  return parse_safetensors_header(file, name, file.size());
}

void SafetensorsFile::add_file(SafetensorsHeader h, std::span<const uint8_t> bytes,
                               const std::string& path) {
  uint32_t idx = static_cast<uint32_t>(paths_.size());
  if (idx == 0) metadata_ = h.metadata;
  for (auto& t : h.tensors) {
    t.file_idx = idx;
    auto [it, inserted] = index_.emplace(t.name, tensors_.size());
    if (!inserted)
      fail(path, "tensor '" + t.name + "' also appears in " + paths_.at(tensors_[it->second].file_idx));
    tensors_.push_back(std::move(t));
  }
  bytes_.push_back(bytes);
  data_offsets_.push_back(h.data_offset);
  paths_.push_back(path);
}

SafetensorsFile SafetensorsFile::from_buffer(std::span<const uint8_t> bytes, const std::string& name) {
  SafetensorsFile f;
  f.add_file(parse_safetensors(bytes, name), bytes, name);
  return f;
}

SafetensorsFile SafetensorsFile::open(const std::string& path_in) {
  namespace fs = std::filesystem;
  std::string path = path_in;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "model.safetensors.index.json"))
      path = (fs::path(path) / "model.safetensors.index.json").string();
    else if (fs::exists(fs::path(path) / "model.safetensors"))
      path = (fs::path(path) / "model.safetensors").string();
    else
      throw Error(ErrorCode::NOT_FOUND, path + ": no model.safetensors.index.json or model.safetensors in this directory");
  }
  SafetensorsFile f;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::IO, "cannot open '" + path + "'");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    json j = parse_json_strict(text, path, "index");
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      fail(path, "index has no 'weight_map' object");
    std::vector<std::string> files;
    std::map<std::string, std::string> want;
    for (auto& [tname, file] : j["weight_map"].items()) {
      if (!file.is_string()) fail(path, "weight_map['" + tname + "'] is not a file name");
      std::string fname = file.get<std::string>();
      if (fname.empty() || fname.find('/') != std::string::npos || fname == "..")
        fail(path, "weight_map['" + tname + "'] = '" + fname + "' is not a plain file name");
      if (std::find(files.begin(), files.end(), fname) == files.end()) files.push_back(fname);
      want[tname] = fname;
    }
    if (files.empty()) fail(path, "weight_map is empty");
    std::sort(files.begin(), files.end());  // model-00001-of-…, model-00002-of-… in order
    fs::path dir = fs::path(path).parent_path();
    for (const auto& fname : files) {
      std::string p = (dir / fname).string();
      MmapFile m = MmapFile::open(p);
      SafetensorsHeader h = parse_safetensors(m.bytes(), p);
      f.maps_.push_back(std::move(m));
      f.add_file(std::move(h), f.maps_.back().bytes(), p);
    }
    for (const auto& [tname, fname] : want) {
      const SafetensorsTensorInfo* t = f.find_tensor(tname);
      if (!t || fs::path(f.paths_[t->file_idx]).filename() != fname)
        fail(path, "weight_map says tensor '" + tname + "' is in " + fname + ", but it is not there");
    }
    return f;
  }
  MmapFile m = MmapFile::open(path);
  SafetensorsHeader h = parse_safetensors(m.bytes(), path);
  f.maps_.push_back(std::move(m));
  f.add_file(std::move(h), f.maps_.back().bytes(), path);
  return f;
}

const SafetensorsTensorInfo* SafetensorsFile::find_tensor(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> SafetensorsFile::tensor_data(const SafetensorsTensorInfo& t) const {
  return bytes_.at(t.file_idx).subspan(data_offsets_.at(t.file_idx) + t.begin, t.nbytes());
}

Tensor SafetensorsFile::view(const SafetensorsTensorInfo& t) const {
  if (t.shape.size() > static_cast<size_t>(kMaxDims))
    throw Error(ErrorCode::UNSUPPORTED, paths_.at(t.file_idx) + ": tensor '" + t.name + "' has " +
                                            std::to_string(t.shape.size()) +
                                            " dims; Tensor views hold at most 4 (use tensor_data)");
  Tensor v;
  v.dtype = t.dtype;
  v.data = const_cast<uint8_t*>(tensor_data(t).data());
  if (t.shape.empty()) {
    v.ndim = 1;
    v.shape[0] = 1;
  } else {
    v.ndim = static_cast<int>(t.shape.size());
    for (int i = 0; i < v.ndim; ++i) v.shape[i] = t.shape[i];
  }
  return v;
}

}  // namespace oxyd::loader
