// libFuzzer target for loading a model's tokenizer files as the server and `run` do: the input is
// a tokenizer.json, and after its first NUL byte (if any) a tokenizer_config.json. Loading must
// give a tokenizer or throw oxyd::Error (never crash, recurse without bound or hang); a loaded
// tokenizer encodes and decodes a short text, and decode(encode(text)) must not throw.
// Seeds: fuzz/seeds/tokenizer_json_fuzz (small hand-written BPE, WordPiece, Unigram, WordLevel files
// with Sequence normalizers, pre-tokenizers and decoders).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view json = in.substr(0, nul);
  const std::string_view config = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
  try {
    const auto tok = oxyd::tokenizer::Tokenizer::from_hf_json(json, config, "fuzz/tokenizer.json");
    const auto ids = tok->encode("Hello world! 123 ab c\n\tÀé 漢字 <s></s>", true, true);
    (void)tok->decode(ids, false);
    (void)tok->decode(ids, true);
  } catch (const oxyd::Error&) {
  }
  return 0;
}
