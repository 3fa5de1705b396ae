// Decoders as tokenizer.json declares them (ByteLevel, Replace, ByteFallback, Fuse, Strip,
// Metaspace, WordPiece, BPEDecoder, Sequence): token strings -> text. Each stage maps a list of
// strings to a list of strings, like Hugging Face's decode_chain; the result is their
// concatenation. Invalid UTF-8 becomes U+FFFD with Rust's from_utf8_lossy rules.
#pragma once

#include <string>
#include <vector>

namespace oxyd::tokenizer {

struct Decoder {
  enum class Kind { NONE, SEQUENCE, BYTE_LEVEL, REPLACE, BYTE_FALLBACK, FUSE, STRIP, METASPACE,
                    WORDPIECE, BPE };
  Kind kind = Kind::NONE;
  std::vector<Decoder> children;      // SEQUENCE
  std::string pattern, content;       // REPLACE (string pattern); STRIP content
  size_t strip_start = 0, strip_stop = 0;
  std::string replacement = "\xE2\x96\x81";  // METASPACE
  bool prepend_first = true;                  // METASPACE: prepend_scheme != never
  std::string prefix = "##";                  // WORDPIECE
  bool cleanup = true;                        // WORDPIECE
  std::string suffix = "</w>";                // BPE

  void decode_chain(std::vector<std::string>& tokens) const;
  /// The bytes one vocabulary piece adds to a decoded text in the middle of it: the per-token
  /// stages only (byte-level and <0xXX> bytes undone, replacements, Metaspace/WordPiece/BPE
  /// spacing), none of the whole-text ones (lossy UTF-8, Strip, first-token rules). A piece may
  /// be part of a UTF-8 character. Grammar masks (grammar/) need these exact bytes.
  std::string piece_bytes(std::string piece) const;
};

/// No decoder in the file: tokens joined by a space (tokenizers' default).
std::string run_decoder(const Decoder& d, std::vector<std::string> tokens);

}  // namespace oxyd::tokenizer
