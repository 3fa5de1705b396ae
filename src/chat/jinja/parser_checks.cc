// Post-parse passes (see parser_checks.h).
#include "chat/jinja/parser_checks.h"

namespace oxyd::chat::jinja {

Expr::~Expr() {
  // Detach the children into a worklist; each one dies here with no children of its own left.
  std::vector<ExprPtr> work;
  auto take = [&work](Expr& e) {
    for (auto& k : e.kids)
      if (k) work.push_back(std::move(k));
    for (auto& kv : e.kwargs)
      if (kv.second) work.push_back(std::move(kv.second));
    if (e.dyn_args) work.push_back(std::move(e.dyn_args));
    if (e.dyn_kwargs) work.push_back(std::move(e.dyn_kwargs));
  };
  take(*this);
  while (!work.empty()) {
    ExprPtr e = std::move(work.back());
    work.pop_back();
    take(*e);
  }
}

namespace {

[[noreturn]] void too_deep(int line) {
  throw TemplateError(ErrorKind::SYNTAX,
                      "template nesting too deep: more than " + std::to_string(kMaxAstDepth) +
                          " levels of statements and expressions (each .attr, [index], (call), |filter and "
                          "operator in a chain counts one) (line " + std::to_string(line) + ")",
                      line);
}

// Height of an expression tree without recursion; throws once base + height passes the limit.
void check_expr_depth(const Expr* root, int base) {
  if (!root) return;
  std::vector<std::pair<const Expr*, int>> work{{root, base + 1}};
  while (!work.empty()) {
    auto [e, level] = work.back();
    work.pop_back();
    if (level > kMaxAstDepth) too_deep(e->line);
    for (auto& k : e->kids)
      if (k) work.emplace_back(k.get(), level + 1);
    for (auto& kv : e->kwargs)
      if (kv.second) work.emplace_back(kv.second.get(), level + 1);
    if (e->dyn_args) work.emplace_back(e->dyn_args.get(), level + 1);
    if (e->dyn_kwargs) work.emplace_back(e->dyn_kwargs.get(), level + 1);
  }
}
// jinja2 rejects an unknown filter or test at compile time unless it sits in an `if` statement
// or an inline if-expression ("soft" frames), where it fails only if evaluated.
void check_names(const Expr* e, bool soft) {
  if (!e) return;
  if ((e->kind == EK::FILTER && !e->filter) || (e->kind == EK::TEST && !e->test)) {
    if (!soft)
      throw TemplateError(ErrorKind::SYNTAX,
                          std::string("No ") + (e->kind == EK::FILTER ? "filter" : "test") + " named '" + e->name +
                              "'. (line " + std::to_string(e->line) + ")",
                          e->line);
  }
  bool kid_soft = soft || e->kind == EK::COND;
  for (auto& k : e->kids) check_names(k.get(), kid_soft);
  for (auto& [n, k] : e->kwargs) check_names(k.get(), kid_soft);
  check_names(e->dyn_args.get(), kid_soft);
  check_names(e->dyn_kwargs.get(), kid_soft);
}

}  // namespace

// jinja2 decides at compile time whether a macro takes `caller`, `varargs`, `kwargs` by looking
// for those names in its body; scanning the token range is equivalent for our purposes.
void scan_macro_names(Stmt& s, const Program& prog_) {
  s.uses_caller = s.uses_varargs = s.uses_kwargs = false;
  std::vector<const Stmt*> stack{&s};
  std::vector<const Expr*> exprs;
  auto push_body = [&](const Body& b) {
    for (auto& x : b) stack.push_back(x.get());
  };
  auto mark = [&](const Expr* e) { exprs.push_back(e); };
  push_body(s.body);
  bool first = true;
  while (!stack.empty()) {
    const Stmt* x = stack.back();
    stack.pop_back();
    if (!first || x != &s) {
      if (x->expr) mark(x->expr.get());
      if (x->cond) mark(x->cond.get());
      for (auto& [c, b] : x->branches) {
        mark(c.get());
        push_body(b);
      }
      for (auto& [t, e] : x->assigns) mark(e.get());
      for (auto& p : x->params)
        if (p.def) mark(p.def.get());
      if (x->kind != SK::MACRO) {
        push_body(x->body);
      }
      push_body(x->else_body);
    }
    first = false;
  }
  while (!exprs.empty()) {
    const Expr* e = exprs.back();
    exprs.pop_back();
    if (e->kind == EK::NAME) {
      if (e->sym == prog_.sym_caller) s.uses_caller = true;
      if (e->sym == prog_.sym_varargs) s.uses_varargs = true;
      if (e->sym == prog_.sym_kwargs) s.uses_kwargs = true;
    }
    for (auto& k : e->kids)
      if (k) exprs.push_back(k.get());
    for (auto& [n, k] : e->kwargs) exprs.push_back(k.get());
    if (e->dyn_args) exprs.push_back(e->dyn_args.get());
    if (e->dyn_kwargs) exprs.push_back(e->dyn_kwargs.get());
  }
}

// Statement nesting is already bounded by the parser (its recursion), so this recursion is too.
void check_depth(const Body& body, int depth) {
  for (auto& s : body) {
    if (depth + 1 > kMaxAstDepth) too_deep(s->line);
    check_expr_depth(s->expr.get(), depth);
    check_expr_depth(s->cond.get(), depth);
    for (auto& [c, b] : s->branches) {
      check_expr_depth(c.get(), depth);
      check_depth(b, depth + 1);
    }
    for (auto& [t, e] : s->assigns) check_expr_depth(e.get(), depth);
    for (auto& p : s->params) check_expr_depth(p.def.get(), depth);
    check_depth(s->body, depth + 1);
    check_depth(s->else_body, depth + 1);
  }
}

void check_names(const Body& body, bool soft) {
  for (auto& s : body) {
    switch (s->kind) {
      case SK::IF:
        for (auto& [c, b] : s->branches) {
          check_names(c.get(), true);
          check_names(b, true);
        }
        check_names(s->else_body, true);
        break;
      case SK::FOR:
        check_names(s->expr.get(), soft);
        check_names(s->cond.get(), false);
        check_names(s->body, false);
        check_names(s->else_body, false);
        break;
      case SK::SET:
      case SK::EMIT: check_names(s->expr.get(), soft); break;
      case SK::SET_BLOCK:
      case SK::FILTER_BLOCK:
        check_names(s->expr.get(), soft);
        check_names(s->body, false);
        break;
      case SK::MACRO:
        for (auto& p : s->params) check_names(p.def.get(), false);
        check_names(s->body, false);
        break;
      case SK::CALL_BLOCK:
        check_names(s->expr.get(), soft);
        for (auto& p : s->params) check_names(p.def.get(), false);
        check_names(s->body, false);
        break;
      case SK::WITH:
        for (auto& [t, e] : s->assigns) check_names(e.get(), soft);
        check_names(s->body, false);
        break;
      case SK::BODY: check_names(s->body, soft); break;
      default: break;
    }
  }
}

}  // namespace oxyd::chat::jinja
