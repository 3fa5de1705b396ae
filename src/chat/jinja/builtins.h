// Builtins shared between the runtime and the filter/test/method/global tables: the Python
// methods templates may call on str/list/dict (and the mutating ones the immutable sandbox
// refuses), slicing, the loop object's attributes and the global functions.
#pragma once

#include <string>
#include <string_view>

#include "chat/jinja/runtime.h"

namespace oxyd::chat::jinja {

/// True for methods of str/list/tuple/dict that ImmutableSandboxedEnvironment lets templates call.
bool is_safe_method(Kind kind, std::string_view name);
/// True for mutating list/dict methods (append, pop, update, ...) the sandbox reports as unsafe.
bool is_unsafe_method(Kind kind, std::string_view name);
/// obj[start:stop:step] for str/list/tuple; None parts are omitted bounds.
Value slice_value(Runtime& rt, const Value& obj, const Value& start, const Value& stop, const Value& step);
/// loop.index, loop.cycle, ...; returns a heap-less Undefined for unknown names.
Value loop_attr(Runtime& rt, const Value& loop, const std::string& name);
/// range, dict, namespace, raise_exception, strftime_now, cycler, joiner; Undefined otherwise.
Value builtin_global(std::string_view name);

/// jinja2's TypeError when a filter gets an unknown keyword or the wrong number of arguments.
void check_filter_arity(std::string_view name, const Args& a);
/// jinja2's TypeError when a test gets the wrong number of arguments (`x is defined(1)`).
void check_test_arity(std::string_view name, const Args& a);

// Argument helpers: positional index or keyword name, else the default.
const Value* arg(const Args& a, size_t pos, std::string_view kw);
int64_t arg_int(const Args& a, size_t pos, std::string_view kw, int64_t def);
bool arg_bool(const Args& a, size_t pos, std::string_view kw, bool def);
/// Python str of the argument, or nullptr when absent/None.
bool arg_str(const Args& a, size_t pos, std::string_view kw, std::string& out);
/// TypeError unless at most `max_pos` positionals and only the given keywords were passed.
void check_args(const Args& a, std::string_view fn, size_t max_pos, std::initializer_list<std::string_view> kws);

}  // namespace oxyd::chat::jinja
