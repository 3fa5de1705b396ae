// Value construction, Python equality/ordering, str()/repr() and json.dumps (see value.h).
#include "chat/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::SYNTAX: return "TemplateSyntaxError";
    case ErrorKind::TEMPLATE: return "TemplateError";
    case ErrorKind::RUNTIME: return "TemplateRuntimeError";
    case ErrorKind::UNDEFINED: return "UndefinedError";
    case ErrorKind::SECURITY: return "SecurityError";
    case ErrorKind::TYPE: return "TypeError";
    case ErrorKind::VALUE: return "ValueError";
    case ErrorKind::ZERO_DIVISION: return "ZeroDivisionError";
    case ErrorKind::OVERFLOW: return "OverflowError";
    case ErrorKind::KEY: return "KeyError";
    case ErrorKind::INDEX: return "IndexError";
    case ErrorKind::ATTRIBUTE: return "AttributeError";
    case ErrorKind::ASSERTION: return "AssertionError";
    case ErrorKind::FILTER_ARGUMENT: return "FilterArgumentError";
    case ErrorKind::LIMIT: return "LimitError";
  }
  return "Error";
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::STRING;
  v.obj_ = std::make_shared<StrObj>(std::move(s));
  return v;
}
Value Value::markup(std::string s) {
  Value v;
  v.kind_ = Kind::STRING;
  v.obj_ = std::make_shared<StrObj>(std::move(s), true);
  return v;
}
bool Value::is_markup() const { return kind_ == Kind::STRING && static_cast<StrObj*>(obj_.get())->markup; }
Value Value::list(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::LIST;
  auto l = std::make_shared<ListObj>();
  l->items = std::move(items);
  v.obj_ = std::move(l);
  return v;
}
Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::TUPLE;
  return v;
}
Value Value::dict() {
  Value v;
  v.kind_ = Kind::DICT;
  v.obj_ = std::make_shared<DictObj>();
  return v;
}
Value Value::namespace_() {
  Value v = dict();
  v.kind_ = Kind::NAMESPACE;
  return v;
}
Value Value::undefined(std::string message, ErrorKind exc) {
  Value v;
  auto u = std::make_shared<UndefObj>();
  u->message = std::move(message);
  u->exc = exc;
  v.obj_ = std::move(u);
  return v;
}
Value Value::undefined_name(std::string_view name) {
  std::string m;
  pystr::append_repr(m, name);
  return undefined(m + " is undefined");
}
Value Value::func(std::shared_ptr<FuncObj> f) {
  Value v;
  v.kind_ = Kind::FUNC;
  v.obj_ = std::move(f);
  return v;
}
Value Value::loop(std::shared_ptr<LoopObj> l) {
  Value v;
  v.kind_ = Kind::LOOP;
  v.obj_ = std::move(l);
  return v;
}

Value Value::from_json(const nlohmann::ordered_json& j) {
  using J = nlohmann::ordered_json;
  switch (j.type()) {
    case J::value_t::null: return none();
    case J::value_t::boolean: return boolean(j.get<bool>());
    case J::value_t::number_integer: return integer(j.get<int64_t>());
    case J::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      return u > static_cast<uint64_t>(INT64_MAX) ? number(static_cast<double>(u)) : integer(static_cast<int64_t>(u));
    }
    case J::value_t::number_float: return number(j.get<double>());
    case J::value_t::string: return string(j.get<std::string>());
    case J::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json(e));
      return list(std::move(items));
    }
    case J::value_t::object: {
      Value d = dict();
      auto& items = d.dict_obj().items;
      items.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(string(it.key()), from_json(it.value()));
      return d;
    }
    default: return none();
  }
}

static const std::string kEmpty;
constexpr size_t kMaxPrintBytes = 64u << 20;
const std::string& Value::str() const {
  return kind_ == Kind::STRING ? static_cast<StrObj*>(obj_.get())->s : kEmpty;
}
ListObj& Value::list_obj() const { return *static_cast<ListObj*>(obj_.get()); }
DictObj& Value::dict_obj() const { return *static_cast<DictObj*>(obj_.get()); }
UndefObj& Value::undef_obj() const { return *static_cast<UndefObj*>(obj_.get()); }
FuncObj& Value::func_obj() const { return *static_cast<FuncObj*>(obj_.get()); }
LoopObj& Value::loop_obj() const { return *static_cast<LoopObj*>(obj_.get()); }

bool Value::truthy() const {
  switch (kind_) {
    case Kind::UNDEFINED:
    case Kind::NONE: return false;
    case Kind::BOOL:
    case Kind::INT: return i_ != 0;
    case Kind::FLOAT: return f_ != 0;
    case Kind::STRING: return !str().empty();
    case Kind::LIST:
    case Kind::TUPLE: return !list_obj().items.empty();
    case Kind::DICT: return !dict_obj().items.empty();
    default: return true;
  }
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::UNDEFINED: return "Undefined";
    case Kind::NONE: return "NoneType";
    case Kind::BOOL: return "bool";
    case Kind::INT: return "int";
    case Kind::FLOAT: return "float";
    case Kind::STRING: return "str";
    case Kind::LIST: return "list";
    case Kind::TUPLE: return "tuple";
    case Kind::DICT: return "dict";
    case Kind::NAMESPACE: return "TemplateNamespace";
    case Kind::FUNC: return "function";
    case Kind::LOOP: return "LoopContext";
  }
  return "object";
}

std::string Value::object_type_repr() const {
  if (kind_ == Kind::NONE) return "None";
  if (kind_ == Kind::NAMESPACE) return "transformers.utils.chat_template_utils.TemplateNamespace object";
  if (kind_ == Kind::LOOP) return "jinja2.runtime.LoopContext object";
  if (kind_ == Kind::UNDEFINED) return "jinja2.runtime.Undefined object";
  return std::string(type_name()) + " object";
}

std::string Value::undefined_message() const {
  return kind_ == Kind::UNDEFINED && obj_ ? undef_obj().message : std::string();
}

void Value::fail_undefined() const {
  if (kind_ == Kind::UNDEFINED && obj_) throw TemplateError(undef_obj().exc, undef_obj().message);
  throw TemplateError(ErrorKind::UNDEFINED, "undefined value");
}

ptrdiff_t DictObj::find(std::string_view key) const {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].first.kind() == Kind::STRING && items[i].first.str() == key) return static_cast<ptrdiff_t>(i);
  return -1;
}
ptrdiff_t DictObj::find(const Value& key) const {
  if (key.kind() == Kind::STRING) return find(std::string_view(key.str()));
  for (size_t i = 0; i < items.size(); ++i)
    if (py_equal(items[i].first, key)) return static_cast<ptrdiff_t>(i);
  return -1;
}
void DictObj::set(const Value& key, Value v) {
  ptrdiff_t i = find(key);
  if (i >= 0)
    items[i].second = std::move(v);
  else
    items.emplace_back(key, std::move(v));
}

bool py_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Kind::FLOAT || b.kind() == Kind::FLOAT) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::UNDEFINED:
    case Kind::NONE: return true;
    case Kind::STRING: return a.str() == b.str();
    case Kind::LIST:
    case Kind::TUPLE: {
      auto &x = a.list_obj().items, &y = b.list_obj().items;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!py_equal(x[i], y[i])) return false;
      return true;
    }
    case Kind::DICT: {
      auto &x = a.dict_obj(), &y = b.dict_obj();
      if (x.items.size() != y.items.size()) return false;
      for (auto& [k, v] : x.items) {
        ptrdiff_t j = y.find(k);
        if (j < 0 || !py_equal(v, y.items[j].second)) return false;
      }
      return true;
    }
    default: return a.heap() == b.heap();
  }
}

bool py_less(const Value& a, const Value& b, std::string_view op, bool reflected) {
  if (a.is_undefined()) a.fail_undefined();
  if (b.is_undefined()) b.fail_undefined();
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Kind::FLOAT || b.kind() == Kind::FLOAT) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.kind() == Kind::STRING && b.kind() == Kind::STRING) return a.str() < b.str();
  if (a.kind() == b.kind() && a.is_list_like()) {
    auto &x = a.list_obj().items, &y = b.list_obj().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (py_equal(x[i], y[i])) continue;
      return py_less(x[i], y[i], op, reflected);
    }
    return x.size() < y.size();
  }
  const Value& l = reflected ? b : a;
  const Value& r = reflected ? a : b;
  type_error("'" + std::string(op) + "' not supported between instances of '" + std::string(l.type_name()) + "' and '" +
             std::string(r.type_name()) + "'");
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::UNDEFINED: return;
    case Kind::STRING: out += v.str(); return;
    case Kind::NONE: out += "None"; return;
    case Kind::BOOL: out += v.as_bool() ? "True" : "False"; return;
    case Kind::INT: out += std::to_string(v.as_int()); return;
    case Kind::FLOAT: out += pystr::float_repr(v.as_double()); return;
    default: append_repr(out, v);
  }
}

std::string to_str(const Value& v) {
  if (v.kind() == Kind::STRING) return v.str();
  std::string s;
  append_str(s, v);
  return s;
}

void append_repr(std::string& out, const Value& v, int depth) {
  if (depth > 200) fail(ErrorKind::LIMIT, "value nested too deeply to print (more than 200 levels)");
  if (out.size() > kMaxPrintBytes) fail(ErrorKind::LIMIT, "printed value larger than 64 MiB");
  switch (v.kind()) {
    case Kind::STRING: pystr::append_repr(out, v.str()); return;
    case Kind::UNDEFINED: out += "Undefined"; return;
    case Kind::LIST:
    case Kind::TUPLE: {
      bool tup = v.kind() == Kind::TUPLE;
      auto& items = v.list_obj().items;
      out.push_back(tup ? '(' : '[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, items[i], depth + 1);
      }
      if (tup && items.size() == 1) out.push_back(',');
      out.push_back(tup ? ')' : ']');
      return;
    }
    case Kind::DICT:
    case Kind::NAMESPACE: {
      if (v.kind() == Kind::NAMESPACE) out += "<Namespace ";
      out.push_back('{');
      bool first = true;
      for (auto& [k, x] : v.dict_obj().items) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, k, depth + 1);
        out += ": ";
        append_repr(out, x, depth + 1);
      }
      out.push_back('}');
      if (v.kind() == Kind::NAMESPACE) out.push_back('>');
      return;
    }
    case Kind::FUNC: out += "<function " + v.func_obj().name + ">"; return;
    case Kind::LOOP: {
      auto& l = v.loop_obj();
      out += "<LoopContext " + std::to_string(l.index0 + 1) + "/" + std::to_string(l.items.size()) + ">";
      return;
    }
    default: append_str(out, v);
  }
}

std::string to_repr(const Value& v) {
  std::string s;
  append_repr(s, v);
  return s;
}

namespace {
void json_rec(std::string& out, const Value& v, const JsonOptions& o, int level, int depth) {
  if (depth > 500) fail(ErrorKind::VALUE, "Circular reference detected");
  if (out.size() > kMaxPrintBytes) fail(ErrorKind::LIMIT, "JSON value larger than 64 MiB");
  auto newline = [&](int lvl) {
    out.push_back('\n');
    for (int i = 0; i < lvl; ++i) out += o.indent;
  };
  switch (v.kind()) {
    case Kind::NONE: out += "null"; return;
    case Kind::BOOL: out += v.as_bool() ? "true" : "false"; return;
    case Kind::INT: out += std::to_string(v.as_int()); return;
    case Kind::FLOAT: {
      double d = v.as_double();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
      else out += pystr::float_repr(d);
      return;
    }
    case Kind::STRING: pystr::append_json_string(out, v.str(), o.ensure_ascii); return;
    case Kind::LIST:
    case Kind::TUPLE: {
      auto& items = v.list_obj().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        if (o.has_indent) newline(level + 1);
        json_rec(out, items[i], o, level + 1, depth + 1);
      }
      if (o.has_indent) newline(level);
      out.push_back(']');
      return;
    }
    case Kind::DICT: {
      auto& d = v.dict_obj();
      if (d.items.empty()) {
        out += "{}";
        return;
      }
      std::vector<std::pair<std::string, const Value*>> entries;
      entries.reserve(d.items.size());
      for (auto& [k, x] : d.items) {
        std::string key;
        switch (k.kind()) {
          case Kind::STRING: key = k.str(); break;
          case Kind::INT: key = std::to_string(k.as_int()); break;
          case Kind::BOOL: key = k.as_bool() ? "true" : "false"; break;
          case Kind::NONE: key = "null"; break;
          case Kind::FLOAT: key = pystr::float_repr(k.as_double()); break;
          default:
            type_error("keys must be str, int, float, bool or None, not " + std::string(k.type_name()));
        }
        entries.emplace_back(std::move(key), &x);
      }
      if (o.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
      out.push_back('{');
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += o.item_sep;
        if (o.has_indent) newline(level + 1);
        pystr::append_json_string(out, entries[i].first, o.ensure_ascii);
        out += o.key_sep;
        json_rec(out, *entries[i].second, o, level + 1, depth + 1);
      }
      if (o.has_indent) newline(level);
      out.push_back('}');
      return;
    }
    default:
      type_error("Object of type " + std::string(v.type_name()) + " is not JSON serializable");
  }
}
}  // namespace

std::string to_json(const Value& v, const JsonOptions& opt) {
  std::string out;
  json_rec(out, v, opt, 0, 0);
  return out;
}

}  // namespace oxyd::chat::jinja
