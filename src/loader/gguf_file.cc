// GgufFile: maps one GGUF file or every shard of a split set ("-00001-of-00003.gguf") and
// presents one merged tensor list. Shard metadata must agree on split.count / split.no;
// metadata comes from the first shard (as llama.cpp does).
#include <cstdio>
#include <regex>

#include "core/error.h"
#include "loader/gguf.h"

namespace oxyd::loader {

std::vector<int64_t> GgufTensorInfo::shape() const {
  if (n_dims == 0) return {1};
  std::vector<int64_t> s(n_dims);
  for (uint32_t i = 0; i < n_dims; ++i) s[i] = ne[n_dims - 1 - i];
  return s;
}

std::optional<GgufSplitName> parse_gguf_split_name(const std::string& path) {
  static const std::regex re(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)");
  std::smatch m;
  if (!std::regex_match(path, m, re)) return std::nullopt;
  GgufSplitName s{m[1].str(), static_cast<uint32_t>(std::stoul(m[2].str())),
                  static_cast<uint32_t>(std::stoul(m[3].str()))};
  if (s.count == 0 || s.no == 0 || s.no > s.count) return std::nullopt;
  return s;
}

std::string gguf_split_path(const std::string& prefix, uint32_t no, uint32_t count) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "-%05u-of-%05u.gguf", no, count);
  return prefix + buf;
}

void GgufFile::add_shard(GgufHeader h, std::span<const uint8_t> bytes, const std::string& path) {
  uint32_t idx = static_cast<uint32_t>(headers_.size());
  for (auto& t : h.tensors) {
    t.file_idx = idx;
    if (!tensor_index_.emplace(t.name, tensors_.size()).second)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  path + ": tensor '" + t.name + "' also appears in an earlier shard (" +
                      paths_.at(tensors_[tensor_index_.find(t.name)->second].file_idx) + ")");
    tensors_.push_back(t);
  }
  if (idx == 0) {  // the file's own metadata (kept once: moved out of the header)
    static_cast<GgufMetadata&>(*this) = std::move(h.metadata);
    h.metadata = GgufMetadata(path);
  }
  headers_.push_back(std::move(h));
  bytes_.push_back(bytes);
  paths_.push_back(path);
}

GgufFile GgufFile::from_buffer(std::span<const uint8_t> bytes, const std::string& name) {
  GgufFile f;
  f.add_shard(parse_gguf(bytes, name), bytes, name);
  return f;
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  std::optional<GgufSplitName> split = parse_gguf_split_name(path);
  uint32_t count = split ? split->count : 1;
  for (uint32_t i = 0; i < count; ++i) {
    std::string p = split ? gguf_split_path(split->prefix, i + 1, count) : path;
    MmapFile m = MmapFile::open(p);
    GgufHeader h = parse_gguf(m.bytes(), p);
    // split.count / split.no: absent in an unsplit file.
    const GgufMetadata& md = h.metadata;
    uint32_t sc = md.get<uint16_t>("split.count", 0);
    if (split) {
      if (sc != count)
        throw Error(ErrorCode::INVALID_ARGUMENT,
                    p + ": split.count is " + std::to_string(sc) + " but the file name says " +
                        std::to_string(count) + " shards");
      uint32_t no = md.get<uint16_t>("split.no");
      if (no != i)
        throw Error(ErrorCode::INVALID_ARGUMENT, p + ": split.no is " + std::to_string(no) +
                                                     ", expected " + std::to_string(i) +
                                                     " (0-based) for this file name");
    } else if (sc > 1) {
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  p + ": this is shard " + std::to_string(md.get<uint16_t>("split.no", 0) + 1) +
                      " of a " + std::to_string(sc) +
                      "-file split GGUF, but its name does not end in -0000N-of-0000M.gguf; "
                      "rename the shards to the llama.cpp gguf-split naming");
    }
    f.maps_.push_back(std::move(m));
    f.add_shard(std::move(h), f.maps_.back().bytes(), p);
  }
  if (split) {
    if (auto total = f.get_opt<int64_t>("split.tensors.count");
        total && *total != static_cast<int64_t>(f.tensors_.size()))
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  f.paths_[0] + ": split.tensors.count is " + std::to_string(*total) + " but the " +
                      std::to_string(count) + " shards hold " +
                      std::to_string(f.tensors_.size()) + " tensors");
  }
  return f;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& t) const {
  const GgufHeader& h = headers_.at(t.file_idx);
  // check_gguf_layout guaranteed data_offset + offset + nbytes <= file size.
  return bytes_.at(t.file_idx).subspan(h.data_offset + t.offset, t.nbytes);
}

Tensor GgufFile::view(const GgufTensorInfo& t) const {
  Tensor v;
  v.dtype = t.dtype;
  v.data = const_cast<uint8_t*>(tensor_data(t).data());
  std::vector<int64_t> s = t.shape();
  v.ndim = static_cast<int>(s.size());
  for (int i = 0; i < v.ndim; ++i) v.shape[i] = s[i];
  return v;
}

}  // namespace oxyd::loader
