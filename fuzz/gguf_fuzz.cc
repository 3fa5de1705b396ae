// libFuzzer target: the GGUF reader on arbitrary bytes. Any input must either parse or throw
// oxyd::Error; a crash, sanitizer report, other exception or huge allocation is a bug.
// Build/run: see fuzz/CMakeLists.txt; seeds in fuzz/seeds/gguf_fuzz/.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oxyd::loader;
  using oxyd::model::model_config_from_gguf;
  std::span<const uint8_t> bytes(data, size);
  // The remote-header path with the size unknown (asks for more) and known.
  try {
    GgufHeaderParse p = parse_gguf_header(bytes, "fuzz.gguf");
    if (!p.complete() && p.bytes_needed <= size) __builtin_trap();  // must ask for more
  } catch (const oxyd::Error&) {
  }
  try {
    GgufFile f = GgufFile::from_buffer(bytes, "fuzz.gguf");
    size_t sum = 0;
    for (const auto& t : f.tensors()) {
      auto d = f.tensor_data(t);
      if (!d.empty()) sum += d[0] + d[d.size() - 1];  // touches both ends: ASan checks bounds
      oxyd::Tensor v = f.view(t);
      sum += static_cast<size_t>(v.nbytes()) == t.nbytes ? 0 : 1;
    }
    for (const auto& [k, v] : f.entries()) sum += v.to_string(4).size();
    try {
      ModelConfig c = model_config_from_gguf(f);
      sum += static_cast<size_t>(c.num_hidden_layers);
    } catch (const oxyd::Error&) {
    }
    if (sum == 1) return 0;
  } catch (const oxyd::Error&) {
  }
  return 0;
}
