// Passes over a freshly parsed tree: which of caller/varargs/kwargs a macro body uses, and
// jinja2's compile-time rejection of unknown filters/tests outside `if` frames.
#pragma once

#include "chat/jinja/ast.h"

namespace oxyd::chat::jinja {

/// Sets s.uses_caller/uses_varargs/uses_kwargs from the names its body references.
void scan_macro_names(Stmt& s, const Program& prog);
/// Throws TemplateError(SYNTAX) when statement nesting plus expression height passes kMaxAstDepth
/// (iterative over expressions, so long chains are measured without recursion). Run it before
/// any recursive pass.
void check_depth(const Body& body, int depth = 0);
/// Throws TemplateError(SYNTAX) for an unknown filter or test jinja2 would reject at compile time.
void check_names(const Body& body, bool soft);

}  // namespace oxyd::chat::jinja
