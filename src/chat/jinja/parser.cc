// Recursive-descent parser following jinja2.parser's grammar and precedence:
// condexpr < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary < postfix/filter/test.
// Statements: if, for, set, macro, call, filter, with, block, break/continue (loopcontrols),
// generation (transformers' AssistantTracker). Nesting depth is bounded so hostile input cannot
// exhaust the stack.
#include <cstdlib>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/parser_checks.h"

namespace oxyd::chat::jinja {
namespace {

constexpr int kMaxDepth = 200;

class Parser {
 public:
  Parser(std::vector<Token> toks, Program& prog) : t_(std::move(toks)), prog_(prog) {}

  void run() {
    prog_.sym_loop = intern("loop");
    prog_.sym_caller = intern("caller");
    prog_.sym_varargs = intern("varargs");
    prog_.sym_kwargs = intern("kwargs");
    std::string end;
    prog_.body = parse_body({}, end);
  }

 private:
  std::vector<Token> t_;
  size_t i_ = 0;
  Program& prog_;
  int depth_ = 0;

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& pp) : p(pp) {
      if (++p.depth_ > kMaxDepth) p.error("template nesting too deep (more than 200 levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(const char* op) const { return cur().type == Tok::OP && cur().value == op; }
  bool is_name(const char* n) const { return cur().type == Tok::NAME && cur().value == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::END: return "end of template";
      case Tok::BLOCK_END: return "end of statement block";
      case Tok::VAR_END: return "end of print statement";
      case Tok::DATA: return "template data";
      default: return "'" + t.value + "'";
    }
  }
  [[noreturn]] void error(const std::string& msg) const {
    const Token& t = cur();
    throw TemplateError(ErrorKind::SYNTAX,
                        msg + " (line " + std::to_string(t.line) + ", column " + std::to_string(t.col) + ")", t.line);
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) error(std::string("expected token '") + op + "', got " + describe(cur()));
  }
  std::string expect_name() {
    if (cur().type != Tok::NAME) error("expected token 'name', got " + describe(cur()));
    std::string n = cur().value;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().type != Tok::BLOCK_END) error("expected token 'end of statement block', got " + describe(cur()));
    next();
  }
  int intern(const std::string& name) {
    auto [it, fresh] = prog_.symbols.emplace(name, static_cast<int>(prog_.symbols.size()));
    return it->second;
  }

  ExprPtr mk(EK k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = cur().line;
    return e;
  }

  // ---- statements ----

  // Parses until one of `ends` is the next block tag name; leaves that name in `end` and the
  // cursor after the name (the caller reads the rest of that tag).
  Body parse_body(std::initializer_list<const char*> ends, std::string& end) {
    DepthGuard g(*this);
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == Tok::END) {
        if (ends.size() == 0) return body;
        std::string want;
        for (const char* e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
        error("Unexpected end of template. Jinja was looking for the following tags: " + want + ".");
      }
      if (t.type == Tok::DATA) {
        auto s = std::make_unique<Stmt>();
        s->kind = SK::TEXT;
        s->text = t.value;
        body.push_back(std::move(s));
        next();
      } else if (t.type == Tok::VAR_BEGIN) {
        auto s = std::make_unique<Stmt>();
        s->kind = SK::EMIT;
        s->line = t.line;
        next();
        s->expr = parse_tuple(true, {}, false);
        if (cur().type != Tok::VAR_END) error("expected token 'end of print statement', got " + describe(cur()));
        next();
        body.push_back(std::move(s));
      } else if (t.type == Tok::BLOCK_BEGIN) {
        next();
        if (cur().type != Tok::NAME) error("tag name expected");
        for (const char* e : ends) {
          if (cur().value == e) {
            end = e;
            next();
            return body;
          }
        }
        body.push_back(parse_statement());
      } else {
        error("unexpected " + describe(t));
      }
    }
  }

  StmtPtr new_stmt(SK k) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = cur().line;
    return s;
  }

  StmtPtr parse_statement() {
    DepthGuard g(*this);
    std::string tag = cur().value;
    int line = cur().line;
    next();
    std::string end;
    StmtPtr s;
    if (tag == "if") {
      s = new_stmt(SK::IF);
      while (true) {
        ExprPtr test = parse_tuple(false, {}, false);
        expect_block_end();
        Body b = parse_body({"elif", "else", "endif"}, end);
        s->branches.emplace_back(std::move(test), std::move(b));
        if (end == "elif") continue;
        if (end == "else") {
          expect_block_end();
          s->else_body = parse_body({"endif"}, end);
        }
        break;
      }
    } else if (tag == "for") {
      s = new_stmt(SK::FOR);
      s->target = parse_assign_target(false, {"in"});
      if (!skip_name("in")) error("expected token 'in', got " + describe(cur()));
      s->expr = parse_tuple(false, {"recursive"}, false);
      if (skip_name("if")) s->cond = parse_expression(true);
      s->recursive = skip_name("recursive");
      expect_block_end();
      s->body = parse_body({"endfor", "else"}, end);
      if (end == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"}, end);
      }
    } else if (tag == "set") {
      s = new_stmt(SK::SET);
      s->target = parse_assign_target(true, {});
      if (skip_op("=")) {
        s->expr = parse_tuple(true, {}, false);
      } else {
        s->kind = SK::SET_BLOCK;
        if (!s->target.items.empty() || !s->target.attr.empty()) error("block set needs a plain name target");
        if (is_op("|")) s->expr = parse_filter(nullptr);
        expect_block_end();
        s->body = parse_body({"endset"}, end);
      }
    } else if (tag == "macro") {
      s = new_stmt(SK::MACRO);
      s->name = expect_name();
      s->sym = intern(s->name);
      parse_signature(*s);
      expect_block_end();
      s->body = parse_body({"endmacro"}, end);
      scan_macro_names(*s, prog_);
    } else if (tag == "call") {
      s = new_stmt(SK::CALL_BLOCK);
      if (is_op("(")) parse_signature(*s);
      s->expr = parse_expression(true);
      if (s->expr->kind != EK::CALL) error("expected call");
      expect_block_end();
      s->body = parse_body({"endcall"}, end);
    } else if (tag == "filter") {
      s = new_stmt(SK::FILTER_BLOCK);
      s->expr = parse_filter(nullptr, true);
      expect_block_end();
      s->body = parse_body({"endfilter"}, end);
    } else if (tag == "with") {
      s = new_stmt(SK::WITH);
      while (cur().type != Tok::BLOCK_END) {
        if (!s->assigns.empty()) expect_op(",");
        Target t = parse_assign_target(false, {});
        expect_op("=");
        s->assigns.emplace_back(std::move(t), parse_expression(true));
      }
      expect_block_end();
      s->body = parse_body({"endwith"}, end);
    } else if (tag == "block") {
      s = new_stmt(SK::BODY);
      expect_name();
      skip_name("scoped");
      skip_name("required");
      expect_block_end();
      s->body = parse_body({"endblock"}, end);
      if (cur().type == Tok::NAME) next();
    } else if (tag == "generation") {
      s = new_stmt(SK::BODY);
      expect_block_end();
      s->body = parse_body({"endgeneration"}, end);
    } else if (tag == "break" || tag == "continue") {
      s = new_stmt(tag == "break" ? SK::BREAK : SK::CONTINUE);
    } else {
      --i_;
      error("Encountered unknown tag '" + tag + "'.");
    }
    s->line = line;
    expect_block_end();
    return s;
  }

  void parse_signature(Stmt& s) {
    expect_op("(");
    while (!is_op(")")) {
      if (!s.params.empty()) expect_op(",");
      if (is_op(")")) break;
      MacroParam p;
      p.name = expect_name();
      p.sym = intern(p.name);
      if (skip_op("=")) p.def = parse_expression(true);
      else if (!s.params.empty() && s.params.back().def) error("non-default argument follows default argument");
      s.params.push_back(std::move(p));
    }
    expect_op(")");
  }

  Target parse_assign_target(bool with_namespace, std::initializer_list<const char*> extra_end) {
    Target t;
    if (with_namespace && cur().type == Tok::NAME && peek().type == Tok::OP && peek().value == ".") {
      t.name = expect_name();
      t.sym = intern(t.name);
      next();
      t.attr = expect_name();
      return t;
    }
    std::vector<Target> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (cur().type == Tok::BLOCK_END || is_op(")") || is_op("=")) break;
      bool extra = false;
      for (const char* e : extra_end)
        if (is_name(e)) extra = true;
      if (extra) break;
      items.push_back(parse_simple_target());
      if (is_op(",")) is_tuple = true;
      else break;
    }
    if (items.empty()) error("expected an assignment target, got " + describe(cur()));
    if (!is_tuple) return std::move(items[0]);
    t.items = std::move(items);
    return t;
  }
  Target parse_simple_target() {
    DepthGuard g(*this);
    if (skip_op("(")) {
      Target t = parse_assign_target(false, {});
      expect_op(")");
      return t;
    }
    Target t;
    if (cur().type != Tok::NAME) error("can't assign to " + describe(cur()));
    t.name = expect_name();
    if (t.name == "true" || t.name == "false" || t.name == "none" || t.name == "True" || t.name == "False" ||
        t.name == "None")
      error("can't assign to constant '" + t.name + "'");
    t.sym = intern(t.name);
    return t;
  }

  // ---- expressions ----

  bool tuple_end(std::initializer_list<const char*> extra) const {
    const Token& t = cur();
    if (t.type == Tok::VAR_END || t.type == Tok::BLOCK_END || t.type == Tok::END) return true;
    if (t.type == Tok::OP && t.value == ")") return true;
    for (const char* e : extra)
      if (t.type == Tok::NAME && t.value == e) return true;
    return false;
  }

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<const char*> extra_end, bool explicit_parens) {
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    int line = cur().line;
    while (true) {
      if (!args.empty()) expect_op(",");
      if (tuple_end(extra_end)) break;
      args.push_back(parse_expression(with_condexpr));
      if (is_op(",")) is_tuple = true;
      else break;
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) error("Expected an expression, got " + describe(cur()));
    }
    auto e = mk(EK::TUPLE);
    e->line = line;
    e->kids = std::move(args);
    return e;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard g(*this);
    if (!with_condexpr) return parse_or();
    ExprPtr e = parse_or();
    while (is_name("if")) {
      next();
      auto c = mk(EK::COND);
      ExprPtr test = parse_or();
      ExprPtr other = skip_name("else") ? parse_expression(true) : nullptr;
      c->kids.push_back(std::move(test));
      c->kids.push_back(std::move(e));
      c->kids.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }
  ExprPtr binary(EK k, ExprPtr a, ExprPtr b) {
    auto e = mk(k);
    e->kids.push_back(std::move(a));
    e->kids.push_back(std::move(b));
    return e;
  }
  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (skip_name("or")) e = binary(EK::OR, std::move(e), parse_and());
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (skip_name("and")) e = binary(EK::AND, std::move(e), parse_not());
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard g(*this);
      auto e = mk(EK::NOT);
      next();
      e->kids.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    std::unique_ptr<Expr> cmp;
    while (true) {
      Op op;
      if (cur().type == Tok::OP && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                    cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
        const std::string& v = cur().value;
        op = v == "==" ? Op::EQ : v == "!=" ? Op::NE : v == "<" ? Op::LT : v == "<=" ? Op::LE : v == ">" ? Op::GT : Op::GE;
        next();
      } else if (is_name("in")) {
        op = Op::IN;
        next();
      } else if (is_name("not") && peek().type == Tok::NAME && peek().value == "in") {
        op = Op::NOTIN;
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = mk(EK::COMPARE);
        cmp->kids.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->kids.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr binop(Op op, ExprPtr a, ExprPtr b) {
    auto e = binary(EK::BINOP, std::move(a), std::move(b));
    e->op = op;
    return e;
  }
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      Op op = cur().value == "+" ? Op::ADD : Op::SUB;
      next();
      e = binop(op, std::move(e), parse_concat());
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    if (!is_op("~")) return e;
    auto c = mk(EK::CONCAT);
    c->kids.push_back(std::move(e));
    while (skip_op("~")) c->kids.push_back(parse_math2());
    return c;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string& v = cur().value;
      Op op = v == "*" ? Op::MUL : v == "/" ? Op::DIV : v == "//" ? Op::FLOORDIV : Op::MOD;
      next();
      e = binop(op, std::move(e), parse_pow());
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (skip_op("**")) e = binop(Op::POW, std::move(e), parse_unary(true));
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    DepthGuard g(*this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      node = mk(is_op("-") ? EK::NEG : EK::POS);
      next();
      node->kids.push_back(parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }
  ExprPtr parse_primary() {
    const Token& t = cur();
    if (t.type == Tok::NAME) {
      const std::string& v = t.value;
      auto e = mk(EK::CONST);
      if (v == "true" || v == "True") e->value = Value::boolean(true);
      else if (v == "false" || v == "False") e->value = Value::boolean(false);
      else if (v == "none" || v == "None") e->value = Value::none();
      else {
        e->kind = EK::NAME;
        e->name = v;
        e->sym = intern(v);
      }
      next();
      return e;
    }
    if (t.type == Tok::STRING) {
      auto e = mk(EK::CONST);
      std::string s = t.value;
      next();
      while (cur().type == Tok::STRING) {
        s += cur().value;
        next();
      }
      e->value = Value::string(std::move(s));
      return e;
    }
    if (t.type == Tok::INT) {
      auto e = mk(EK::CONST);
      errno = 0;
      char* endp = nullptr;
      unsigned long long v = std::strtoull(t.value.c_str(), &endp, 10);
      if (errno || v > static_cast<unsigned long long>(INT64_MAX)) e->value = Value::number(std::strtod(t.value.c_str(), nullptr));
      else e->value = Value::integer(static_cast<int64_t>(v));
      next();
      return e;
    }
    if (t.type == Tok::FLOAT) {
      auto e = mk(EK::CONST);
      e->value = Value::number(std::strtod(t.value.c_str(), nullptr));
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      ExprPtr e = parse_tuple(true, {}, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      auto e = mk(EK::LIST);
      next();
      while (!is_op("]")) {
        if (!e->kids.empty()) expect_op(",");
        if (is_op("]")) break;
        e->kids.push_back(parse_expression(true));
      }
      expect_op("]");
      return e;
    }
    if (is_op("{")) {
      auto e = mk(EK::DICT);
      next();
      while (!is_op("}")) {
        if (!e->kids.empty()) expect_op(",");
        if (is_op("}")) break;
        e->kids.push_back(parse_expression(true));
        expect_op(":");
        e->kids.push_back(parse_expression(true));
      }
      expect_op("}");
      return e;
    }
    error("unexpected " + describe(t));
  }
  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".")) {
        next();
        if (cur().type == Tok::NAME) {
          auto e = mk(EK::GETATTR);
          e->name = cur().value;
          next();
          e->kids.push_back(std::move(node));
          node = std::move(e);
        } else if (cur().type == Tok::INT) {
          auto e = mk(EK::GETITEM);
          auto idx = mk(EK::CONST);
          idx->value = Value::integer(std::strtoll(cur().value.c_str(), nullptr, 10));
          next();
          e->kids.push_back(std::move(node));
          e->kids.push_back(std::move(idx));
          node = std::move(e);
        } else {
          error("expected name or number");
        }
      } else if (is_op("[")) {
        next();
        auto e = mk(EK::GETITEM);
        std::vector<ExprPtr> idx;  // jinja2: `x[]` indexes with (), `x[a, b]` with a tuple
        while (!is_op("]")) {
          if (!idx.empty()) expect_op(",");
          idx.push_back(parse_subscribed());
        }
        expect_op("]");
        e->kids.push_back(std::move(node));
        if (idx.size() == 1) {
          e->kids.push_back(std::move(idx[0]));
        } else {
          auto tup = mk(EK::TUPLE);
          tup->kids = std::move(idx);
          e->kids.push_back(std::move(tup));
        }
        node = std::move(e);
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }
  ExprPtr parse_subscribed() {
    ExprPtr start;
    if (!is_op(":")) {
      start = parse_expression(true);
      if (!is_op(":")) return start;
    }
    auto sl = mk(EK::SLICE);
    next();  // ':'
    ExprPtr stop, step;
    if (!is_op("]") && !is_op(",") && !is_op(":")) stop = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) step = parse_expression(true);
    }
    sl->kids.push_back(std::move(start));
    sl->kids.push_back(std::move(stop));
    sl->kids.push_back(std::move(step));
    return sl;
  }
  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (is_op(")")) break;
      if (skip_op("*")) {
        e.dyn_args = parse_expression(true);
      } else if (skip_op("**")) {
        e.dyn_kwargs = parse_expression(true);
      } else if (cur().type == Tok::NAME && peek().type == Tok::OP && peek().value == "=") {
        std::string k = cur().value;
        next();
        next();
        e.kwargs.emplace_back(std::move(k), parse_expression(true));
      } else {
        if (!e.kwargs.empty() || e.dyn_args || e.dyn_kwargs) error("invalid syntax for function call expression");
        e.kids.push_back(parse_expression(true));
      }
    }
    expect_op(")");
  }
  ExprPtr parse_call(ExprPtr callee) {
    DepthGuard g(*this);
    auto e = mk(EK::CALL);
    e->kids.push_back(std::move(callee));
    parse_call_args(*e);
    return e;
  }
  std::string parse_dotted_name() {
    std::string n = expect_name();
    while (is_op(".") && peek().type == Tok::NAME) {
      next();
      n += "." + expect_name();
    }
    return n;
  }
  ExprPtr parse_filter(ExprPtr node, bool start_inline = false) {
    while (is_op("|") || start_inline) {
      DepthGuard g(*this);
      if (!start_inline) next();
      start_inline = false;
      auto e = mk(EK::FILTER);
      e->name = parse_dotted_name();
      e->filter = find_filter(e->name);
      e->kids.push_back(std::move(node));  // kids[0] may be null (filter block input)
      if (is_op("(")) parse_call_args(*e);
      node = std::move(e);
    }
    return node;
  }
  ExprPtr parse_test(ExprPtr node) {
    next();  // 'is'
    bool negated = skip_name("not");
    auto e = mk(EK::TEST);
    e->negated = negated;
    e->name = parse_dotted_name();
    e->test = find_test(e->name);
    e->kids.push_back(std::move(node));
    const Token& t = cur();
    if (is_op("(")) {
      parse_call_args(*e);
    } else if ((t.type == Tok::NAME || t.type == Tok::STRING || t.type == Tok::INT || t.type == Tok::FLOAT ||
                is_op("(") || is_op("[") || is_op("{")) &&
               !(t.type == Tok::NAME && (t.value == "else" || t.value == "or" || t.value == "and"))) {
      if (is_name("is")) error("You cannot chain multiple tests with is");
      ExprPtr arg = parse_postfix(parse_primary());
      e->kids.push_back(std::move(arg));
    }
    return e;
  }
  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) node = parse_filter(std::move(node));
      else if (is_name("is")) node = parse_test(std::move(node));
      else if (is_op("(")) node = parse_call(std::move(node));
      else return node;
    }
  }
};

}  // namespace

std::unique_ptr<Program> parse_program(std::string_view source) {
  if (source.size() > kMaxTemplateBytes)
    throw TemplateError(ErrorKind::SYNTAX, "template is " + std::to_string(source.size()) +
                                               " bytes, more than the limit of " +
                                               std::to_string(kMaxTemplateBytes));
  auto prog = std::make_unique<Program>();
  Parser(tokenize(source), *prog).run();
  check_depth(prog->body);
  check_names(prog->body, false);
  return prog;
}

}  // namespace oxyd::chat::jinja
