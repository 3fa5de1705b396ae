// Obj: typed, null-aware access to the fields of one JSON object, for the config.json loader.
// Every wrong type or missing required field throws Error(INVALID_ARGUMENT) naming the file and
// the dotted key path (e.g. "text_config.rope_parameters.factor"). Internal to loader/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace oxyd::loader::detail {

using nlohmann::json;

// Typed access to one JSON object with errors that name the file and key.
class Obj {
 public:
  /// `fallback`, if given, answers keys `j` lacks (class defaults under a wrapper's text_config).
  Obj(const json& j, const std::string& source, std::string prefix, const json* fallback = nullptr)
      : j_(j), source_(source), prefix_(std::move(prefix)), fallback_(fallback) {}

  const json* find(const char* key) const {
    const json* v = nullptr;
    if (auto it = j_.find(key); it != j_.end()) v = &*it;
    else if (fallback_)
      if (auto fit = fallback_->find(key); fit != fallback_->end()) v = &*fit;
    return v && !v->is_null() ? v : nullptr;
  }
  /// Whether the key is present at all (null included).
  bool contains(const char* key) const { return j_.contains(key) || (fallback_ && fallback_->contains(key)); }
  bool has(const char* key) const { return find(key) != nullptr; }

  [[noreturn]] void bad(const char* key, const std::string& expected) const {
    const json* v = find(key);
    std::string found = v ? v->dump() : "missing";
    if (found.size() > 80) found = found.substr(0, 80) + "...";  // a value may be a whole subtree
    throw Error(ErrorCode::INVALID_ARGUMENT,
                source_ + ": key '" + prefix_ + key + "' is " + found + ", expected " + expected);
  }

  std::optional<int64_t> opt_int(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_number_integer() || v->is_number_unsigned()) return v->get<int64_t>();
    if (v->is_number_float()) {  // 4096.0 is accepted as 4096
      double d = v->get<double>();
      if (d >= -9.0e18 && d <= 9.0e18 && d == static_cast<double>(static_cast<int64_t>(d)))
        return static_cast<int64_t>(d);
    }
    bad(key, "an integer");
  }
  int64_t req_int(const char* key) const {
    auto v = opt_int(key);
    if (!v)
      throw Error(ErrorCode::INVALID_ARGUMENT,
                  source_ + ": required key '" + prefix_ + key + "' is missing");
    return *v;
  }
  int64_t get_int(const char* key, int64_t def) const { return opt_int(key).value_or(def); }
  std::optional<double> opt_num(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) bad(key, "a number");
    return v->get<double>();
  }
  double get_num(const char* key, double def) const { return opt_num(key).value_or(def); }
  std::optional<bool> opt_bool(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) bad(key, "true or false");
    return v->get<bool>();
  }
  bool get_bool(const char* key, bool def) const { return opt_bool(key).value_or(def); }
  std::optional<std::string> opt_str(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) bad(key, "a string");
    return v->get<std::string>();
  }
  std::vector<int64_t> int_list(const char* key) const {
    const json* v = find(key);
    if (!v) return {};
    if (v->is_number_integer()) return {v->get<int64_t>()};
    if (!v->is_array()) bad(key, "a list of integers");
    std::vector<int64_t> out;
    for (const auto& x : *v) {
      if (!x.is_number_integer()) bad(key, "a list of integers");
      out.push_back(x.get<int64_t>());
    }
    return out;
  }
  std::vector<double> num_list(const char* key) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_array()) bad(key, "a list of numbers");
    std::vector<double> out;
    for (const auto& x : *v) {
      if (!x.is_number()) bad(key, "a list of numbers");
      out.push_back(x.get<double>());
    }
    return out;
  }
  std::vector<std::string> str_list(const char* key) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_array()) bad(key, "a list of strings");
    std::vector<std::string> out;
    for (const auto& x : *v) {
      if (!x.is_string()) bad(key, "a list of strings");
      out.push_back(x.get<std::string>());
    }
    return out;
  }
  const json& j() const { return j_; }
  const std::string& source() const { return source_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const json& j_;
  const std::string& source_;
  std::string prefix_;
  const json* fallback_;
};

}  // namespace oxyd::loader::detail
