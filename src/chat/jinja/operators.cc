// Python arithmetic, membership and slicing on Values (see runtime.h / builtins.h).
#include <cmath>

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {
namespace {

const char* op_symbol(Op op) {
  switch (op) {
    case Op::ADD: return "+";
    case Op::SUB: return "-";
    case Op::MUL: return "*";
    case Op::DIV: return "/";
    case Op::FLOORDIV: return "//";
    case Op::MOD: return "%";
    case Op::POW: return "** or pow()";
    default: return "?";
  }
}

[[noreturn]] void unsupported(Op op, const Value& a, const Value& b) {
  type_error(std::string("unsupported operand type(s) for ") + op_symbol(op) + ": '" + std::string(a.type_name()) +
             "' and '" + std::string(b.type_name()) + "'");
}

Value checked(bool overflow, int64_t r) {
  if (overflow) fail(ErrorKind::OVERFLOW, "integer result too large for the template engine (64-bit)");
  return Value::integer(r);
}

Value repeat(Runtime& rt, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.str();
    if (s.empty()) n = 0;  // '' * 3**20: nothing to build, and no 3.5e9 empty appends
    if (!s.empty() && static_cast<uint64_t>(n) > rt.limits().max_output_bytes / s.size() + 1)
      rt.check_size(rt.limits().max_output_bytes + 1);
    std::string out;
    out.reserve(s.size() * n);
    for (int64_t i = 0; i < n; ++i) out += s;
    return seq.is_markup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
  }
  auto& items = seq.list_obj().items;
  if (items.empty()) n = 0;  // found by jinja_fuzz: [] * 3**20 looped 3.5e9 times (> 10 s)
  if (!items.empty() && static_cast<uint64_t>(n) > rt.limits().max_output_bytes / items.size() / 16 + 1)
    rt.check_size(rt.limits().max_output_bytes + 1);
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.kind() == Kind::TUPLE ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Value percent_format(Runtime& rt, const std::string& fmt, const Value& args) {
  std::vector<Value> vals = args.kind() == Kind::TUPLE ? args.list_obj().items : std::vector<Value>{args};
  // Python: a non-tuple argument with __getitem__ (dict, list) may go unused without error.
  const bool mapping_like = args.kind() == Kind::DICT || args.kind() == Kind::LIST;
  std::string out;
  size_t vi = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) fail(ErrorKind::VALUE, "incomplete format");
    char c = fmt[i];
    if (c == '%') {
      out.push_back('%');
      continue;
    }
    if (vi >= vals.size()) type_error("not enough arguments for format string");
    const Value& v = vals[vi++];
    if (c == 's') append_str(out, v);
    else if (c == 'r') append_repr(out, v);
    else if (c == 'd' || c == 'i') {
      if (!v.is_number()) type_error("%" + std::string(1, c) + " format: a real number is required, not " + std::string(v.type_name()));
      out += std::to_string(v.kind() == Kind::FLOAT ? static_cast<int64_t>(v.as_double()) : v.as_int());
    } else {
      fail(ErrorKind::VALUE, "unsupported format character '" + std::string(1, c) + "'");
    }
  }
  if (vi < vals.size() && !mapping_like) type_error("not all arguments converted during string formatting");
  rt.check_size(out.size());
  return Value::string(std::move(out));
}

}  // namespace

Value binary_op(Runtime& rt, Op op, const Value& a, const Value& b) {
  if (a.is_undefined()) a.fail_undefined();
  if (b.is_undefined()) b.fail_undefined();
  bool nums = a.is_number() && b.is_number();
  bool ints = nums && a.is_int() && b.is_int();
  switch (op) {
    case Op::ADD: {
      if (ints) {
        int64_t r;
        bool ovf = __builtin_add_overflow(a.as_int(), b.as_int(), &r);
        return checked(ovf, r);
      }
      if (nums) return Value::number(a.as_double() + b.as_double());
      if (a.is_string() && b.is_string()) {
        rt.check_size(a.str().size() + b.str().size());
        if (a.is_markup() || b.is_markup()) {  // Markup.__add__/__radd__ escape the plain side
          return Value::markup((a.is_markup() ? a.str() : pystr::html_escape(a.str())) +
                               (b.is_markup() ? b.str() : pystr::html_escape(b.str())));
        }
        return Value::string(a.str() + b.str());
      }
      if (a.kind() == b.kind() && a.is_list_like()) {
        std::vector<Value> items = a.list_obj().items;
        items.insert(items.end(), b.list_obj().items.begin(), b.list_obj().items.end());
        return a.kind() == Kind::TUPLE ? Value::tuple(std::move(items)) : Value::list(std::move(items));
      }
      if (a.is_string() || a.is_list_like())
        type_error("can only concatenate " + std::string(a.type_name()) + " (not \"" + std::string(b.type_name()) +
                   "\") to " + std::string(a.type_name()));
      unsupported(op, a, b);
    }
    case Op::SUB: {
      if (ints) {
        int64_t r;
        bool ovf = __builtin_sub_overflow(a.as_int(), b.as_int(), &r);
        return checked(ovf, r);
      }
      if (nums) return Value::number(a.as_double() - b.as_double());
      unsupported(op, a, b);
    }
    case Op::MUL: {
      if (ints) {
        int64_t r;
        bool ovf = __builtin_mul_overflow(a.as_int(), b.as_int(), &r);
        return checked(ovf, r);
      }
      if (nums) return Value::number(a.as_double() * b.as_double());
      if ((a.is_string() || a.is_list_like()) && b.is_int()) return repeat(rt, a, b.as_int());
      if ((b.is_string() || b.is_list_like()) && a.is_int()) return repeat(rt, b, a.as_int());
      if (a.is_string() || a.is_list_like() || b.is_string() || b.is_list_like())
        type_error("can't multiply sequence by non-int of type '" +
                   std::string((a.is_string() || a.is_list_like()) ? b.type_name() : a.type_name()) + "'");
      unsupported(op, a, b);
    }
    case Op::DIV: {
      if (!nums) unsupported(op, a, b);
      if (b.as_double() == 0) fail(ErrorKind::ZERO_DIVISION, "division by zero");
      return Value::number(a.as_double() / b.as_double());
    }
    case Op::FLOORDIV: {
      if (!nums) unsupported(op, a, b);
      if (ints) {
        int64_t x = a.as_int(), y = b.as_int();
        if (y == 0) fail(ErrorKind::ZERO_DIVISION, "integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) fail(ErrorKind::OVERFLOW, "integer overflow");
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value::integer(q);
      }
      if (b.as_double() == 0) fail(ErrorKind::ZERO_DIVISION, "float floor division by zero");
      return Value::number(std::floor(a.as_double() / b.as_double()));
    }
    case Op::MOD: {
      if (a.is_string()) return percent_format(rt, a.str(), b);
      if (!nums) unsupported(op, a, b);
      if (ints) {
        int64_t x = a.as_int(), y = b.as_int();
        if (y == 0) fail(ErrorKind::ZERO_DIVISION, "integer modulo by zero");
        if (y == -1) return Value::integer(0);
        int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::integer(r);
      }
      double x = a.as_double(), y = b.as_double();
      if (y == 0) fail(ErrorKind::ZERO_DIVISION, "float modulo");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value::number(r);
    }
    case Op::POW: {
      if (!nums) unsupported(op, a, b);
      if (ints && b.as_int() >= 0) {
        int64_t base = a.as_int(), e = b.as_int(), r = 1;
        while (e > 0) {
          if (e & 1)
            if (__builtin_mul_overflow(r, base, &r)) checked(true, 0);
          e >>= 1;
          if (e && __builtin_mul_overflow(base, base, &base)) checked(true, 0);
        }
        return Value::integer(r);
      }
      if (a.as_double() == 0 && b.as_double() < 0)
        fail(ErrorKind::ZERO_DIVISION, "0.0 cannot be raised to a negative power");
      double r = std::pow(a.as_double(), b.as_double());
      if (std::isinf(r) && std::isfinite(a.as_double()) && std::isfinite(b.as_double()))
        fail(ErrorKind::OVERFLOW, "(34, 'Numerical result out of range')");
      return Value::number(r);
    }
    default: break;
  }
  unsupported(op, a, b);
}

bool contains(const Value& c, const Value& item) {
  switch (c.kind()) {
    case Kind::STRING:
      if (!item.is_string())
        type_error("'in <string>' requires string as left operand, not " + std::string(item.type_name()));
      return c.str().find(item.str()) != std::string::npos;
    case Kind::LIST:
    case Kind::TUPLE:
      for (auto& v : c.list_obj().items)
        if (py_equal(v, item)) return true;
      return false;
    case Kind::DICT:
      if (item.kind() == Kind::LIST || item.kind() == Kind::DICT || item.kind() == Kind::NAMESPACE)
        type_error("unhashable type: '" + std::string(item.type_name()) + "'");
      return c.dict_obj().find(item) >= 0;
    case Kind::UNDEFINED: return false;
    default: type_error("argument of type '" + std::string(c.type_name()) + "' is not iterable");
  }
}

Value slice_value(Runtime& rt, const Value& obj, const Value& start, const Value& stop, const Value& step) {
  auto as_index = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none()) return std::nullopt;
    if (!v.is_int()) type_error("slice indices must be integers or None or have an __index__ method");
    (void)what;
    return v.as_int();
  };
  std::optional<int64_t> b = as_index(start, "start"), e = as_index(stop, "stop"), st = as_index(step, "step");
  int64_t s = st.value_or(1);
  if (s == 0) fail(ErrorKind::VALUE, "slice step cannot be zero");
  bool is_str = obj.is_string();
  if (!is_str && !obj.is_list_like()) {  // jinja2 compiles slicing to a raw Python subscript
    if (obj.kind() == Kind::DICT) type_error("unhashable type: 'slice'");
    type_error("'" + std::string(obj.type_name()) + "' object is not subscriptable");
  }
  std::vector<char32_t> cps;
  bool ascii = is_str && pystr::is_ascii(obj.str());
  if (is_str && !ascii) cps = pystr::decode(obj.str());
  int64_t n = is_str ? (ascii ? static_cast<int64_t>(obj.str().size()) : static_cast<int64_t>(cps.size()))
                     : static_cast<int64_t>(obj.list_obj().items.size());
  // Python's slice.indices()
  auto clamp = [&](std::optional<int64_t> v, int64_t def_pos, int64_t def_neg) {
    if (!v) return s > 0 ? def_pos : def_neg;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = s > 0 ? 0 : -1;
    } else if (x >= n) {
      x = s > 0 ? n : n - 1;
    }
    return x;
  };
  int64_t lo = clamp(b, 0, n - 1), hi = clamp(e, n, -1);
  std::vector<int64_t> idx;
  if (s > 0)
    for (int64_t i = lo; i < hi; i += s) idx.push_back(i);
  else
    for (int64_t i = lo; i > hi; i += s) idx.push_back(i);
  rt.tick(static_cast<int64_t>(idx.size() / 64));
  if (is_str) {
    std::string out;
    for (int64_t i : idx) {
      if (ascii) out.push_back(obj.str()[i]);
      else pystr::encode(cps[i], out);
    }
    return Value::string(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(idx.size());
  for (int64_t i : idx) out.push_back(obj.list_obj().items[i]);
  return obj.kind() == Kind::TUPLE ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

}  // namespace oxyd::chat::jinja
