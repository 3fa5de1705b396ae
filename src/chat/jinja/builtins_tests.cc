// jinja2's default tests (`is defined`, `is mapping`, `is divisibleby 3`, ...) with the Python type
// checks they perform.
#include <cmath>

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {
namespace {

const Value& need(const Args& a, const char* test) {
  const Value* v = arg(a, 0, "");
  if (!v) type_error(std::string("test '") + test + "' missing 1 required positional argument");
  return *v;
}

bool t_defined(Runtime&, const Value& v, Args&) { return !v.is_undefined(); }
bool t_undefined(Runtime&, const Value& v, Args&) { return v.is_undefined(); }
bool t_none(Runtime&, const Value& v, Args&) { return v.is_none(); }
bool t_boolean(Runtime&, const Value& v, Args&) { return v.kind() == Kind::BOOL; }
bool t_false(Runtime&, const Value& v, Args&) { return v.kind() == Kind::BOOL && !v.as_bool(); }
bool t_true(Runtime&, const Value& v, Args&) { return v.kind() == Kind::BOOL && v.as_bool(); }
bool t_integer(Runtime&, const Value& v, Args&) { return v.kind() == Kind::INT; }
bool t_float(Runtime&, const Value& v, Args&) { return v.kind() == Kind::FLOAT; }
bool t_number(Runtime&, const Value& v, Args&) { return v.is_number(); }
bool t_string(Runtime&, const Value& v, Args&) { return v.is_string(); }
bool t_mapping(Runtime&, const Value& v, Args&) { return v.kind() == Kind::DICT; }
// Undefined and the loop object define __call__ in jinja2, so they count as callable.
bool t_callable(Runtime&, const Value& v, Args&) {
  return v.kind() == Kind::FUNC || v.kind() == Kind::UNDEFINED || v.kind() == Kind::LOOP;
}
bool t_iterable(Runtime&, const Value& v, Args&) {
  Kind k = v.kind();
  return k == Kind::STRING || k == Kind::LIST || k == Kind::TUPLE || k == Kind::DICT || k == Kind::UNDEFINED;
}
bool t_sequence(Runtime&, const Value& v, Args&) {
  Kind k = v.kind();
  return k == Kind::STRING || k == Kind::LIST || k == Kind::TUPLE || k == Kind::DICT || k == Kind::UNDEFINED;
}
bool t_escaped(Runtime&, const Value&, Args&) { return false; }
bool case_test(Runtime& rt, const Value& v, const char* m) {
  Args none;
  bool found = false;
  return rt.call_method(Value::string(to_str(v)), m, none, found).truthy();
}
bool t_lower(Runtime& rt, const Value& v, Args&) { return case_test(rt, v, "islower"); }
bool t_upper(Runtime& rt, const Value& v, Args&) { return case_test(rt, v, "isupper"); }
bool t_odd(Runtime& rt, const Value& v, Args&) {
  return binary_op(rt, Op::MOD, v, Value::integer(2)).truthy();
}
bool t_even(Runtime& rt, const Value& v, Args&) {
  return !binary_op(rt, Op::MOD, v, Value::integer(2)).truthy();
}
bool t_divisibleby(Runtime& rt, const Value& v, Args& a) {
  return py_equal(binary_op(rt, Op::MOD, v, need(a, "divisibleby")), Value::integer(0));
}
bool t_eq(Runtime&, const Value& v, Args& a) { return py_equal(v, need(a, "eq")); }
bool t_ne(Runtime&, const Value& v, Args& a) { return !py_equal(v, need(a, "ne")); }
bool t_lt(Runtime&, const Value& v, Args& a) { return py_less(v, need(a, "lt"), "<"); }
bool t_gt(Runtime&, const Value& v, Args& a) { return py_less(need(a, "gt"), v, ">", true); }
bool t_le(Runtime&, const Value& v, Args& a) { return py_less(v, need(a, "le"), "<=") || py_equal(v, a.pos[0]); }
bool t_ge(Runtime&, const Value& v, Args& a) { return py_less(need(a, "ge"), v, ">=", true) || py_equal(v, a.pos[0]); }
bool t_in(Runtime&, const Value& v, Args& a) { return contains(need(a, "in"), v); }
bool t_sameas(Runtime&, const Value& v, Args& a) {
  const Value& o = need(a, "sameas");
  if (v.kind() != o.kind()) return false;
  if (v.heap() || o.heap()) return v.heap() == o.heap();
  return py_equal(v, o);
}
bool t_filter(Runtime&, const Value& v, Args&) { return v.is_string() && find_filter(v.str()) != nullptr; }
bool t_test(Runtime&, const Value& v, Args&) { return v.is_string() && find_test(v.str()) != nullptr; }

// Python function behind each test and how many arguments it takes besides the value (a
// leading `env` counts for the pass_environment ones), for jinja2's own arity errors.
enum class Sig { PY, OPERATOR, CALLABLE };
struct Entry {
  const char* name;
  TestFn fn;
  const char* pyname;
  int nargs;      // extra positional arguments
  bool env;       // pass_environment (environment counts as a positional argument)
  Sig sig;
  const char* arg_name;
};
constexpr Entry kTests[] = {
    {"defined", t_defined, "test_defined", 0, false, Sig::PY, ""},
    {"undefined", t_undefined, "test_undefined", 0, false, Sig::PY, ""},
    {"none", t_none, "test_none", 0, false, Sig::PY, ""},
    {"boolean", t_boolean, "test_boolean", 0, false, Sig::PY, ""},
    {"false", t_false, "test_false", 0, false, Sig::PY, ""},
    {"true", t_true, "test_true", 0, false, Sig::PY, ""},
    {"integer", t_integer, "test_integer", 0, false, Sig::PY, ""},
    {"float", t_float, "test_float", 0, false, Sig::PY, ""},
    {"number", t_number, "test_number", 0, false, Sig::PY, ""},
    {"string", t_string, "test_string", 0, false, Sig::PY, ""},
    {"mapping", t_mapping, "test_mapping", 0, false, Sig::PY, ""},
    {"callable", t_callable, "callable", 0, false, Sig::CALLABLE, ""},
    {"iterable", t_iterable, "test_iterable", 0, false, Sig::PY, ""},
    {"sequence", t_sequence, "test_sequence", 0, false, Sig::PY, ""},
    {"escaped", t_escaped, "test_escaped", 0, false, Sig::PY, ""},
    {"lower", t_lower, "test_lower", 0, false, Sig::PY, ""},
    {"upper", t_upper, "test_upper", 0, false, Sig::PY, ""},
    {"odd", t_odd, "test_odd", 0, false, Sig::PY, ""},
    {"even", t_even, "test_even", 0, false, Sig::PY, ""},
    {"divisibleby", t_divisibleby, "test_divisibleby", 1, false, Sig::PY, "num"},
    {"eq", t_eq, "eq", 1, false, Sig::OPERATOR, ""},
    {"equalto", t_eq, "eq", 1, false, Sig::OPERATOR, ""},
    {"==", t_eq, "eq", 1, false, Sig::OPERATOR, ""},
    {"ne", t_ne, "ne", 1, false, Sig::OPERATOR, ""},
    {"!=", t_ne, "ne", 1, false, Sig::OPERATOR, ""},
    {"lt", t_lt, "lt", 1, false, Sig::OPERATOR, ""},
    {"lessthan", t_lt, "lt", 1, false, Sig::OPERATOR, ""},
    {"<", t_lt, "lt", 1, false, Sig::OPERATOR, ""},
    {"gt", t_gt, "gt", 1, false, Sig::OPERATOR, ""},
    {"greaterthan", t_gt, "gt", 1, false, Sig::OPERATOR, ""},
    {">", t_gt, "gt", 1, false, Sig::OPERATOR, ""},
    {"le", t_le, "le", 1, false, Sig::OPERATOR, ""},
    {"<=", t_le, "le", 1, false, Sig::OPERATOR, ""},
    {"ge", t_ge, "ge", 1, false, Sig::OPERATOR, ""},
    {">=", t_ge, "ge", 1, false, Sig::OPERATOR, ""},
    {"in", t_in, "test_in", 1, false, Sig::PY, "seq"},
    {"sameas", t_sameas, "test_sameas", 1, false, Sig::PY, "other"},
    {"filter", t_filter, "test_filter", 0, true, Sig::PY, ""},
    {"test", t_test, "test_test", 0, true, Sig::PY, ""},
};

const Entry* find_entry(std::string_view name) {
  for (const Entry& e : kTests)
    if (name == e.name) return &e;
  return nullptr;
}

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

void check_test_arity(std::string_view name, const Args& a) {
  const Entry* e = find_entry(name);
  if (!e) return;
  int given = static_cast<int>(a.pos.size()) + 1;  // + the tested value
  int want = e->nargs + 1;
  std::string fn = e->pyname;
  if (e->sig == Sig::OPERATOR) {
    if (!a.kw.empty()) type_error(fn + "() takes no keyword arguments");
    if (given != want) type_error(fn + " expected 2 arguments, got " + std::to_string(given));
    return;
  }
  if (e->sig == Sig::CALLABLE) {
    if (!a.kw.empty()) type_error("callable() takes no keyword arguments");
    if (given != 1) type_error("callable() takes exactly one argument (" + std::to_string(given) + " given)");
    return;
  }
  for (auto& [k, v] : a.kw)
    if (e->nargs == 0 || k != e->arg_name || a.pos.size() >= 1)
      type_error(fn + "() got an unexpected keyword argument '" + k + "'");
  int env = e->env ? 1 : 0;
  if (given + static_cast<int>(a.kw.size()) < want)
    type_error(fn + "() missing 1 required positional argument: '" + e->arg_name + "'");
  if (given > want)
    type_error(fn + "() takes " + plural(want + env, "positional argument") + " but " + std::to_string(given + env) +
               (given + env == 1 ? " was" : " were") + " given");
}

TestFn find_test(std::string_view name) {
  const Entry* e = find_entry(name);
  return e ? e->fn : nullptr;
}

}  // namespace oxyd::chat::jinja
