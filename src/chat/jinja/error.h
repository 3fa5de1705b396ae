// Errors of the Jinja engine. what() is the bare message exactly as Python's str(exception) gives it
// for the same failure (so callers can surface a template's raise_exception text unchanged);
// kind() names the Python exception class; line() is the template line when known (0 otherwise).
// code(): UNSUPPORTED for a template that does not parse, INVALID_ARGUMENT for render failures
// (raise_exception on bad messages, type errors, safety limits).
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace oxyd::chat::jinja {

enum class ErrorKind {
  SYNTAX,         // TemplateSyntaxError: the template does not parse
  TEMPLATE,       // TemplateError: raise_exception() from the template
  RUNTIME,        // TemplateRuntimeError
  UNDEFINED,      // UndefinedError
  SECURITY,       // SecurityError: a sandbox violation
  TYPE,           // TypeError
  VALUE,          // ValueError
  ZERO_DIVISION,  // ZeroDivisionError
  OVERFLOW,       // OverflowError
  KEY,            // KeyError
  INDEX,          // IndexError
  ATTRIBUTE,      // AttributeError
  ASSERTION,      // AssertionError
  FILTER_ARGUMENT,  // FilterArgumentError
  LIMIT,          // one of our safety limits (no Python equivalent)
};

std::string_view error_kind_name(ErrorKind kind);

class TemplateError : public oxyd::Error {
 public:
  TemplateError(ErrorKind kind, const std::string& message, int line = 0)
      : oxyd::Error(kind == ErrorKind::SYNTAX ? ErrorCode::UNSUPPORTED : ErrorCode::INVALID_ARGUMENT, message),
        kind_(kind),
        line_(line) {}
  ErrorKind kind() const { return kind_; }
  int line() const { return line_; }
  void set_line(int line) { line_ = line; }

 private:
  ErrorKind kind_;
  int line_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) { throw TemplateError(kind, message); }
[[noreturn]] inline void type_error(const std::string& message) { fail(ErrorKind::TYPE, message); }

}  // namespace oxyd::chat::jinja
