// Template: parse once, render per request (see template.h).
#include "chat/jinja/template.h"

namespace oxyd::chat::jinja {

Template Template::parse(std::string_view source) {
  Template t;
  t.prog_ = parse_program(source);
  return t;
}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& context, const RenderOptions& opts) const {
  if (!prog_) throw TemplateError(ErrorKind::RUNTIME, "render() called on an empty Template (use Template::parse)");
  Runtime rt(*prog_, opts.limits, opts.hooks);
  return rt.render(context);
}

std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& opts) const {
  if (!context.is_object()) throw TemplateError(ErrorKind::TYPE, "template context must be a JSON object");
  if (!prog_) throw TemplateError(ErrorKind::RUNTIME, "render() called on an empty Template (use Template::parse)");
  std::vector<std::pair<std::string, Value>> vars;
  vars.reserve(context.size());
  for (auto it = context.begin(); it != context.end(); ++it) {
    if (prog_->symbols.count(it.key())) vars.emplace_back(it.key(), Value::from_json(it.value()));
  }
  return render(vars, opts);
}

}  // namespace oxyd::chat::jinja
