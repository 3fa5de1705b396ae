// Whole-file reads for small text inputs (templates, tokenizer JSON, configs).
#pragma once

#include <string>

namespace oxyd {

/// The file's bytes. Throws Error(NOT_FOUND) naming the path when it cannot be opened, and
/// Error(IO) when reading fails.
std::string read_text_file(const std::string& path);

}  // namespace oxyd
