// The quantization a GGUF model holds, named from its tensors: `list`, `show` and `estimate` print
// it, never the file name (a copy renamed `renamed.gguf` still shows Q4_K_M). general.file_type
// (llama.cpp's llama_ftype) is a hint: its name (Q4_K_M, not just Q4_K) is used when the tensors
// agree with it, i.e. its main weight type holds at least one matrix; otherwise, or without it,
// the name is the type holding the most matrix elements (2-D and larger tensors).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "loader/gguf.h"

namespace oxyd::hub {

/// llama_ftype → its llama.cpp name ("Q4_K_M") and the weight type its matrices mostly hold (Q4_K);
/// nullopt for a value llama.cpp does not define (or has removed).
struct FileTypeName {
  std::string name;
  DType main_type;
};
std::optional<FileTypeName> gguf_file_type_name(uint32_t file_type);

/// The quantization name of a model from its GGUF metadata (first shard) and every tensor.
std::string gguf_quantization(const loader::GgufMetadata& md, const std::vector<loader::GgufTensorInfo>& tensors);

}  // namespace oxyd::hub
