// Syntax tree of a parsed template. Expressions and statements are plain tagged structs owned by
// unique_ptr; names are interned to small integer ids at parse time (Program::symbols) so the
// runtime looks variables up without string compares. Immutable after parsing, so one compiled
// template can render on many threads at once.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/jinja/value.h"

namespace oxyd::chat::jinja {

class Runtime;
using FilterFn = Value (*)(Runtime& rt, const Value& v, Args& args);
using TestFn = bool (*)(Runtime& rt, const Value& v, Args& args);

enum class EK : uint8_t {
  CONST, NAME, LIST, TUPLE, DICT, GETATTR, GETITEM, SLICE, BINOP, NEG, POS, NOT, AND, OR, COMPARE, CONCAT,
  COND, CALL, FILTER, TEST
};
enum class Op : uint8_t { ADD, SUB, MUL, DIV, FLOORDIV, MOD, POW, EQ, NE, LT, LE, GT, GE, IN, NOTIN };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  EK kind;
  int line = 0;
  Value value;            // CONST
  std::string name;       // NAME, GETATTR attribute, FILTER/TEST name
  int sym = -1;           // NAME
  Op op = Op::ADD;        // BINOP
  bool negated = false;   // TEST (`is not`)
  std::vector<ExprPtr> kids;  // operands / items / positional args (CALL: kids[0] is the callee)
  std::vector<Op> ops;        // COMPARE: one per operand after the first
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // CALL/FILTER/TEST keyword args
  ExprPtr dyn_args, dyn_kwargs;                          // *args / **kwargs
  FilterFn filter = nullptr;  // FILTER resolved at parse time (nullptr: unknown, fails when run)
  TestFn test = nullptr;      // TEST likewise

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  /// Iterative: a 50,000-link `.a.a.a…` chain the parser builds before the depth check rejects
  /// it must not be freed by 50,000 nested destructor calls.
  ~Expr();
};

enum class SK : uint8_t {
  TEXT, EMIT, IF, FOR, SET, SET_BLOCK, MACRO, CALL_BLOCK, FILTER_BLOCK, BREAK, CONTINUE, BODY, WITH
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

/// An assignment target: a name, an attribute of a namespace (`ns.x`), or a tuple of targets.
struct Target {
  int sym = -1;                 // name target
  std::string name;
  std::string attr;             // non-empty: `name.attr`
  std::vector<Target> items;    // tuple target when non-empty
};

struct MacroParam {
  std::string name;
  int sym = -1;
  ExprPtr def;  // default, may be null
};

struct Stmt {
  SK kind;
  int line = 0;
  std::string text;                    // TEXT
  ExprPtr expr;                        // EMIT value, FOR iterable, SET value, CALL_BLOCK call, FILTER_BLOCK filter chain
  ExprPtr cond;                        // FOR inline `if`
  std::vector<std::pair<ExprPtr, Body>> branches;  // IF: (test, body)...
  Body body, else_body;
  Target target;                       // FOR / SET / SET_BLOCK
  std::vector<std::pair<Target, ExprPtr>> assigns;  // WITH
  bool recursive = false;              // FOR
  std::string name;                    // MACRO name
  int sym = -1;                        // MACRO symbol
  std::vector<MacroParam> params;      // MACRO / CALL_BLOCK caller params
  bool uses_caller = false, uses_varargs = false, uses_kwargs = false;
};

struct Program {
  Body body;
  std::unordered_map<std::string, int> symbols;  // name → id
  int sym_loop = -1, sym_caller = -1, sym_varargs = -1, sym_kwargs = -1;
  int num_symbols() const { return static_cast<int>(symbols.size()); }
};

/// Templates longer than this are refused before lexing (real chat templates are < 64 KB).
inline constexpr size_t kMaxTemplateBytes = 1u << 20;
/// Statement nesting + expression height, every chain link (`.a`, `[i]`, `(x)`, `|f`, `+ x`)
/// counting one level: every pass over the tree (checks, rendering) may recurse this deep.
inline constexpr int kMaxAstDepth = 400;

/// Parses a token stream; throws TemplateError(SYNTAX) "message (line L, column C)".
std::unique_ptr<Program> parse_program(std::string_view source);

FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);

}  // namespace oxyd::chat::jinja
