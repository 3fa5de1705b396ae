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
bool t_callable(Runtime&, const Value& v, Args&) { return v.kind() == Kind::FUNC; }
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
bool t_gt(Runtime&, const Value& v, Args& a) { return py_less(need(a, "gt"), v, ">"); }
bool t_le(Runtime&, const Value& v, Args& a) { return py_less(v, need(a, "le"), "<=") || py_equal(v, a.pos[0]); }
bool t_ge(Runtime&, const Value& v, Args& a) { return py_less(need(a, "ge"), v, ">=") || py_equal(v, a.pos[0]); }
bool t_in(Runtime&, const Value& v, Args& a) { return contains(need(a, "in"), v); }
bool t_sameas(Runtime&, const Value& v, Args& a) {
  const Value& o = need(a, "sameas");
  if (v.kind() != o.kind()) return false;
  if (v.heap() || o.heap()) return v.heap() == o.heap();
  return py_equal(v, o);
}
bool t_filter(Runtime&, const Value& v, Args&) { return v.is_string() && find_filter(v.str()) != nullptr; }
bool t_test(Runtime&, const Value& v, Args&) { return v.is_string() && find_test(v.str()) != nullptr; }

struct Entry {
  const char* name;
  TestFn fn;
};
constexpr Entry kTests[] = {
    {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none}, {"boolean", t_boolean},
    {"false", t_false}, {"true", t_true}, {"integer", t_integer}, {"float", t_float}, {"number", t_number},
    {"string", t_string}, {"mapping", t_mapping}, {"callable", t_callable}, {"iterable", t_iterable},
    {"sequence", t_sequence}, {"escaped", t_escaped}, {"lower", t_lower}, {"upper", t_upper}, {"odd", t_odd},
    {"even", t_even}, {"divisibleby", t_divisibleby}, {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq},
    {"ne", t_ne}, {"!=", t_ne}, {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"gt", t_gt},
    {"greaterthan", t_gt}, {">", t_gt}, {"le", t_le}, {"<=", t_le}, {"ge", t_ge}, {">=", t_ge}, {"in", t_in},
    {"sameas", t_sameas}, {"filter", t_filter}, {"test", t_test},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const Entry& e : kTests)
    if (name == e.name) return e.fn;
  return nullptr;
}

}  // namespace oxyd::chat::jinja
