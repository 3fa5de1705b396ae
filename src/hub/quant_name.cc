// gguf_quantization (see quant_name.h). The llama_ftype table follows llama.cpp's llama.h (values
// 4-6 and 33-35 were removed there and are unknown here); tests/hub checks it against gguf-py's
// LlamaFileType (tools/gen_ftype_names.py).
#include "hub/quant_name.h"

#include <map>

#include "core/error.h"

namespace oxyd::hub {

std::optional<FileTypeName> gguf_file_type_name(uint32_t t) {
  struct Row {
    uint32_t id;
    const char* name;
    DType main;
  };
  static const Row kRows[] = {
      {0, "F32", DType::F32},        {1, "F16", DType::F16},         {2, "Q4_0", DType::Q4_0},
      {3, "Q4_1", DType::Q4_1},      {7, "Q8_0", DType::Q8_0},       {8, "Q5_0", DType::Q5_0},
      {9, "Q5_1", DType::Q5_1},      {10, "Q2_K", DType::Q2_K},      {11, "Q3_K_S", DType::Q3_K},
      {12, "Q3_K_M", DType::Q3_K},   {13, "Q3_K_L", DType::Q3_K},    {14, "Q4_K_S", DType::Q4_K},
      {15, "Q4_K_M", DType::Q4_K},   {16, "Q5_K_S", DType::Q5_K},    {17, "Q5_K_M", DType::Q5_K},
      {18, "Q6_K", DType::Q6_K},     {21, "Q2_K_S", DType::Q2_K},    {25, "IQ4_NL", DType::IQ4_NL},
      {30, "IQ4_XS", DType::IQ4_XS}, {32, "BF16", DType::BF16},      {38, "MXFP4_MOE", DType::MXFP4},
  };
  // Types we have no kernels for keep their llama.cpp names; their main type is unknown here.
  static const std::map<uint32_t, const char*> kOther = {
      {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"}, {24, "IQ1_S"}, {26, "IQ3_S"},
      {27, "IQ3_M"},   {28, "IQ2_S"},  {29, "IQ2_M"},  {31, "IQ1_M"},  {36, "TQ1_0"}, {37, "TQ2_0"},
      {39, "NVFP4"},   {40, "Q1_0"},   {41, "Q2_0"}};
  for (const Row& r : kRows)
    if (r.id == t) return FileTypeName{r.name, r.main};
  if (auto it = kOther.find(t); it != kOther.end()) return FileTypeName{it->second, DType::U8};
  return std::nullopt;
}

std::string gguf_quantization(const loader::GgufMetadata& md, const std::vector<loader::GgufTensorInfo>& tensors) {
  std::map<DType, int64_t> elems;  // matrix elements per type
  for (const auto& t : tensors)
    if (t.n_dims >= 2) elems[t.dtype] += t.numel();
  std::optional<uint32_t> file_type;
  try {
    file_type = md.get_opt<uint32_t>("general.file_type");
  } catch (const Error&) {  // a value of another type: no hint
  }
  if (file_type)
    if (auto n = gguf_file_type_name(*file_type); n && elems.count(n->main_type)) return n->name;
  DType best = DType::F32;
  int64_t most = -1;
  for (const auto& [type, n] : elems)
    if (n > most) best = type, most = n;
  if (most < 0) return "unknown";  // no matrix at all
  return std::string(dtype_name(best));
}

}  // namespace oxyd::hub
