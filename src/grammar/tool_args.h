// A call's arguments as an XGrammar structural-tag format (tool_grammar.cc), in one of the
// syntaxes tool-call formats write them in, each constrained by the tool's JSON Schema:
//   JSON:           the arguments object as JSON.
//   XML_PARAMETERS: "\n" then per property "<parameter=P>\nV\n</parameter>\n", in the schema's
//                   order (required ones always, the others maybe); V is raw text where the reader
//                   takes it as a string (the property's "type" is not a non-string type name) and
//                   JSON otherwise. A raw value is the string's pattern, else its format, else its
//                   length bound or string enum / const, as a regex; any text up to </parameter>
//                   where none says it (an unbounded string; a schema without a "type" the reader
//                   takes as a string, such as a non-string enum or an anyOf: not checked).
//                   Nested values, inside JSON, are JSON.
//   BARE_KEYS:      {k:V,...} with bare keys in sorted order (as a template's dictsort writes
//                   them), strings between `quote` (no '"' inside, so no quote either), numbers,
//                   booleans and null as JSON; nested objects and arrays alike.
// BARE_KEYS covers type/enum/const/anyOf/oneOf/$ref (inlined up to a depth; deeper, any value),
// properties/required, items/minItems/maxItems, string pattern/format/minLength/maxLength and
// numeric bounds; not allOf (any value of the type there).
// String formats (both syntaxes): date, time, date-time, duration, uuid, ipv4, hostname, and
// subsets of email and uri, each as a regex every match of which is valid (tests/data/grammar/
// string_formats.json, labelled by the jsonschema package); a pattern wins over a format, and a
// format over length bounds (which it then leaves unchecked); other formats are annotations.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace oxyd::grammar {

enum class ArgsSyntax { JSON, XML_PARAMETERS, BARE_KEYS };

/// The structural-tag format (a JSON object with "type") of arguments valid for `schema`.
nlohmann::ordered_json arguments_format(const nlohmann::ordered_json& schema, ArgsSyntax syntax,
                                        const std::string& quote = "");

}  // namespace oxyd::grammar
