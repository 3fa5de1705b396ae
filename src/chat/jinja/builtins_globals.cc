// Global functions of transformers' chat-template environment (range, dict, namespace, joiner,
// raise_exception, strftime_now) and the `loop` object's attributes. Nothing here touches files,
// the environment or the network; strftime_now reads the clock through RenderHooks.
#include <ctime>

#include "chat/jinja/builtins.h"

namespace oxyd::chat::jinja {
namespace {

struct Builtin : FuncObj {
  Value (*fn)(Runtime&, Args&);
  Value call(Runtime& rt, Args& args) override { return fn(rt, args); }
};

Value g_range(Runtime& rt, Args& a) {
  check_args(a, "range", 3, {});
  for (auto& v : a.pos)
    if (!v.is_int()) type_error("'" + std::string(v.type_name()) + "' object cannot be interpreted as an integer");
  if (a.pos.empty()) type_error("range expected at least 1 argument, got 0");
  int64_t start = 0, stop, step = 1;
  if (a.pos.size() == 1) {
    stop = a.pos[0].as_int();
  } else {
    start = a.pos[0].as_int();
    stop = a.pos[1].as_int();
    if (a.pos.size() == 3) step = a.pos[2].as_int();
  }
  if (step == 0) fail(ErrorKind::VALUE, "range() arg 3 must not be zero");
  // jinja2.sandbox.safe_range: at most MAX_RANGE items.
  __int128 n = step > 0 ? (static_cast<__int128>(stop) - start + step - 1) / step
                        : (static_cast<__int128>(start) - stop - step - 1) / -step;
  if (n < 0) n = 0;
  if (n > 100000)
    fail(ErrorKind::OVERFLOW, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  rt.tick(static_cast<int64_t>(n / 64));
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) out.push_back(Value::integer(start + i * step));
  return Value::list(std::move(out));
}

void fill_mapping(Runtime& rt, Value& d, Args& a, const char* fn, bool check_names) {
  if (a.pos.size() > 1) type_error(std::string(fn) + " expected at most 1 argument, got " + std::to_string(a.pos.size()));
  auto put = [&](const Value& k, const Value& v) {
    if (check_names && k.is_string() && !k.str().empty() && k.str()[0] == '_')
      fail(ErrorKind::SECURITY, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got " +
                                    to_repr(k) + ". Please rename the attribute.");
    d.dict_obj().set(k, v);
  };
  if (!a.pos.empty()) {
    const Value& src = a.pos[0];
    if (src.is_undefined()) src.fail_undefined();
    if (src.kind() == Kind::DICT || src.kind() == Kind::NAMESPACE) {
      for (auto& [k, v] : src.dict_obj().items) put(k, v);
    } else {
      size_t i = 0;
      for (auto& item : rt.iterate(src)) {
        std::vector<Value> kv = rt.iterate(item);
        if (kv.size() != 2)
          fail(ErrorKind::VALUE, "dictionary update sequence element #" + std::to_string(i) + " has length " +
                                     std::to_string(kv.size()) + "; 2 is required");
        put(kv[0], kv[1]);
        ++i;
      }
    }
  }
  for (auto& [k, v] : a.kw) put(Value::string(k), v);
}

Value g_dict(Runtime& rt, Args& a) {
  Value d = Value::dict();
  fill_mapping(rt, d, a, "dict", false);
  return d;
}

Value g_namespace(Runtime& rt, Args& a) {
  Value d = Value::namespace_();
  fill_mapping(rt, d, a, "namespace", true);
  return d;
}

Value g_raise(Runtime&, Args& a) {
  const Value* m = arg(a, 0, "message");
  if (!m) type_error("raise_exception() missing 1 required positional argument: 'message'");
  throw TemplateError(ErrorKind::TEMPLATE, to_str(*m));
}

Value g_strftime_now(Runtime& rt, Args& a) {
  const Value* f = arg(a, 0, "format");
  if (!f) type_error("strftime_now() missing 1 required positional argument: 'format'");
  if (!f->is_string()) type_error("strftime() argument 1 must be str, not " + std::string(f->type_name()));
  std::tm tm{};
  if (rt.hooks().now) {
    tm = rt.hooks().now();
  } else {
    std::time_t t = std::time(nullptr);
    localtime_r(&t, &tm);
  }
  const std::string& fmt = f->str();
  if (fmt.size() > 4096) fail(ErrorKind::VALUE, "strftime format too long");
  std::string out(fmt.size() * 8 + 64, '\0');
  size_t n = fmt.empty() ? 0 : std::strftime(out.data(), out.size(), fmt.c_str(), &tm);
  out.resize(n);
  return Value::string(std::move(out));
}

struct Joiner : FuncObj {
  std::string sep;
  bool used = false;
  Value call(Runtime&, Args&) override {
    if (!used) {
      used = true;
      return Value::string("");
    }
    return Value::string(sep);
  }
};

Value g_joiner(Runtime&, Args& a) {
  auto j = std::make_shared<Joiner>();
  j->name = "joiner";
  j->sep = ", ";
  arg_str(a, 0, "sep", j->sep);
  return Value::func(std::move(j));
}

struct LoopMethod : FuncObj {
  std::shared_ptr<LoopObj> loop;
  Value call(Runtime&, Args& a) override {
    if (name == "cycle") {
      if (a.pos.empty()) type_error("no items for cycling given");
      return a.pos[loop->index0 % a.pos.size()];
    }
    Value cur = Value::list(a.pos);  // changed(*values)
    if (!loop->has_changed || !py_equal(cur, loop->last_changed)) {
      loop->has_changed = true;
      loop->last_changed = cur;
      return Value::boolean(true);
    }
    return Value::boolean(false);
  }
};

template <Value (*F)(Runtime&, Args&)>
Value make(const char* name) {
  auto b = std::make_shared<Builtin>();
  b->name = name;
  b->fn = F;
  return Value::func(std::move(b));
}

}  // namespace

Value builtin_global(std::string_view name) {
  if (name == "range") return make<g_range>("range");
  if (name == "dict") return make<g_dict>("dict");
  if (name == "namespace") return make<g_namespace>("namespace");
  if (name == "raise_exception") return make<g_raise>("raise_exception");
  if (name == "strftime_now") return make<g_strftime_now>("strftime_now");
  if (name == "joiner") return make<g_joiner>("joiner");
  return Value();
}

Value loop_attr(Runtime& rt, const Value& loop_v, const std::string& name) {
  LoopObj& l = loop_v.loop_obj();
  int64_t i = static_cast<int64_t>(l.index0), n = static_cast<int64_t>(l.items.size());
  if (name == "index") return Value::integer(i + 1);
  if (name == "index0") return Value::integer(i);
  if (name == "revindex") return Value::integer(n - i);
  if (name == "revindex0") return Value::integer(n - i - 1);
  if (name == "first") return Value::boolean(i == 0);
  if (name == "last") return Value::boolean(i == n - 1);
  if (name == "length") return Value::integer(n);
  if (name == "depth") return Value::integer(l.depth0 + 1);
  if (name == "depth0") return Value::integer(l.depth0);
  if (name == "previtem") return i > 0 ? l.items[i - 1] : Value::undefined("there is no previous item");
  if (name == "nextitem") return i + 1 < n ? l.items[i + 1] : Value::undefined("there is no next item");
  if (name == "cycle" || name == "changed") {
    auto m = std::make_shared<LoopMethod>();
    m->name = name;
    m->loop = std::static_pointer_cast<LoopObj>(loop_v.heap());
    return Value::func(std::move(m));
  }
  (void)rt;
  return Value();
}

}  // namespace oxyd::chat::jinja
