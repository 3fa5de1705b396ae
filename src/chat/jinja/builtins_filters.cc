// jinja2's default filters as chat templates use them, plus transformers' tojson override
// (json.dumps with ensure_ascii=False, optional indent/separators/sort_keys).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {
namespace {

std::string soft_str(const Value& v) { return to_str(v); }

Value f_tojson(Runtime& rt, const Value& v, Args& a) {
  JsonOptions o;
  o.ensure_ascii = arg_bool(a, 0, "ensure_ascii", false);
  if (const Value* ind = arg(a, 1, "indent"); ind && !ind->is_none()) {
    o.has_indent = true;
    if (ind->is_string()) o.indent = ind->str();
    else if (ind->is_int()) o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(ind->as_int(), 0, 1024)), ' ');
    else type_error("indent must be None, an int or a str");
    o.item_sep = ",";
  }
  if (const Value* sep = arg(a, 2, "separators"); sep && !sep->is_none()) {
    std::vector<Value> parts = rt.iterate(*sep);
    if (parts.size() != 2) fail(ErrorKind::VALUE, "too many values to unpack (expected 2)");
    o.item_sep = to_str(parts[0]);
    o.key_sep = to_str(parts[1]);
  }
  o.sort_keys = arg_bool(a, 3, "sort_keys", false);
  std::string out = to_json(v, o);
  rt.check_size(out.size());
  return Value::string(std::move(out));
}

int64_t py_len(const Value& v) {
  switch (v.kind()) {
    case Kind::STRING: return static_cast<int64_t>(pystr::length(v.str()));
    case Kind::LIST:
    case Kind::TUPLE: return static_cast<int64_t>(v.list_obj().items.size());
    case Kind::DICT: return static_cast<int64_t>(v.dict_obj().items.size());
    case Kind::UNDEFINED: return 0;
    default: type_error("object of type '" + std::string(v.type_name()) + "' has no len()");
  }
}

Value f_length(Runtime&, const Value& v, Args&) { return Value::integer(py_len(v)); }
Value f_string(Runtime&, const Value& v, Args&) { return Value::string(soft_str(v)); }
Value f_safe(Runtime&, const Value& v, Args&) { return Value::markup(soft_str(v)); }
// soft_str keeps a Markup a Markup, and Markup's str methods return Markup.
Value same_kind(const Value& like, std::string s) {
  return like.is_markup() ? Value::markup(std::move(s)) : Value::string(std::move(s));
}
Value f_upper(Runtime&, const Value& v, Args&) { return same_kind(v, pystr::upper(soft_str(v))); }
Value f_lower(Runtime&, const Value& v, Args&) { return same_kind(v, pystr::lower(soft_str(v))); }
Value f_capitalize(Runtime&, const Value& v, Args&) { return Value::string(pystr::capitalize(soft_str(v))); }
Value f_title(Runtime&, const Value& v, Args&) {
  // jinja2's do_title capitalises after whitespace/brackets/hyphens rather than str.title().
  std::string out;
  bool start = true;
  for (char32_t c : pystr::decode(soft_str(v))) {
    pystr::encode(start ? pystr::to_upper(c) : pystr::to_lower(c), out);
    start = pystr::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || c == '_';
  }
  return Value::string(std::move(out));
}
Value f_trim(Runtime&, const Value& v, Args& a) {
  std::string chars;
  bool has = arg_str(a, 0, "chars", chars);
  return same_kind(v, pystr::strip(soft_str(v), has ? &chars : nullptr, true, true));
}
Value f_replace(Runtime& rt, const Value& v, Args& a) {
  std::string o, n;
  if (!arg_str(a, 0, "old", o) || !arg_str(a, 1, "new", n)) type_error("replace() missing required arguments");
  std::string r = pystr::replace(soft_str(v), o, n, arg_int(a, 2, "count", -1));
  rt.check_size(r.size());
  return Value::string(std::move(r));
}
Value f_escape(Runtime&, const Value& v, Args&) {
  if (v.is_markup()) return v;
  return Value::markup(pystr::html_escape(soft_str(v)));
}
Value f_forceescape(Runtime&, const Value& v, Args&) { return Value::markup(pystr::html_escape(soft_str(v))); }
Value f_default(Runtime&, const Value& v, Args& a) {
  const Value* d = arg(a, 0, "default_value");
  bool boolean = arg_bool(a, 1, "boolean", false);
  if (v.is_undefined() || (boolean && !v.truthy())) return d ? *d : Value::string("");
  return v;
}
Value f_list(Runtime& rt, const Value& v, Args&) { return Value::list(rt.iterate(v)); }
Value f_first(Runtime& rt, const Value& v, Args&) {
  std::vector<Value> items = rt.iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}
Value f_last(Runtime& rt, const Value& v, Args&) {
  Kind k = v.kind();
  if (k != Kind::STRING && k != Kind::LIST && k != Kind::TUPLE && k != Kind::DICT && k != Kind::UNDEFINED)
    type_error("'" + std::string(v.type_name()) + "' object is not reversible");  // next(reversed(seq))
  std::vector<Value> items = rt.iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}
Value f_reverse(Runtime& rt, const Value& v, Args&) {
  if (v.is_string()) {
    auto cps = pystr::decode(v.str());
    std::reverse(cps.begin(), cps.end());
    return Value::string(pystr::encode(cps, 0, cps.size()));
  }
  Kind k = v.kind();
  if (k != Kind::LIST && k != Kind::TUPLE && k != Kind::DICT && k != Kind::UNDEFINED)
    fail(ErrorKind::FILTER_ARGUMENT, "argument must be iterable");
  std::vector<Value> items = rt.iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}
Value f_items(Runtime&, const Value& v, Args&) {
  if (v.is_undefined()) return Value::list();
  if (v.kind() != Kind::DICT) type_error("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (auto& [k, x] : v.dict_obj().items) out.push_back(Value::tuple({k, x}));
  return Value::list(std::move(out));
}

// Attribute lookup for `attribute=` arguments: dotted paths and integer components, like
// jinja2's make_attrgetter (items first, via environment.getitem).
Value attr_path(Runtime& rt, Value v, const Value& attribute) {
  if (!attribute.is_string()) return rt.getitem(v, attribute);
  const std::string& path = attribute.str();
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = rt.getitem(v, digits ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : Value::string(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

Value f_join(Runtime& rt, const Value& v, Args& a) {
  std::string sep;
  arg_str(a, 0, "d", sep);
  const Value* attribute = arg(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (auto& item : rt.iterate(v)) {
    if (!first) out += sep;
    first = false;
    append_str(out, attribute && !attribute->is_none() ? attr_path(rt, item, *attribute) : item);
    rt.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_map(Runtime& rt, const Value& v, Args& a) {
  std::vector<Value> items = rt.iterate(v);
  std::vector<Value> out;
  if (a.pos.empty() && !a.kwarg("attribute")) fail(ErrorKind::FILTER_ARGUMENT, "map requires a filter argument");
  if (const Value* attribute = a.kwarg("attribute")) {
    const Value* def = a.kwarg("default");
    for (auto& it : items) {
      Value r = attr_path(rt, it, *attribute);
      out.push_back(r.is_undefined() && def ? *def : r);
    }
    return Value::list(std::move(out));
  }
  if (a.pos.empty()) return Value::list(std::move(items));
  if (a.pos[0].is_undefined())
    fail(ErrorKind::RUNTIME, "No filter named Undefined. (" + a.pos[0].undefined_message() +
                                 "; did you forget to quote the callable name?)");
  std::string name = to_str(a.pos[0]);
  Args rest;
  rest.pos.assign(a.pos.begin() + 1, a.pos.end());
  rest.kw = a.kw;
  for (auto& it : items) {
    Args copy = rest;
    out.push_back(rt.run_filter(name, it, copy));
  }
  return Value::list(std::move(out));
}

Value select_impl(Runtime& rt, const Value& v, Args& a, bool attr_mode, bool keep) {
  size_t off = 0;
  Value attribute;
  if (attr_mode) {
    if (a.pos.empty()) type_error("selectattr/rejectattr need an attribute name");
    attribute = a.pos[0];
    off = 1;
  }
  std::string test;
  bool has_test = a.pos.size() > off;
  if (has_test && a.pos[off].is_undefined())
    fail(ErrorKind::RUNTIME, "No test named Undefined. (" + a.pos[off].undefined_message() +
                                 "; did you forget to quote the callable name?)");
  if (has_test) test = to_str(a.pos[off]);
  Args targs;
  if (has_test) targs.pos.assign(a.pos.begin() + off + 1, a.pos.end());
  targs.kw = a.kw;
  std::vector<Value> out;
  for (auto& it : rt.iterate(v)) {
    Value x = attr_mode ? attr_path(rt, it, attribute) : it;
    bool r;
    if (has_test) {
      Args copy = targs;
      r = rt.run_test(test, x, copy);
    } else {
      r = x.truthy();
    }
    if (r == keep) out.push_back(it);
  }
  return Value::list(std::move(out));
}
Value f_select(Runtime& rt, const Value& v, Args& a) { return select_impl(rt, v, a, false, true); }
Value f_reject(Runtime& rt, const Value& v, Args& a) { return select_impl(rt, v, a, false, false); }
Value f_selectattr(Runtime& rt, const Value& v, Args& a) { return select_impl(rt, v, a, true, true); }
Value f_rejectattr(Runtime& rt, const Value& v, Args& a) { return select_impl(rt, v, a, true, false); }

Value sort_key(Runtime& rt, const Value& item, const Value* attribute, bool case_sensitive) {
  Value k = attribute && !attribute->is_none() ? attr_path(rt, item, *attribute) : item;
  if (!case_sensitive && k.is_string()) return Value::string(pystr::lower(k.str()));
  return k;
}

Value f_sort(Runtime& rt, const Value& v, Args& a) {
  bool reverse = arg_bool(a, 0, "reverse", false);
  bool cs = arg_bool(a, 1, "case_sensitive", false);
  const Value* attribute = arg(a, 2, "attribute");
  std::vector<Value> items = rt.iterate(v);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& it : items) keyed.emplace_back(sort_key(rt, it, attribute, cs), it);
  std::stable_sort(keyed.begin(), keyed.end(), [&](auto& x, auto& y) {
    return reverse ? py_less(y.first, x.first) : py_less(x.first, y.first);
  });
  std::vector<Value> out;
  for (auto& [k, it] : keyed) out.push_back(it);
  return Value::list(std::move(out));
}

Value f_dictsort(Runtime& rt, const Value& v, Args& a) {
  if (v.kind() != Kind::DICT) {
    if (v.is_undefined()) v.fail_undefined();
    type_error("'" + std::string(v.type_name()) + "' object has no attribute 'items'");
  }
  bool cs = arg_bool(a, 0, "case_sensitive", false);
  std::string by = "key";
  arg_str(a, 1, "by", by);
  bool reverse = arg_bool(a, 2, "reverse", false);
  if (by != "key" && by != "value") fail(ErrorKind::RUNTIME, "You can only sort by either 'key' or 'value'");
  std::vector<std::pair<Value, Value>> items = v.dict_obj().items;
  auto key = [&](const std::pair<Value, Value>& p) { return sort_key(rt, by == "key" ? p.first : p.second, nullptr, cs); };
  std::stable_sort(items.begin(), items.end(), [&](auto& x, auto& y) {
    return reverse ? py_less(key(y), key(x)) : py_less(key(x), key(y));
  });
  std::vector<Value> out;
  for (auto& [k, x] : items) out.push_back(Value::tuple({k, x}));
  return Value::list(std::move(out));
}

Value f_unique(Runtime& rt, const Value& v, Args& a) {
  bool cs = arg_bool(a, 0, "case_sensitive", false);
  const Value* attribute = arg(a, 1, "attribute");
  std::vector<Value> seen, out;
  for (auto& it : rt.iterate(v)) {
    Value k = sort_key(rt, it, attribute, cs);
    bool dup = false;
    for (auto& s : seen)
      if (py_equal(s, k)) dup = true;
    if (!dup) {
      seen.push_back(k);
      out.push_back(it);
    }
  }
  return Value::list(std::move(out));
}

Value minmax(Runtime& rt, const Value& v, Args& a, bool is_max) {
  bool cs = arg_bool(a, 0, "case_sensitive", false);
  const Value* attribute = arg(a, 1, "attribute");
  std::vector<Value> items = rt.iterate(v);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  size_t best = 0;
  Value bk = sort_key(rt, items[0], attribute, cs);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = sort_key(rt, items[i], attribute, cs);
    if (is_max ? py_less(bk, k) : py_less(k, bk)) {
      best = i;
      bk = k;
    }
  }
  return items[best];
}
Value f_max(Runtime& rt, const Value& v, Args& a) { return minmax(rt, v, a, true); }
Value f_min(Runtime& rt, const Value& v, Args& a) { return minmax(rt, v, a, false); }

Value f_sum(Runtime& rt, const Value& v, Args& a) {
  const Value* attribute = arg(a, 0, "attribute");
  const Value* start = arg(a, 1, "start");
  Value acc = start ? *start : Value::integer(0);
  for (auto& it : rt.iterate(v)) acc = binary_op(rt, Op::ADD, acc, attribute && !attribute->is_none() ? attr_path(rt, it, *attribute) : it);
  return acc;
}

Value f_abs(Runtime&, const Value& v, Args&) {
  if (v.kind() == Kind::FLOAT) return Value::number(std::fabs(v.as_double()));
  if (v.is_int()) {
    if (v.as_int() == INT64_MIN) fail(ErrorKind::OVERFLOW, "integer overflow");
    return Value::integer(std::llabs(v.as_int()));
  }
  type_error("bad operand type for abs(): '" + std::string(v.type_name()) + "'");
}

bool parse_float(std::string s, double& out) {
  s = pystr::strip(s, nullptr, true, true);
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 1])))
      continue;
    t.push_back(s[i]);
  }
  if (t.empty()) return false;
  std::string low = pystr::lower(t);
  std::string body = (low[0] == '+' || low[0] == '-') ? low.substr(1) : low;
  if (body == "inf" || body == "infinity" || body == "nan") {
    out = body == "nan" ? NAN : (low[0] == '-' ? -INFINITY : INFINITY);
    return true;
  }
  for (char c : body)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

Value f_float(Runtime&, const Value& v, Args& a) {
  const Value* d = arg(a, 0, "default");
  Value def = d ? *d : Value::number(0.0);
  if (v.is_number()) return Value::number(v.as_double());
  double x;
  if (v.is_string() && parse_float(v.str(), x)) return Value::number(x);
  return def;
}

Value f_int(Runtime&, const Value& v, Args& a) {
  const Value* d = arg(a, 0, "default");
  Value def = d ? *d : Value::integer(0);
  int64_t base = arg_int(a, 1, "base", 10);
  if (v.is_int()) return Value::integer(v.as_int());
  if (v.kind() == Kind::FLOAT) {
    double x = v.as_double();
    if (!std::isfinite(x) || std::fabs(x) > 9.2e18) return def;
    return Value::integer(static_cast<int64_t>(x));
  }
  if (!v.is_string()) return def;
  std::string s = pystr::strip(v.str(), nullptr, true, true);
  std::string t;
  for (char c : s)
    if (c != '_') t.push_back(c);
  if (!t.empty() && base >= 2 && base <= 36) {
    char* end = nullptr;
    errno = 0;
    long long r = std::strtoll(t.c_str(), &end, static_cast<int>(base));
    if (end == t.c_str() + t.size() && errno == 0 && !std::isspace(static_cast<unsigned char>(t[0]))) return Value::integer(r);
  }
  double x;
  if (parse_float(v.str(), x) && std::isfinite(x) && std::fabs(x) < 9.2e18) return Value::integer(static_cast<int64_t>(x));
  return def;
}

Value f_round(Runtime&, const Value& v, Args& a) {
  int64_t precision = arg_int(a, 0, "precision", 0);
  std::string method = "common";
  arg_str(a, 1, "method", method);
  if (method != "common" && method != "ceil" && method != "floor")
    type_error("method must be common, ceil or floor");
  if (!v.is_number()) type_error("type " + std::string(v.type_name()) + " doesn't define __round__ method");
  if (method == "common") {
    if (v.is_int()) return Value::integer(v.as_int());
    double x = v.as_double();
    if (!std::isfinite(x)) return Value::number(x);
    if (precision == 0) return Value::number(std::nearbyint(x));
    if (precision < 0 || precision > 300) return Value::number(precision > 0 ? x : 0.0);
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
    return Value::number(std::strtod(buf, nullptr));
  }
  double p = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * p;
  return Value::number((method == "ceil" ? std::ceil(x) : std::floor(x)) / p);
}

Value f_indent(Runtime& rt, const Value& v, Args& a) {
  std::string ind;
  const Value* w = arg(a, 0, "width");
  if (w && w->is_string()) ind = w->str();
  else ind = std::string(static_cast<size_t>(std::clamp<int64_t>(w ? arg_int(a, 0, "width", 4) : 4, 0, 4096)), ' ');
  bool first = arg_bool(a, 1, "first", false);
  bool blank = arg_bool(a, 2, "blank", false);
  if (v.is_undefined()) v.fail_undefined();  // do_indent does `s += "\n"` on the raw value
  if (v.kind() == Kind::LIST) fail(ErrorKind::ATTRIBUTE, "'list' object has no attribute 'splitlines'");  // list += str extends it
  if (v.kind() == Kind::TUPLE) type_error("can only concatenate tuple (not \"str\") to tuple");
  if (!v.is_string())
    type_error("unsupported operand type(s) for +=: '" + std::string(v.type_name()) + "' and 'str'");
  std::string s = v.str() + "\n";
  std::vector<std::string> lines = pystr::splitlines(s);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + ind;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += ind;
      rv += lines[i];
      rt.check_size(rv.size());
    }
  }
  if (first) rv = ind + rv;
  return Value::string(std::move(rv));
}

Value f_center(Runtime& rt, const Value& v, Args& a) {
  Args b;
  b.pos.push_back(Value::integer(arg_int(a, 0, "width", 80)));
  bool found;
  return rt.call_method(Value::string(soft_str(v)), "center", b, found);
}

Value f_wordcount(Runtime&, const Value& v, Args&) {
  int64_t n = 0;
  bool in = false;
  for (char32_t c : pystr::decode(soft_str(v))) {
    bool w = pystr::is_alnum(c) || c == '_' || c >= 0x80;
    if (w && !pystr::is_space(c) && !in) ++n;
    in = w && !pystr::is_space(c);
  }
  return Value::integer(n);
}

Value f_batch(Runtime& rt, const Value& v, Args& a) {
  int64_t n = arg_int(a, 0, "linecount", 1);
  if (n <= 0) fail(ErrorKind::VALUE, "batch size must be positive");
  const Value* fill = arg(a, 1, "fill_with");
  std::vector<Value> out, cur;
  for (auto& it : rt.iterate(v)) {
    cur.push_back(it);
    if (static_cast<int64_t>(cur.size()) == n) {
      out.push_back(Value::list(std::move(cur)));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none())
      while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*fill);
    out.push_back(Value::list(std::move(cur)));
  }
  return Value::list(std::move(out));
}

Value f_attr(Runtime& rt, const Value& v, Args& a) {
  std::string name;
  if (!arg_str(a, 0, "name", name)) type_error("attr() missing 1 required positional argument: 'name'");
  return rt.getattr(v, name);
}

Value f_format(Runtime& rt, const Value& v, Args& a) {
  Value args = a.pos.size() == 1 ? a.pos[0] : Value::tuple(a.pos);
  if (a.pos.size() == 1 && a.pos[0].kind() != Kind::TUPLE) args = a.pos[0];
  return binary_op(rt, Op::MOD, Value::string(soft_str(v)), args);
}

Value f_truncate(Runtime&, const Value& v, Args& a) {
  int64_t length = arg_int(a, 0, "length", 255);
  bool killwords = arg_bool(a, 1, "killwords", false);
  std::string end = "...";
  arg_str(a, 2, "end", end);
  int64_t leeway = arg_int(a, 3, "leeway", 5);
  int64_t end_len0 = static_cast<int64_t>(pystr::length(end));
  if (length < end_len0)
    fail(ErrorKind::ASSERTION, "expected length >= " + std::to_string(end_len0) + ", got " + std::to_string(length));
  if (leeway < 0) fail(ErrorKind::ASSERTION, "expected leeway >= 0, got " + std::to_string(leeway));
  if (v.is_undefined()) return v;
  if (!v.is_string()) type_error("object of type '" + std::string(v.type_name()) + "' has no len()");
  auto cps = pystr::decode(soft_str(v));
  int64_t n = static_cast<int64_t>(cps.size());
  int64_t end_len = static_cast<int64_t>(pystr::length(end));
  if (n <= length + leeway) return Value::string(soft_str(v));
  int64_t cut = std::max<int64_t>(0, length - end_len);
  if (killwords) return Value::string(pystr::encode(cps, 0, cut) + end);
  std::string head = pystr::encode(cps, 0, cut);
  size_t sp = head.rfind(' ');
  if (sp != std::string::npos) head.resize(sp);
  return Value::string(head + end);
}

Value f_pprint(Runtime&, const Value& v, Args&) { return Value::string(to_repr(v)); }

// Each filter's Python signature in jinja2 (or transformers for tojson): function name, hidden
// leading arguments (environment/context), parameter names after the value, how many of them are
// required, and whether it takes *args/**kwargs — used for jinja2's exact TypeErrors.
struct Entry {
  const char* name;
  FilterFn fn;
  const char* pyname;
  int hidden;
  std::initializer_list<const char*> params;
  int required;
  bool variadic;
};
const Entry kFilters[] = {
    {"tojson", f_tojson, "_cached_compile_jinja_template.<locals>.tojson", 0, {"ensure_ascii", "indent", "separators", "sort_keys"}, 0, false},
    {"length", f_length, "len", 0, {}, 0, false},
    {"count", f_length, "len", 0, {}, 0, false},
    {"string", f_string, "soft_str", 0, {}, 0, false},
    {"safe", f_safe, "do_mark_safe", 0, {}, 0, false},
    {"upper", f_upper, "do_upper", 0, {}, 0, false},
    {"lower", f_lower, "do_lower", 0, {}, 0, false},
    {"capitalize", f_capitalize, "do_capitalize", 0, {}, 0, false},
    {"title", f_title, "do_title", 0, {}, 0, false},
    {"trim", f_trim, "do_trim", 0, {"chars"}, 0, false},
    {"replace", f_replace, "do_replace", 1, {"old", "new", "count"}, 2, false},
    {"escape", f_escape, "escape", 0, {}, 0, false},
    {"e", f_escape, "escape", 0, {}, 0, false},
    {"forceescape", f_forceescape, "do_forceescape", 0, {}, 0, false},
    {"default", f_default, "do_default", 0, {"default_value", "boolean"}, 0, false},
    {"d", f_default, "do_default", 0, {"default_value", "boolean"}, 0, false},
    {"list", f_list, "sync_do_list", 0, {}, 0, false},
    {"first", f_first, "sync_do_first", 1, {}, 0, false},
    {"last", f_last, "do_last", 1, {}, 0, false},
    {"reverse", f_reverse, "do_reverse", 0, {}, 0, false},
    {"items", f_items, "do_items", 0, {}, 0, false},
    {"join", f_join, "sync_do_join", 1, {"d", "attribute"}, 0, false},
    {"map", f_map, "sync_do_map", 1, {}, 0, true},
    {"select", f_select, "sync_do_select", 1, {}, 0, true},
    {"reject", f_reject, "sync_do_reject", 1, {}, 0, true},
    {"selectattr", f_selectattr, "sync_do_selectattr", 1, {}, 0, true},
    {"rejectattr", f_rejectattr, "sync_do_rejectattr", 1, {}, 0, true},
    {"sort", f_sort, "do_sort", 1, {"reverse", "case_sensitive", "attribute"}, 0, false},
    {"dictsort", f_dictsort, "do_dictsort", 0, {"case_sensitive", "by", "reverse"}, 0, false},
    {"unique", f_unique, "sync_do_unique", 1, {"case_sensitive", "attribute"}, 0, false},
    {"max", f_max, "do_max", 1, {"case_sensitive", "attribute"}, 0, false},
    {"min", f_min, "do_min", 1, {"case_sensitive", "attribute"}, 0, false},
    {"sum", f_sum, "sync_do_sum", 1, {"attribute", "start"}, 0, false},
    {"abs", f_abs, "abs", 0, {}, 0, false},
    {"float", f_float, "do_float", 0, {"default"}, 0, false},
    {"int", f_int, "do_int", 0, {"default", "base"}, 0, false},
    {"round", f_round, "do_round", 0, {"precision", "method"}, 0, false},
    {"indent", f_indent, "do_indent", 0, {"width", "first", "blank"}, 0, false},
    {"center", f_center, "do_center", 0, {"width"}, 0, false},
    {"wordcount", f_wordcount, "do_wordcount", 0, {}, 0, false},
    {"batch", f_batch, "do_batch", 0, {"linecount", "fill_with"}, 1, false},
    {"attr", f_attr, "do_attr", 1, {"name"}, 1, false},
    {"format", f_format, "do_format", 0, {}, 0, true},
    {"truncate", f_truncate, "do_truncate", 1, {"length", "killwords", "end", "leeway"}, 0, false},
    {"pprint", f_pprint, "do_pprint", 0, {}, 0, false},
};

const Entry* find_entry(std::string_view name) {
  for (const Entry& e : kFilters)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace

FilterFn find_filter(std::string_view name) {
  const Entry* e = find_entry(name);
  return e ? e->fn : nullptr;
}

void check_filter_arity(std::string_view name, const Args& a) {
  const Entry* e = find_entry(name);
  if (!e || e->variadic) return;
  std::string fn = e->pyname;
  const int np = static_cast<int>(e->params.size());
  const int given = static_cast<int>(a.pos.size());
  if (std::string_view(e->pyname) == "len" || std::string_view(e->pyname) == "abs" ||
      std::string_view(e->pyname) == "escape") {
    if (!a.kw.empty()) type_error(fn + "() takes no keyword arguments");
    if (given > 0) type_error(fn + "() takes exactly one argument (" + std::to_string(given + 1) + " given)");
    return;
  }
  std::vector<bool> bound(np, false);
  for (int i = 0; i < std::min(given, np); ++i) bound[i] = true;
  for (auto& [k, v] : a.kw) {
    int j = 0;
    auto it = e->params.begin();
    while (j < np && k != *it) ++j, ++it;
    if (j == np) type_error(fn + "() got an unexpected keyword argument '" + k + "'");
    if (bound[j]) type_error(fn + "() got multiple values for argument '" + k + "'");
    bound[j] = true;
  }
  const int lo = e->hidden + 1 + e->required, hi = e->hidden + 1 + np;
  if (given > np) {
    std::string takes = lo == hi ? std::to_string(hi) : "from " + std::to_string(lo) + " to " + std::to_string(hi);
    type_error(fn + "() takes " + takes + " positional argument" + (hi == 1 ? "" : "s") + " but " +
               std::to_string(given + 1 + e->hidden) + " were given");
  }
  auto it = e->params.begin();
  for (int j = 0; j < e->required; ++j, ++it)
    if (!bound[j]) type_error(fn + "() missing 1 required positional argument: '" + std::string(*it) + "'");
}

}  // namespace oxyd::chat::jinja
