// Values of the Jinja runtime: Python's object model as chat templates see it (None, bool, int,
// float, str, list, tuple, dict, jinja2's Undefined and Namespace, callables, the loop object).
// Lists and dicts have reference semantics like Python; strings are immutable and shared.
// Dicts keep insertion order. Printing follows Python's str()/repr() byte for byte.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/jinja/error.h"

namespace oxyd::chat::jinja {

enum class Kind : uint8_t { UNDEFINED, NONE, BOOL, INT, FLOAT, STRING, LIST, TUPLE, DICT, NAMESPACE, FUNC, LOOP };

struct HeapObj {
  virtual ~HeapObj() = default;
};
struct StrObj;
struct ListObj;
struct DictObj;
struct UndefObj;
struct FuncObj;
struct LoopObj;

class Value {
 public:
  Value() : kind_(Kind::UNDEFINED), i_(0) {}
  static Value none() { Value v; v.kind_ = Kind::NONE; return v; }
  static Value boolean(bool b) { Value v; v.kind_ = Kind::BOOL; v.i_ = b; return v; }
  static Value integer(int64_t i) { Value v; v.kind_ = Kind::INT; v.i_ = i; return v; }
  static Value number(double f) { Value v; v.kind_ = Kind::FLOAT; v.f_ = f; return v; }
  static Value string(std::string s);
  static Value markup(std::string s);
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value namespace_();
  /// An undefined value; `message` is what jinja2's UndefinedError would say when it is used.
  static Value undefined(std::string message, ErrorKind exc = ErrorKind::UNDEFINED);
  static Value undefined_name(std::string_view name);
  static Value func(std::shared_ptr<FuncObj> f);
  static Value loop(std::shared_ptr<LoopObj> l);
  static Value from_json(const nlohmann::ordered_json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::UNDEFINED; }
  bool is_none() const { return kind_ == Kind::NONE; }
  bool is_string() const { return kind_ == Kind::STRING; }
  bool is_markup() const;
  bool is_int() const { return kind_ == Kind::INT || kind_ == Kind::BOOL; }
  bool is_number() const { return kind_ == Kind::INT || kind_ == Kind::FLOAT || kind_ == Kind::BOOL; }
  bool is_list_like() const { return kind_ == Kind::LIST || kind_ == Kind::TUPLE; }
  bool is_mapping() const { return kind_ == Kind::DICT; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::FLOAT ? f_ : static_cast<double>(i_); }
  const std::string& str() const;
  ListObj& list_obj() const;
  DictObj& dict_obj() const;
  UndefObj& undef_obj() const;
  FuncObj& func_obj() const;
  LoopObj& loop_obj() const;
  const std::shared_ptr<HeapObj>& heap() const { return obj_; }

  /// Python truthiness (Undefined is false).
  bool truthy() const;
  /// Python type name as in TypeError messages: 'NoneType', 'str', 'dict', ...
  std::string_view type_name() const;
  /// jinja2's object_type_repr: "dict object", "None", ...
  std::string object_type_repr() const;
  /// What using this undefined would raise (empty for a plain Undefined).
  std::string undefined_message() const;
  /// Throws the UndefinedError (or SecurityError) this undefined stands for.
  [[noreturn]] void fail_undefined() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double f_;
  };
  std::shared_ptr<HeapObj> obj_;
};

struct StrObj : HeapObj {
  explicit StrObj(std::string v, bool m = false) : s(std::move(v)), markup(m) {}
  std::string s;
  bool markup;  // markupsafe.Markup (from |safe, |escape): `+` and join() HTML-escape plain operands
};
struct ListObj : HeapObj {
  std::vector<Value> items;
};
struct DictObj : HeapObj {
  std::vector<std::pair<Value, Value>> items;
  /// Index of key, or -1. String keys compare by content; numbers by value (1 == 1.0 == True).
  ptrdiff_t find(const Value& key) const;
  ptrdiff_t find(std::string_view key) const;
  const Value* get(std::string_view key) const {
    ptrdiff_t i = find(key);
    return i < 0 ? nullptr : &items[i].second;
  }
  void set(const Value& key, Value v);
};
struct UndefObj : HeapObj {
  std::string message;
  ErrorKind exc = ErrorKind::UNDEFINED;
};

/// Call arguments: positional then keyword, in source order.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  const Value* kwarg(std::string_view name) const {
    for (auto& [k, v] : kw)
      if (k == name) return &v;
    return nullptr;
  }
};
class Runtime;
/// Anything callable from a template: builtin globals, macros, caller(), bound loop methods.
struct FuncObj : HeapObj {
  std::string name;
  virtual Value call(Runtime& rt, Args& args) = 0;
};
/// jinja2's LoopContext over an already materialised sequence.
struct LoopObj : HeapObj {
  std::vector<Value> items;
  size_t index0 = 0;
  int64_t depth0 = 0;
  Value last_changed;
  bool has_changed = false;
  const void* recursive_stmt = nullptr;  // the `for ... recursive` Stmt, so loop(items) can recurse
  std::weak_ptr<void> parent_frame;      // the scope the loop runs in (a runtime Frame)
};

// Equality, order and hashing with Python's rules.
bool py_equal(const Value& a, const Value& b);
/// a < b; throws TypeError "'<' not supported between instances of ..." like Python.
/// `reflected`: the template wrote `b op a` (for > and >=), so the message names b's type first.
bool py_less(const Value& a, const Value& b, std::string_view op = "<", bool reflected = false);

/// Python str(v); Undefined prints empty.
std::string to_str(const Value& v);
void append_str(std::string& out, const Value& v);
/// Python repr(v).
std::string to_repr(const Value& v);
void append_repr(std::string& out, const Value& v, int depth = 0);

struct JsonOptions {
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool has_indent = false;
  std::string indent;
  std::string item_sep = ", ";
  std::string key_sep = ": ";
};
/// Python json.dumps(v, ...) as transformers' tojson filter calls it.
std::string to_json(const Value& v, const JsonOptions& opt);

}  // namespace oxyd::chat::jinja
