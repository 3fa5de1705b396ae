// oxyd::Error — the one exception type of the project (docs/architecture.md §6), and OXYD_CHECK, an
// always-on invariant check that survives release builds. Kernels and per-token loops must not
// throw; validate once at the op front end instead.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace oxyd {

enum class ErrorCode { INVALID_ARGUMENT, NOT_FOUND, UNSUPPORTED, OUT_OF_MEMORY, IO, INTERNAL };

std::string_view error_code_name(ErrorCode code);

/// An error with a code; the message says what was expected, what was found, what to do.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code), message_(message) {}
  ErrorCode code() const { return code_; }
  /// The whole message; what() stops at a NUL that request text may have put into it.
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

[[noreturn]] void throw_error(ErrorCode code, const std::string& message);
[[noreturn]] void check_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace oxyd

/// Invariant check, on in every build type. Failing means a bug: it throws Error(INTERNAL).
#define OXYD_CHECK(cond, msg)                                          \
  do {                                                                 \
    if (!(cond)) ::oxyd::check_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
