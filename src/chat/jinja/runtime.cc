// The interpreter (see runtime.h): statements, expressions, scoping (a fresh frame per loop
// iteration, macro call, filter/with block, like jinja2), macros and call blocks, limits.
#include "chat/jinja/runtime.h"

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace oxyd::chat::jinja {
namespace {

// Macros and caller() see the scope they were defined in. The frame holds the macro, so the
// macro holds the frame weakly (no reference cycle); if that scope is gone, the template's
// top-level scope stands in.
struct MacroFunc : FuncObj {
  const Stmt* stmt = nullptr;  // MACRO, or CALL_BLOCK for caller(): params + body
  std::weak_ptr<Frame> closure;
  Value call(Runtime& rt, Args& args) override {
    FramePtr c = closure.lock();
    return rt.call_macro(*stmt, c ? c : rt.root(), args, Value());
  }
};


}  // namespace

Runtime::Runtime(const Program& prog, const Limits& limits, const RenderHooks& hooks)
    : prog_(prog), limits_(limits), hooks_(hooks) {}

void Runtime::check_size(size_t bytes) {
  if (bytes > limits_.max_output_bytes)
    fail(ErrorKind::LIMIT, "template output exceeds the limit of " + std::to_string(limits_.max_output_bytes) + " bytes");
}

void Runtime::tick(int64_t n) {
  iterations_ += n;
  if (iterations_ > limits_.max_loop_iterations)
    fail(ErrorKind::LIMIT, "template exceeded the limit of " + std::to_string(limits_.max_loop_iterations) +
                               " loop iterations");
  if ((iterations_ & 255) == 0 && std::chrono::steady_clock::now() > deadline_)
    fail(ErrorKind::LIMIT, "template rendering exceeded the time limit of " + std::to_string(limits_.max_wall_ms) + " ms");
}

std::string Runtime::render(const std::vector<std::pair<std::string, Value>>& globals) {
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.max_wall_ms);
  auto root = std::make_shared<Frame>();
  root->vars.reserve(prog_.symbols.size());
  for (auto& [name, v] : globals) {
    auto it = prog_.symbols.find(name);
    if (it != prog_.symbols.end()) root->set(it->second, v);
  }
  for (auto& [name, sym] : prog_.symbols) {
    if (root->find(sym)) continue;
    Value g = builtin_global(name);
    if (!g.is_undefined()) root->vars.emplace_back(sym, std::move(g));
  }
  frame_ = root;
  root_ = root;
  std::string out;
  out_ = &out;
  exec(prog_.body);
  out_ = nullptr;
  frame_.reset();
  root_.reset();
  return out;
}

// ---- statements ----

Runtime::Flow Runtime::exec(const Body& body) {
  for (const auto& s : body) {
    Flow f = exec_stmt(*s);
    if (f != Flow::NORMAL) return f;
  }
  return Flow::NORMAL;
}

std::string Runtime::capture(const Body& body, FramePtr frame) {
  std::string buf;
  std::string* saved_out = out_;
  FramePtr saved_frame = frame_;
  out_ = &buf;
  frame_ = std::move(frame);
  try {
    exec(body);
  } catch (...) {
    out_ = saved_out;
    frame_ = saved_frame;
    throw;
  }
  out_ = saved_out;
  frame_ = saved_frame;
  return buf;
}

static FramePtr child_of(const FramePtr& parent) {
  auto f = std::make_shared<Frame>();
  f->parent = parent;
  return f;
}

Runtime::Flow Runtime::exec_stmt(const Stmt& s) {
  try {
    switch (s.kind) {
      case SK::TEXT:
        out_->append(s.text);
        check_size(out_->size());
        return Flow::NORMAL;
      case SK::EMIT: {
        Value v = eval(*s.expr);
        append_str(*out_, v);
        check_size(out_->size());
        return Flow::NORMAL;
      }
      case SK::IF:
        for (const auto& [test, body] : s.branches)
          if (eval(*test).truthy()) return exec(body);
        return exec(s.else_body);
      case SK::FOR: return exec_for(s);
      case SK::SET:
        if (!s.target.attr.empty()) {  // jinja2 checks the namespace before evaluating the value
          const Value* ns = frame_->find(s.target.sym);
          if (!ns || ns->kind() != Kind::NAMESPACE)
            fail(ErrorKind::RUNTIME, "cannot assign attribute on non-namespace object");
        }
        assign(s.target, eval(*s.expr));
        return Flow::NORMAL;
      case SK::SET_BLOCK: {
        // The block body shares the current scope, like jinja2's AssignBlock.
        std::string text = capture(s.body, frame_);
        Value v = Value::string(std::move(text));
        if (s.expr) v = eval_filter(*s.expr, &v);
        assign(s.target, v);
        return Flow::NORMAL;
      }
      case SK::MACRO: {
        auto m = std::make_shared<MacroFunc>();
        m->name = s.name;
        m->stmt = &s;
        m->closure = frame_;
        frame_->set(s.sym, Value::func(std::move(m)));
        return Flow::NORMAL;
      }
      case SK::CALL_BLOCK: {
        auto c = std::make_shared<MacroFunc>();
        c->name = "caller";
        c->stmt = &s;
        c->closure = frame_;
        const Expr& call = *s.expr;
        Args args;
        eval_args(call, args, 1);
        args.kw.emplace_back("caller", Value::func(std::move(c)));
        Value callee = eval(*call.kids[0]);
        Value r = this->call(callee, args);
        append_str(*out_, r);
        check_size(out_->size());
        return Flow::NORMAL;
      }
      case SK::FILTER_BLOCK: {
        Value v = Value::string(capture(s.body, child_of(frame_)));
        Value r = eval_filter(*s.expr, &v);
        append_str(*out_, r);
        check_size(out_->size());
        return Flow::NORMAL;
      }
      case SK::WITH: {
        FramePtr f = child_of(frame_);
        std::vector<Value> vals;
        for (const auto& [t, e] : s.assigns) vals.push_back(eval(*e));
        FramePtr saved = frame_;
        frame_ = f;
        for (size_t i = 0; i < vals.size(); ++i) assign(s.assigns[i].first, vals[i]);
        Flow fl;
        try {
          fl = exec(s.body);
        } catch (...) {
          frame_ = saved;
          throw;
        }
        frame_ = saved;
        return fl;
      }
      case SK::BODY: return exec(s.body);
      case SK::BREAK: return Flow::BREAK;
      case SK::CONTINUE: return Flow::CONTINUE;
    }
  } catch (TemplateError& e) {
    if (e.line() == 0) e.set_line(s.line);
    throw;
  }
  return Flow::NORMAL;
}

Runtime::Flow Runtime::exec_for(const Stmt& s) {
  exec_loop(s, iterate(eval(*s.expr)), 0);
  return Flow::NORMAL;
}

// One level of a for loop over `items` (also the body of `loop(...)` in recursive loops).
void Runtime::exec_loop(const Stmt& s, std::vector<Value> items, int64_t depth0) {
  FramePtr saved = frame_;
  struct Restore {
    Runtime& rt;
    FramePtr saved;
    ~Restore() { rt.frame_ = saved; }
  } restore{*this, saved};
  if (s.cond) {
    std::vector<Value> kept;
    FramePtr f = child_of(saved);
    frame_ = f;
    for (auto& it : items) {
      tick();
      f->vars.clear();
      assign(s.target, it);
      if (eval(*s.cond).truthy()) kept.push_back(it);
    }
    frame_ = saved;
    items = std::move(kept);
  }
  if (items.empty()) {
    frame_ = child_of(saved);
    exec(s.else_body);
    return;
  }
  auto loop = std::make_shared<LoopObj>();
  loop->items = std::move(items);
  loop->depth0 = depth0;
  if (s.recursive) {
    loop->recursive_stmt = &s;
    loop->parent_frame = saved;
  }
  Value loop_v = Value::loop(loop);
  FramePtr f = child_of(saved);
  for (size_t i = 0; i < loop->items.size(); ++i) {
    tick();
    if (f.use_count() > 1) f = child_of(saved);  // a macro kept the previous iteration's scope
    f->vars.clear();
    frame_ = f;
    loop->index0 = i;
    f->vars.emplace_back(prog_.sym_loop, loop_v);
    assign(s.target, loop->items[i]);
    Flow fl = exec(s.body);
    frame_ = saved;
    if (fl == Flow::BREAK) break;
  }
}

void Runtime::assign(const Target& t, const Value& v) {
  if (!t.attr.empty()) {
    const Value* ns = frame_->find(t.sym);
    if (!ns || ns->kind() != Kind::NAMESPACE)
      fail(ErrorKind::RUNTIME, "cannot assign attribute on non-namespace object");
    if (!t.attr.empty() && t.attr[0] == '_')
      fail(ErrorKind::SECURITY, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got " +
                                    to_repr(Value::string(t.attr)) + ". Please rename the attribute.");
    ns->dict_obj().set(Value::string(t.attr), v);
    return;
  }
  if (t.items.empty()) {
    frame_->set(t.sym, v);
    return;
  }
  std::vector<Value> vals = iterate(v);
  if (vals.size() < t.items.size())
    fail(ErrorKind::VALUE, "not enough values to unpack (expected " + std::to_string(t.items.size()) + ", got " +
                               std::to_string(vals.size()) + ")");
  if (vals.size() > t.items.size())
    fail(ErrorKind::VALUE, "too many values to unpack (expected " + std::to_string(t.items.size()) + ")");
  for (size_t i = 0; i < vals.size(); ++i) assign(t.items[i], vals[i]);
}

Value Runtime::call_macro(const Stmt& m, const FramePtr& closure, Args& args, const Value& caller) {
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    fail(ErrorKind::LIMIT, "template exceeded the limit of " + std::to_string(limits_.max_call_depth) +
                               " nested macro calls");
  }
  struct Guard {
    int& d;
    ~Guard() { --d; }
  } guard{call_depth_};
  tick();
  FramePtr f = child_of(closure);
  const bool is_macro = m.kind == SK::MACRO;
  const std::string& mname = is_macro ? m.name : std::string("caller");
  size_t np = m.params.size();
  std::vector<Value> varargs;
  std::vector<bool> bound(np, false);
  for (size_t i = 0; i < args.pos.size(); ++i) {
    if (i < np) {
      f->set(m.params[i].sym, args.pos[i]);
      bound[i] = true;
    } else if (!is_macro || m.uses_varargs) {
      varargs.push_back(args.pos[i]);
    } else {
      type_error("macro '" + mname + "' takes not more than " + std::to_string(np) + " argument(s)");
    }
  }
  Value kwargs = Value::dict();
  Value caller_v = caller;
  for (auto& [k, v] : args.kw) {
    size_t j = 0;
    while (j < np && m.params[j].name != k) ++j;
    if (j < np) {
      if (bound[j]) type_error("macro '" + mname + "' got multiple values for argument '" + k + "'");
      f->set(m.params[j].sym, v);
      bound[j] = true;
    } else if (k == "caller" && is_macro && m.uses_caller) {
      caller_v = v;
    } else if (!is_macro || m.uses_kwargs) {
      kwargs.dict_obj().set(Value::string(k), v);
    } else {
      type_error("macro '" + mname + "' takes no keyword argument '" + k + "'");
    }
  }
  FramePtr saved = frame_;
  frame_ = f;
  try {
    for (size_t i = 0; i < np; ++i) {
      if (bound[i]) continue;
      if (m.params[i].def) f->set(m.params[i].sym, eval(*m.params[i].def));
      else f->set(m.params[i].sym, Value::undefined("parameter " + to_repr(Value::string(m.params[i].name)) + " was not provided"));
    }
  } catch (...) {
    frame_ = saved;
    throw;
  }
  frame_ = saved;
  if (is_macro && m.uses_caller) f->set(prog_.sym_caller, caller_v);
  if (!is_macro || m.uses_varargs) f->set(prog_.sym_varargs, Value::tuple(std::move(varargs)));
  if (!is_macro || m.uses_kwargs) f->set(prog_.sym_kwargs, kwargs);
  return Value::string(capture(m.body, f));
}

// ---- expressions ----

Value Runtime::lookup(const Expr& e) {
  if (const Value* v = frame_->find(e.sym)) return *v;
  return Value::undefined_name(e.name);
}

void Runtime::eval_args(const Expr& e, Args& args, size_t first_kid) {
  for (size_t i = first_kid; i < e.kids.size(); ++i) args.pos.push_back(eval(*e.kids[i]));
  for (auto& [k, x] : e.kwargs) args.kw.emplace_back(k, eval(*x));
  if (e.dyn_args)
    for (auto& v : iterate(eval(*e.dyn_args))) args.pos.push_back(v);
  if (e.dyn_kwargs) {
    Value d = eval(*e.dyn_kwargs);
    if (d.kind() != Kind::DICT) type_error("jinja2.sandbox.SandboxedEnvironment.call() argument after ** must be a mapping, not " +
                                         std::string(d.type_name()));
    for (auto& [k, v] : d.dict_obj().items) args.kw.emplace_back(to_str(k), v);
  }
}

Value Runtime::eval_call(const Expr& e) {
  const Expr& callee = *e.kids[0];
  Args args;
  if (callee.kind == EK::GETATTR) {
    Value obj = eval(*callee.kids[0]);
    Kind k = obj.kind();
    if ((k == Kind::STRING || k == Kind::LIST || k == Kind::TUPLE || k == Kind::DICT) && is_safe_method(k, callee.name)) {
      eval_args(e, args, 1);
      bool found = false;
      Value r = call_method(obj, callee.name, args, found);
      if (found) return r;
    }
    Value fn = getattr(obj, callee.name);
    if (args.pos.empty() && args.kw.empty()) eval_args(e, args, 1);
    return call(fn, args);
  }
  Value fn = eval(callee);
  eval_args(e, args, 1);
  return call(fn, args);
}

Value Runtime::eval_filter(const Expr& e, const Value* input) {
  // kids[0] is the filtered expression, or the previous filter of a chain, or null at the start
  // of a filter block / block set chain, whose input is `input`.
  Value v;
  if (e.kids[0]) v = e.kids[0]->kind == EK::FILTER ? eval_filter(*e.kids[0], input) : eval(*e.kids[0]);
  else if (input) v = *input;
  if (!e.filter) fail(ErrorKind::RUNTIME, "No filter named '" + e.name + "' found.");
  Args args;
  eval_args(e, args, 1);
  check_filter_arity(e.name, args);
  return e.filter(*this, v, args);
}

Value Runtime::eval(const Expr& e) {
  // The parser bounds one template's depth; macro recursion (max_call_depth) multiplies it.
  if (++eval_depth_ > kMaxEvalDepth) {
    --eval_depth_;
    fail(ErrorKind::LIMIT, "template evaluation nested deeper than " + std::to_string(kMaxEvalDepth) + " levels");
  }
  struct Guard {
    int& d;
    ~Guard() { --d; }
  } guard{eval_depth_};
  switch (e.kind) {
    case EK::CONST: return e.value;
    case EK::NAME: return lookup(e);
    case EK::LIST:
    case EK::TUPLE: {
      std::vector<Value> items;
      items.reserve(e.kids.size());
      for (auto& k : e.kids) items.push_back(eval(*k));
      return e.kind == EK::LIST ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case EK::DICT: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
        Value k = eval(*e.kids[i]);
        if (k.kind() == Kind::LIST || k.kind() == Kind::DICT || k.kind() == Kind::NAMESPACE)
          type_error("unhashable type: '" + std::string(k.type_name()) + "'");
        d.dict_obj().set(k, eval(*e.kids[i + 1]));
      }
      return d;
    }
    case EK::GETATTR: return getattr(eval(*e.kids[0]), e.name);
    case EK::GETITEM: {
      Value obj = eval(*e.kids[0]);
      const Expr& idx = *e.kids[1];
      if (idx.kind == EK::SLICE) {
        Value parts[3];
        for (int i = 0; i < 3; ++i) parts[i] = idx.kids[i] ? eval(*idx.kids[i]) : Value::none();
        if (obj.is_undefined()) obj.fail_undefined();
        return slice_value(*this, obj, parts[0], parts[1], parts[2]);
      }
      return getitem(obj, eval(idx));
    }
    case EK::SLICE: type_error("slice outside of a subscript");
    case EK::BINOP: {
      Value a = eval(*e.kids[0]);
      Value b = eval(*e.kids[1]);
      return binary_op(*this, e.op, a, b);
    }
    case EK::NEG:
    case EK::POS: {
      Value v = eval(*e.kids[0]);
      if (v.is_undefined()) v.fail_undefined();
      if (v.kind() == Kind::FLOAT) return Value::number(e.kind == EK::NEG ? -v.as_double() : v.as_double());
      if (v.is_int()) {
        if (e.kind == EK::POS) return Value::integer(v.as_int());
        if (v.as_int() == INT64_MIN) fail(ErrorKind::OVERFLOW, "integer overflow");
        return Value::integer(-v.as_int());
      }
      type_error(std::string("bad operand type for unary ") + (e.kind == EK::NEG ? "-" : "+") + ": '" +
                 std::string(v.type_name()) + "'");
    }
    case EK::NOT: return Value::boolean(!eval(*e.kids[0]).truthy());
    case EK::AND: {
      Value a = eval(*e.kids[0]);
      return a.truthy() ? eval(*e.kids[1]) : a;
    }
    case EK::OR: {
      Value a = eval(*e.kids[0]);
      return a.truthy() ? a : eval(*e.kids[1]);
    }
    case EK::COMPARE: {
      Value a = eval(*e.kids[0]);
      for (size_t i = 0; i < e.ops.size(); ++i) {
        Value b = eval(*e.kids[i + 1]);
        bool r = false;
        switch (e.ops[i]) {
          case Op::EQ: r = py_equal(a, b); break;
          case Op::NE: r = !py_equal(a, b); break;
          case Op::LT: r = py_less(a, b, "<"); break;
          case Op::GT: r = py_less(b, a, ">", true); break;
          case Op::LE: r = py_less(a, b, "<=") || py_equal(a, b); break;
          case Op::GE: r = py_less(b, a, ">=", true) || py_equal(a, b); break;
          case Op::IN: r = contains(b, a); break;
          case Op::NOTIN: r = !contains(b, a); break;
          default: break;
        }
        if (!r) return Value::boolean(false);
        a = std::move(b);
      }
      return Value::boolean(true);
    }
    case EK::CONCAT: {
      std::string s;
      for (auto& k : e.kids) append_str(s, eval(*k));
      check_size(s.size());
      return Value::string(std::move(s));
    }
    case EK::COND: {
      if (eval(*e.kids[0]).truthy()) return eval(*e.kids[1]);
      if (e.kids[2]) return eval(*e.kids[2]);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
    case EK::CALL: return eval_call(e);
    case EK::FILTER: return eval_filter(e, nullptr);
    case EK::TEST: {
      Value v = eval(*e.kids[0]);
      if (!e.test) fail(ErrorKind::RUNTIME, "No test named '" + e.name + "' found.");
      Args args;
      eval_args(e, args, 1);
      check_test_arity(e.name, args);
      bool r = e.test(*this, v, args);
      return Value::boolean(e.negated ? !r : r);
    }
  }
  return Value();
}

}  // namespace oxyd::chat::jinja
