#include "core/error.h"

namespace oxyd {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::INVALID_ARGUMENT: return "invalid_argument";
    case ErrorCode::NOT_FOUND: return "not_found";
    case ErrorCode::UNSUPPORTED: return "unsupported";
    case ErrorCode::OUT_OF_MEMORY: return "out_of_memory";
    case ErrorCode::IO: return "io";
    case ErrorCode::INTERNAL: return "internal";
  }
  return "unknown";
}

void throw_error(ErrorCode code, const std::string& message) { throw Error(code, message); }

void check_failed(const char* expr, const char* file, int line, const std::string& msg) {
  throw Error(ErrorCode::INTERNAL,
              std::string("check failed: ") + expr + " at " + file + ":" + std::to_string(line) +
                  (msg.empty() ? "" : ": " + msg));
}

}  // namespace oxyd
