// The Python object protocol as jinja2's sandbox applies it: attribute and item lookup (with
// the undefined values and messages jinja2 produces), iteration, calling, dynamic filter/test
// lookup by name.
#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"
#include "chat/jinja/runtime.h"

namespace oxyd::chat::jinja {
namespace {

struct BoundMethod : FuncObj {
  Value self;
  Value call(Runtime& rt, Args& args) override {
    bool found = false;
    Value r = rt.call_method(self, name, args, found);
    if (!found) type_error("'" + std::string(self.type_name()) + "' object has no method '" + name + "'");
    return r;
  }
};

}  // namespace

Value Runtime::call(const Value& callee, Args& args) {
  switch (callee.kind()) {
    case Kind::FUNC: return callee.func_obj().call(*this, args);
    case Kind::LOOP: {
      LoopObj& l = callee.loop_obj();
      if (!l.recursive_stmt)
        type_error("The loop must have the 'recursive' marker to be called recursively.");
      if (args.pos.size() != 1) type_error("loop() takes exactly one argument");
      if (++call_depth_ > limits_.max_call_depth) {
        --call_depth_;
        fail(ErrorKind::LIMIT, "template exceeded the limit of " + std::to_string(limits_.max_call_depth) +
                                   " nested macro calls");
      }
      struct Guard {
        int& d;
        ~Guard() { --d; }
      } guard{call_depth_};
      const Stmt& st = *static_cast<const Stmt*>(l.recursive_stmt);
      std::string buf;
      std::string* saved_out = out_;
      out_ = &buf;
      struct OutRestore {
        std::string*& o;
        std::string* s;
        ~OutRestore() { o = s; }
      } out_restore{out_, saved_out};
      FramePtr parent = std::static_pointer_cast<Frame>(l.parent_frame.lock());
      FramePtr saved = frame_;
      frame_ = parent ? parent : root_;
      try {
        exec_loop(st, iterate(args.pos[0]), l.depth0 + 1);
      } catch (...) {
        frame_ = saved;
        throw;
      }
      frame_ = saved;
      return Value::string(std::move(buf));
    }
    case Kind::UNDEFINED: callee.fail_undefined();
    default: type_error("'" + std::string(callee.type_name()) + "' object is not callable");
  }
}

bool Runtime::run_test(const std::string& name, const Value& v, Args& args) {
  TestFn t = find_test(name);
  if (!t) fail(ErrorKind::RUNTIME, "No test named " + to_repr(Value::string(name)) + ".");
  check_test_arity(name, args);
  return t(*this, v, args);
}

Value Runtime::run_filter(const std::string& name, const Value& v, Args& args) {
  FilterFn f = find_filter(name);
  if (!f) fail(ErrorKind::RUNTIME, "No filter named " + to_repr(Value::string(name)) + ".");
  check_filter_arity(name, args);
  return f(*this, v, args);
}

// ---- object protocol ----

static Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined(to_repr(Value::string(obj.object_type_repr())) + " has no attribute " +
                          to_repr(Value::string(name)));
}

Value Runtime::getattr(const Value& obj, const std::string& name) {
  Kind k = obj.kind();
  if (k == Kind::UNDEFINED) obj.fail_undefined();
  if (!name.empty() && name[0] == '_' && k != Kind::NAMESPACE)
    return Value::undefined("access to attribute " + to_repr(Value::string(name)) + " of " +
                                to_repr(Value::string(std::string(obj.type_name()))) + " object is unsafe.",
                            ErrorKind::SECURITY);
  if (k == Kind::STRING || k == Kind::LIST || k == Kind::TUPLE || k == Kind::DICT) {
    if (is_safe_method(k, name)) {
      auto m = std::make_shared<BoundMethod>();
      m->name = name;
      m->self = obj;
      return Value::func(std::move(m));
    }
    if (is_unsafe_method(k, name))
      return Value::undefined("access to attribute " + to_repr(Value::string(name)) + " of " +
                                  to_repr(Value::string(std::string(obj.type_name()))) + " object is unsafe.",
                              ErrorKind::SECURITY);
    if (k == Kind::DICT) {
      if (const Value* v = obj.dict_obj().get(name)) return *v;
    }
    return missing_attr(obj, name);
  }
  if (k == Kind::NAMESPACE) {
    if (const Value* v = obj.dict_obj().get(name)) return *v;
    return missing_attr(obj, name);
  }
  if (k == Kind::LOOP) {
    Value r = loop_attr(*this, obj, name);
    if (!r.is_undefined() || r.heap()) return r;
    return missing_attr(obj, name);
  }
  return missing_attr(obj, name);
}

Value Runtime::getitem(const Value& obj, const Value& key) {
  Kind k = obj.kind();
  if (k == Kind::UNDEFINED) obj.fail_undefined();
  auto no_element = [&]() {
    return Value::undefined(obj.object_type_repr() + " has no element " + to_repr(key));
  };
  if (k == Kind::DICT) {
    ptrdiff_t i = obj.dict_obj().find(key);
    if (i >= 0) return obj.dict_obj().items[i].second;
  } else if ((k == Kind::LIST || k == Kind::TUPLE || k == Kind::STRING) && key.is_int()) {
    int64_t idx = key.as_int();
    if (k == Kind::STRING) {
      const std::string& s = obj.str();
      if (pystr::is_ascii(s)) {
        int64_t n = static_cast<int64_t>(s.size());
        if (idx < 0) idx += n;
        if (idx >= 0 && idx < n) return Value::string(std::string(1, s[idx]));
      } else {
        auto cps = pystr::decode(s);
        int64_t n = static_cast<int64_t>(cps.size());
        if (idx < 0) idx += n;
        if (idx >= 0 && idx < n) return Value::string(pystr::encode(cps, idx, idx + 1));
      }
      return no_element();
    }
    auto& items = obj.list_obj().items;
    int64_t n = static_cast<int64_t>(items.size());
    if (idx < 0) idx += n;
    if (idx >= 0 && idx < n) return items[idx];
    return no_element();
  }
  if (key.is_string()) return getattr(obj, key.str());
  return no_element();
}

std::vector<Value> Runtime::iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::LIST:
    case Kind::TUPLE: return v.list_obj().items;
    case Kind::DICT: {
      std::vector<Value> keys;
      keys.reserve(v.dict_obj().items.size());
      for (auto& [k, x] : v.dict_obj().items) keys.push_back(k);
      return keys;
    }
    case Kind::STRING: {
      std::vector<Value> chars;
      const std::string& s = v.str();
      if (pystr::is_ascii(s)) {
        chars.reserve(s.size());
        for (char c : s) chars.push_back(Value::string(std::string(1, c)));
      } else {
        auto cps = pystr::decode(s);
        for (size_t i = 0; i < cps.size(); ++i) chars.push_back(Value::string(pystr::encode(cps, i, i + 1)));
      }
      return chars;
    }
    case Kind::UNDEFINED: return {};
    default: type_error("'" + std::string(v.type_name()) + "' object is not iterable");
  }
}

}  // namespace oxyd::chat::jinja
