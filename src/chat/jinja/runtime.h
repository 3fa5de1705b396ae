// The tree-walking interpreter: one Runtime per render call (the Program it walks is shared and
// read-only). Holds the variable frames, the output buffer and the safety budget (loop
// iterations, call depth, output bytes, wall time). Python/jinja2 operation semantics that the
// builtins share (getattr, getitem, iteration, calls, arithmetic) live here too.
#pragma once

#include <chrono>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "chat/jinja/ast.h"

namespace oxyd::chat::jinja {

struct Limits {
  int64_t max_loop_iterations = 1'000'000;  // summed over all loops of one render
  int max_call_depth = 200;                 // nested macro / caller() calls
  size_t max_output_bytes = 32u << 20;      // also caps any single string or list built
  int64_t max_wall_ms = 5'000;
};

struct RenderHooks {
  /// The local date and time strftime_now formats; empty = the real clock.
  std::function<std::tm()> now;
};

struct Frame {
  std::vector<std::pair<int, Value>> vars;
  std::shared_ptr<Frame> parent;
  const Value* find(int sym) const {
    for (const Frame* f = this; f; f = f->parent.get())
      for (auto& [k, v] : f->vars)
        if (k == sym) return &v;
    return nullptr;
  }
  void set(int sym, Value v) {
    for (auto& [k, x] : vars)
      if (k == sym) {
        x = std::move(v);
        return;
      }
    vars.emplace_back(sym, std::move(v));
  }
};
using FramePtr = std::shared_ptr<Frame>;

class Runtime {
 public:
  Runtime(const Program& prog, const Limits& limits, const RenderHooks& hooks);

  /// Renders the whole program with `globals` (name → value) as the template context.
  std::string render(const std::vector<std::pair<std::string, Value>>& globals);

  // Shared operation semantics (used by builtins).
  Value getattr(const Value& obj, const std::string& name);
  Value getitem(const Value& obj, const Value& key);
  /// Python iter() materialised; Undefined iterates empty. Throws TypeError for non-iterables.
  std::vector<Value> iterate(const Value& v);
  Value call(const Value& callee, Args& args);
  Value call_method(const Value& self, const std::string& name, Args& args, bool& found);
  bool run_test(const std::string& name, const Value& v, Args& args);
  Value run_filter(const std::string& name, const Value& v, Args& args);
  void check_size(size_t bytes);
  void tick(int64_t iterations = 1);
  const Program& program() const { return prog_; }
  const FramePtr& root() const { return root_; }
  const RenderHooks& hooks() const { return hooks_; }
  const Limits& limits() const { return limits_; }
  /// Renders a macro/caller body into a string (used by Macro objects).
  Value call_macro(const Stmt& macro, const FramePtr& closure, Args& args, const Value& caller);

 private:
  enum class Flow { NORMAL, BREAK, CONTINUE };
  const Program& prog_;
  const Limits& limits_;
  const RenderHooks& hooks_;
  std::string* out_ = nullptr;
  FramePtr frame_, root_;
  int64_t iterations_ = 0;
  int call_depth_ = 0;
  int eval_depth_ = 0;  // nested eval() calls, across macro calls
  static constexpr int kMaxEvalDepth = 2000;
  std::chrono::steady_clock::time_point deadline_;

  Value eval(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_filter(const Expr& e, const Value* input);
  void eval_args(const Expr& e, Args& args, size_t first_kid);
  Flow exec(const Body& body);
  Flow exec_stmt(const Stmt& s);
  Flow exec_for(const Stmt& s);
  void exec_loop(const Stmt& s, std::vector<Value> items, int64_t depth0);
  void assign(const Target& t, const Value& v);
  std::string capture(const Body& body, FramePtr frame);
  Value lookup(const Expr& e);
};

// Arithmetic with Python semantics (int/float promotion, floor division and modulo, str/list
// concatenation and repetition); throws TypeError/ZeroDivisionError with Python's messages.
Value binary_op(Runtime& rt, Op op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);

}  // namespace oxyd::chat::jinja
