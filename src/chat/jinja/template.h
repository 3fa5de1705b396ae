// Public API of the Jinja engine: compile a chat template once, render it many times.
//   auto t = Template::parse(source);            // throws TemplateError (SYNTAX, "… (line L, column C)")
//   std::string s = t.render(context_json);      // throws TemplateError (kind() = Python exception)
// Semantics are jinja2's ImmutableSandboxedEnvironment as transformers builds it (trim_blocks,
// lstrip_blocks, loopcontrols, its tojson/raise_exception/strftime_now/namespace/dict).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/jinja/runtime.h"

namespace oxyd::chat::jinja {

struct RenderOptions {
  Limits limits;
  RenderHooks hooks;
};

class Template {
 public:
  /// Compiles `source`. Throws TemplateError(SYNTAX) naming line and column.
  static Template parse(std::string_view source);

  /// Renders with every key of the JSON object `context` as a template variable. Thread-safe:
  /// a compiled Template is immutable and each call has its own interpreter state.
  std::string render(const nlohmann::ordered_json& context, const RenderOptions& opts = {}) const;
  /// True when the template refers to the variable `name` (others need not be passed).
  bool uses(const std::string& name) const { return prog_ && prog_->symbols.count(name) != 0; }
  /// Same with already-converted values (name → value); a later entry for a name wins.
  std::string render(const std::vector<std::pair<std::string, Value>>& context, const RenderOptions& opts = {}) const;

 private:
  std::shared_ptr<const Program> prog_;
};

}  // namespace oxyd::chat::jinja
