// Python methods on str, list/tuple and dict that templates call (`content.split('</think>')`,
// `message.get('x')`, `tools.items()`); the immutable sandbox's unsafe list; argument helpers.
#include <algorithm>
#include <cstring>

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {

const Value* arg(const Args& a, size_t pos, std::string_view kw) {
  if (pos < a.pos.size()) return &a.pos[pos];
  return kw.empty() ? nullptr : a.kwarg(kw);
}
int64_t arg_int(const Args& a, size_t pos, std::string_view kw, int64_t def) {
  const Value* v = arg(a, pos, kw);
  if (!v || v->is_none()) return def;
  if (!v->is_int()) type_error("'" + std::string(v->type_name()) + "' object cannot be interpreted as an integer");
  return v->as_int();
}
bool arg_bool(const Args& a, size_t pos, std::string_view kw, bool def) {
  const Value* v = arg(a, pos, kw);
  return v ? v->truthy() : def;
}
bool arg_str(const Args& a, size_t pos, std::string_view kw, std::string& out) {
  const Value* v = arg(a, pos, kw);
  if (!v || v->is_none()) return false;
  out = to_str(*v);
  return true;
}
void check_args(const Args& a, std::string_view fn, size_t max_pos, std::initializer_list<std::string_view> kws) {
  if (a.pos.size() > max_pos)
    type_error(std::string(fn) + "() takes at most " + std::to_string(max_pos) + " arguments (" +
               std::to_string(a.pos.size()) + " given)");
  for (auto& [k, v] : a.kw)
    if (std::find(kws.begin(), kws.end(), k) == kws.end())
      type_error(std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
}

namespace {

constexpr const char* kStrMethods[] = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith", "replace", "upper",
    "lower", "title", "capitalize", "format", "join", "find", "rfind", "index", "rindex", "count", "isdigit",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "zfill", "center", "ljust",
    "rjust", "partition", "rpartition", "casefold", "swapcase", "removeprefix", "removesuffix"};
constexpr const char* kListMethods[] = {"count", "index", "copy"};
constexpr const char* kDictMethods[] = {"get", "items", "keys", "values", "copy"};
constexpr const char* kListUnsafe[] = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
constexpr const char* kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
bool in(const char* const (&names)[N], std::string_view n) {
  for (const char* x : names)
    if (n == x) return true;
  return false;
}

std::string need_str(const Value& v, const char* what) {
  if (!v.is_string())
    type_error(std::string(what) + " arg must be None or str");
  return v.str();
}

bool starts_or_ends(const std::string& s, const Value& pat, bool start) {
  auto test = [&](const Value& p) {
    if (!p.is_string())
      type_error(std::string(start ? "startswith" : "endswith") +
                 " first arg must be str or a tuple of str, not " + std::string(p.type_name()));
    const std::string& x = p.str();
    if (x.size() > s.size()) return false;
    return start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (pat.kind() == Kind::TUPLE) {
    for (auto& p : pat.list_obj().items)
      if (test(p)) return true;
    return false;
  }
  return test(pat);
}

Value str_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& p : parts) items.push_back(Value::string(std::move(p)));
  return Value::list(std::move(items));
}

// Python str.format with positional/auto/keyword fields and !s/!r; format specs are limited to
// what templates use (none), so a spec is an error rather than a silent misrender.
Value str_format(Runtime& rt, const std::string& fmt, Args& args) {
  std::string out;
  size_t auto_idx = 0;
  int numbering = 0;  // 0 unknown, 1 automatic, 2 manual
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      else fail(ErrorKind::VALUE, "Single '}' encountered in format string");
      out.push_back('}');
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    if (i + 1 >= fmt.size()) fail(ErrorKind::VALUE, "Single '{' encountered in format string");
    size_t e = fmt.find('}', i);
    if (e == std::string::npos) fail(ErrorKind::VALUE, "expected '}' before end of string");
    std::string field = fmt.substr(i + 1, e - i - 1);
    i = e;
    char conv = 's';
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      conv = bang + 1 < field.size() ? field[bang + 1] : 's';
      field.resize(bang);
    }
    if (field.find(':') != std::string::npos) fail(ErrorKind::VALUE, "format specs are not supported in templates");
    const Value* v = nullptr;
    bool digits = !field.empty() && std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (field.empty() || digits) {
      int mode = field.empty() ? 1 : 2;
      if (numbering && numbering != mode)
        fail(ErrorKind::VALUE, "cannot switch from manual field specification to automatic field numbering");
      numbering = mode;
      size_t k = field.empty() ? auto_idx++ : (field.size() > 9 ? SIZE_MAX : std::stoul(field));
      if (k >= args.pos.size()) fail(ErrorKind::INDEX, "tuple index out of range");
      v = &args.pos[k];
    } else {
      v = args.kwarg(field);
      if (!v) fail(ErrorKind::KEY, to_repr(Value::string(field)));
    }
    if (conv == 'r') append_repr(out, *v);
    else append_str(out, *v);
    rt.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value str_method(Runtime& rt, const std::string& s, const std::string& name, Args& a, bool& found) {
  found = true;
  std::string x;
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    check_args(a, name, 1, {});
    bool has = arg_str(a, 0, "", x);
    if (has) need_str(a.pos[0], name.c_str());
    return Value::string(pystr::strip(s, has ? &x : nullptr, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    check_args(a, name, 2, {"sep", "maxsplit"});
    bool has = arg_str(a, 0, "sep", x);
    if (has && x.empty()) fail(ErrorKind::VALUE, "empty separator");
    int64_t maxsplit = arg_int(a, 1, "maxsplit", -1);
    return str_list(name == "split" ? pystr::split(s, has ? &x : nullptr, maxsplit)
                                    : pystr::rsplit(s, has ? &x : nullptr, maxsplit));
  }
  if (name == "splitlines") return str_list(pystr::splitlines(s, arg_bool(a, 0, "keepends", false)));
  if (name == "startswith" || name == "endswith") {
    const Value* p = arg(a, 0, "");
    if (!p) type_error(name + "() takes at least 1 argument (0 given)");
    return Value::boolean(starts_or_ends(s, *p, name == "startswith"));
  }
  if (name == "replace") {
    const Value* o = arg(a, 0, "");
    const Value* n = arg(a, 1, "");
    if (!o || !n) type_error("replace() takes at least 2 arguments");
    if (!o->is_string() || !n->is_string())
      type_error("replace() argument 1 must be str, not " + std::string((!o->is_string() ? o : n)->type_name()));
    std::string r = pystr::replace(s, o->str(), n->str(), arg_int(a, 2, "count", -1));
    rt.check_size(r.size());
    return Value::string(std::move(r));
  }
  if (name == "upper") return Value::string(pystr::upper(s));
  if (name == "lower" || name == "casefold") return Value::string(pystr::lower(s));
  if (name == "title") return Value::string(pystr::title(s));
  if (name == "capitalize") return Value::string(pystr::capitalize(s));
  if (name == "swapcase") {
    std::string out;
    for (char32_t c : pystr::decode(s)) pystr::encode(pystr::is_cased_upper(c) ? pystr::to_lower(c) : pystr::to_upper(c), out);
    return Value::string(std::move(out));
  }
  if (name == "format") return str_format(rt, s, a);
  if (name == "join") {
    const Value* it = arg(a, 0, "");
    if (!it) type_error("str.join() takes exactly one argument (0 given)");
    std::string out;
    size_t i = 0;
    for (auto& v : rt.iterate(*it)) {
      if (!v.is_string())
        type_error("sequence item " + std::to_string(i) + ": expected str instance, " + std::string(v.type_name()) + " found");
      if (i++) out += s;
      out += v.str();
      rt.check_size(out.size());
    }
    return Value::string(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const Value* p = arg(a, 0, "");
    if (!p || !p->is_string()) type_error("must be str, not " + std::string(p ? p->type_name() : "NoneType"));
    const std::string& sub = p->str();
    if (name == "count") {
      if (sub.empty()) return Value::integer(static_cast<int64_t>(pystr::length(s)) + 1);
      int64_t n = 0;
      for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
      return Value::integer(n);
    }
    size_t pos = (name == "find" || name == "index") ? s.find(sub) : s.rfind(sub);
    if (pos == std::string::npos) {
      if (name == "index" || name == "rindex") fail(ErrorKind::VALUE, "substring not found");
      return Value::integer(-1);
    }
    return Value::integer(static_cast<int64_t>(pystr::length(s.substr(0, pos))));
  }
  auto all = [&](bool (*pred)(char32_t)) {
    auto cps = pystr::decode(s);
    return Value::boolean(!cps.empty() && std::all_of(cps.begin(), cps.end(), pred));
  };
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") return all(pystr::is_digit);
  if (name == "isalpha") return all(pystr::is_alpha);
  if (name == "isalnum") return all(pystr::is_alnum);
  if (name == "isspace") return all(pystr::is_space);
  if (name == "islower" || name == "isupper") {
    bool any_cased = false, ok = true;
    for (char32_t c : pystr::decode(s)) {
      if (pystr::is_cased_upper(c)) {
        any_cased = true;
        if (name == "islower") ok = false;
      } else if (pystr::is_cased_lower(c)) {
        any_cased = true;
        if (name == "isupper") ok = false;
      }
    }
    return Value::boolean(any_cased && ok);
  }
  if (name == "zfill" || name == "center" || name == "ljust" || name == "rjust") {
    int64_t width = arg_int(a, 0, "", 0);
    std::string fill = " ";
    if (name != "zfill" && arg_str(a, 1, "", fill) && pystr::length(fill) != 1)
      type_error("The fill character must be exactly one character long");
    if (name == "zfill") fill = "0";
    int64_t len = static_cast<int64_t>(pystr::length(s));
    if (width <= len) return Value::string(s);
    rt.check_size(static_cast<size_t>(width));
    int64_t pad = width - len;
    int64_t left = name == "rjust" || name == "zfill" ? pad : name == "ljust" ? 0 : pad / 2 + (pad & width & 1);
    std::string out;
    for (int64_t i = 0; i < left; ++i) out += fill;
    if (name == "zfill" && !s.empty() && (s[0] == '-' || s[0] == '+')) {
      out = s.substr(0, 1) + out + s.substr(1);
    } else {
      out += s;
    }
    for (int64_t i = 0; i < pad - left; ++i) out += fill;
    return Value::string(std::move(out));
  }
  if (name == "partition" || name == "rpartition") {
    if (!arg_str(a, 0, "", x) || x.empty()) fail(ErrorKind::VALUE, "empty separator");
    size_t pos = name == "partition" ? s.find(x) : s.rfind(x);
    if (pos == std::string::npos)
      return name == "partition" ? Value::tuple({Value::string(s), Value::string(""), Value::string("")})
                                 : Value::tuple({Value::string(""), Value::string(""), Value::string(s)});
    return Value::tuple({Value::string(s.substr(0, pos)), Value::string(x), Value::string(s.substr(pos + x.size()))});
  }
  if (name == "removeprefix" || name == "removesuffix") {
    arg_str(a, 0, "", x);
    bool pre = name == "removeprefix";
    if (x.size() <= s.size() && (pre ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0))
      return Value::string(pre ? s.substr(x.size()) : s.substr(0, s.size() - x.size()));
    return Value::string(s);
  }
  found = false;
  return Value();
}

}  // namespace

bool is_safe_method(Kind kind, std::string_view name) {
  switch (kind) {
    case Kind::STRING: return in(kStrMethods, name);
    case Kind::LIST:
    case Kind::TUPLE: return in(kListMethods, name) && !(kind == Kind::TUPLE && name == "copy");
    case Kind::DICT: return in(kDictMethods, name);
    default: return false;
  }
}

bool is_unsafe_method(Kind kind, std::string_view name) {
  if (kind == Kind::LIST) return in(kListUnsafe, name);
  if (kind == Kind::DICT) return in(kDictUnsafe, name);
  return false;
}

Value Runtime::call_method(const Value& self, const std::string& name, Args& a, bool& found) {
  found = false;
  if (!is_safe_method(self.kind(), name)) return Value();
  if (self.is_string()) {
    if (self.is_markup() && name == "join") {  // Markup.join escapes plain items
      const Value* it = arg(a, 0, "");
      if (it) {
        Args esc;
        std::vector<Value> items;
        for (auto& v : iterate(*it)) items.push_back(v.is_string() && !v.is_markup() ? Value::string(pystr::html_escape(v.str())) : v);
        esc.pos.push_back(Value::list(std::move(items)));
        Value r = str_method(*this, self.str(), name, esc, found);
        return Value::markup(r.str());
      }
    }
    Value r = str_method(*this, self.str(), name, a, found);
    static const char* kMarkupKeeps[] = {"strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize",
                                         "replace", "swapcase", "casefold", "center", "ljust", "rjust", "zfill"};
    if (self.is_markup() && r.is_string())
      for (const char* m : kMarkupKeeps)
        if (name == m) return Value::markup(r.str());
    return r;
  }
  found = true;
  if (self.is_list_like()) {
    auto& items = self.list_obj().items;
    if (name == "copy") return Value::list(items);
    const Value* x = arg(a, 0, "");
    if (!x) type_error(name + "() takes exactly one argument (0 given)");
    if (name == "count") return Value::integer(std::count_if(items.begin(), items.end(), [&](const Value& v) { return py_equal(v, *x); }));
    for (size_t i = 0; i < items.size(); ++i)
      if (py_equal(items[i], *x)) return Value::integer(static_cast<int64_t>(i));
    if (self.kind() == Kind::TUPLE) fail(ErrorKind::VALUE, "tuple.index(x): x not in tuple");
    fail(ErrorKind::VALUE, to_repr(*x) + " is not in list");
  }
  auto& d = self.dict_obj();
  if (name == "get") {
    const Value* k = arg(a, 0, "");
    if (!k) type_error("get expected at least 1 argument, got 0");
    ptrdiff_t i = d.find(*k);
    if (i >= 0) return d.items[i].second;
    const Value* def = arg(a, 1, "");
    return def ? *def : Value::none();
  }
  if (name == "copy") {
    Value c = Value::dict();
    c.dict_obj().items = d.items;
    return c;
  }
  std::vector<Value> out;
  out.reserve(d.items.size());
  for (auto& [k, v] : d.items) {
    if (name == "items") out.push_back(Value::tuple({k, v}));
    else out.push_back(name == "keys" ? k : v);
  }
  return Value::list(std::move(out));
}

}  // namespace oxyd::chat::jinja
