// libFuzzer target for the tokenizer: first byte picks the mode.
//  0: the bytes are a tokenizer.json; loading must succeed or throw oxyd::Error, never crash; a
//     loaded tokenizer then encodes its own input text.
//  1: the bytes are text for a fixed small tokenizer exercising most components (byte-level BPE,
//     added tokens with strip flags, Split/Digits pre-tokenizers, NFKC); encode, decode and stream
//     decode must not crash, and streaming must equal decode.
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"

using oxyd::tokenizer::Tokenizer;

static const char* kSmall = R"({
 "added_tokens": [
  {"id": 9, "content": "<|end|>", "special": true, "normalized": false, "lstrip": true, "rstrip": true, "single_word": false},
  {"id": 10, "content": "ab", "special": false, "normalized": true, "lstrip": false, "rstrip": false, "single_word": true}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Replace", "pattern": {"Regex": "\\s{3,}"}, "content": "  "}]},
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
   {"type": "Digits", "individual_digits": true},
   {"type": "Split", "pattern": {"Regex": "(?i:'s|'t)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
   {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
   "pair": [], "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [9], "tokens": ["<|end|>"]}}},
 "decoder": {"type": "ByteLevel"},
 "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "Ġ": 5, "Ġa": 6, "1": 7, "Ã": 8},
           "merges": ["a b", "ab c", "Ġ a"]}
})";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      auto tok = Tokenizer::from_hf_json(input, "", "fuzz/tokenizer.json");
      auto ids = tok->encode(input.substr(0, 256), true, true);
      (void)tok->decode(ids, false);
      return 0;
    }
    static const std::unique_ptr<Tokenizer> small = Tokenizer::from_hf_json(kSmall, "", "small");
    for (bool parse_special : {false, true}) {
      auto ids = small->encode(input, true, parse_special);
      std::string full = small->decode(ids, false);
      oxyd::tokenizer::StreamDecoder sd(*small);
      std::string streamed;
      for (int32_t id : ids) streamed += sd.step(id);
      streamed += sd.flush();
      if (streamed != full) __builtin_trap();
    }
  } catch (const oxyd::Error&) {
  }
  return 0;
}
