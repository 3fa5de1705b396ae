// Structured-output fields → grammar::GrammarSpec: OpenAI's response_format (text, json_object,
// json_schema strict or not), XGrammar's structural_tag response_format, and vLLM's guided_json /
// guided_regex / guided_grammar / guided_choice and structured_outputs {json, regex, grammar,
// choice}. At most one of them may constrain a request. Whether a schema compiles is known only
// against the model's vocabulary: serving checks it (invalid_json_schema 400) before generating.
#include "server/protocol_detail.h"

namespace oxyd::server::protocol::detail {
namespace {

using Kind = grammar::GrammarSpec::Kind;

// "a" | "b" as an EBNF root: the literals JSON-escaped (XGrammar's EBNF strings take JSON escapes).
std::string choice_grammar(const json& v, const std::string& path) {
  if (!v.is_array() || v.empty()) invalid_type(path, "a non-empty array of strings", v);
  std::string g = "root ::= ";
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) invalid_type(path + "[" + std::to_string(i) + "]", "a string", v[i]);
    g += (i ? " | " : "") + v[i].dump();
  }
  return g;
}

grammar::GrammarSpec schema_spec(const json& schema, const std::string& path, bool strict) {
  if (schema.is_string()) {  // vLLM accepts the schema as JSON text too
    auto parsed = parse_json_limited(schema.get<std::string>());
    if (!parsed || !parsed->is_object()) invalid_value(path, "the string is not a JSON Schema object.");
    return {Kind::JSON_SCHEMA, parsed->dump(), strict};
  }
  if (!schema.is_object() && !schema.is_boolean()) invalid_type(path, "an object (a JSON Schema)", schema);
  return {Kind::JSON_SCHEMA, schema.dump(), strict};
}

grammar::GrammarSpec response_format(const json& rf) {
  if (!rf.is_object()) invalid_type("response_format", "an object", rf);
  const std::string type = rf.contains("type") && rf["type"].is_string() ? rf["type"].get<std::string>() : "";
  if (type == "text") return {};
  if (type == "json_object") return {Kind::JSON_OBJECT, "", false};
  if (type == "json_schema") {
    const json* js = field(rf, "json_schema");
    if (!js) missing("response_format.json_schema");
    if (!js->is_object()) invalid_type("response_format.json_schema", "an object", *js);
    const json* name = field(*js, "name");
    if (!name) missing("response_format.json_schema.name");
    if (!name->is_string()) invalid_type("response_format.json_schema.name", "a string", *name);
    opt_string(*js, "description", "response_format.json_schema.description");
    const bool strict = opt_bool(*js, "strict", "response_format.json_schema.strict").value_or(false);
    const json* schema = field(*js, "schema");
    if (!schema) return {Kind::JSON_OBJECT, "", false};  // no schema: any JSON object (OpenAI's default)
    return schema_spec(*schema, "response_format.json_schema.schema", strict);
  }
  if (type == "structural_tag") {  // XGrammar / vLLM: {"type": "structural_tag", "format": {...}}
    if (!field(rf, "format")) missing("response_format.format");
    return {Kind::STRUCTURAL_TAG, rf.dump(), true};
  }
  if (!rf.contains("type")) missing("response_format.type");
  invalid_value("response_format.type", "expected 'text', 'json_object', 'json_schema' or 'structural_tag', but got " +
                                            quote_value(rf["type"]) + ".");
}

}  // namespace

void parse_grammar_fields(const json& body, CommonParams& p) {
  std::vector<std::pair<std::string, grammar::GrammarSpec>> found;
  auto text_field = [&](const json& obj, const char* key, const std::string& path, Kind kind) {
    if (auto s = opt_string(obj, key, path)) found.push_back({path, {kind, *s, true}});
  };
  if (const json* rf = field(body, "response_format"))
    if (auto s = response_format(*rf); !s.empty()) found.push_back({"response_format", s});
  if (const json* g = field(body, "guided_json")) found.push_back({"guided_json", schema_spec(*g, "guided_json", false)});
  text_field(body, "guided_regex", "guided_regex", Kind::REGEX);
  text_field(body, "guided_grammar", "guided_grammar", Kind::EBNF);
  if (const json* c = field(body, "guided_choice")) found.push_back({"guided_choice", {Kind::EBNF, choice_grammar(*c, "guided_choice"), true}});
  if (const json* so = field(body, "structured_outputs")) {
    if (!so->is_object()) invalid_type("structured_outputs", "an object", *so);
    if (const json* g = field(*so, "json")) found.push_back({"structured_outputs.json", schema_spec(*g, "structured_outputs.json", false)});
    text_field(*so, "regex", "structured_outputs.regex", Kind::REGEX);
    text_field(*so, "grammar", "structured_outputs.grammar", Kind::EBNF);
    if (const json* c = field(*so, "choice"))
      found.push_back({"structured_outputs.choice", {Kind::EBNF, choice_grammar(*c, "structured_outputs.choice"), true}});
    if (const json* c = field(*so, "json_object"); c && c->is_boolean() && c->get<bool>())
      found.push_back({"structured_outputs.json_object", {Kind::JSON_OBJECT, "", false}});
  }
  if (found.size() > 1)
    throw bad_request("Only one of 'response_format' (json_object / json_schema), 'guided_*' and 'structured_outputs' "
                      "may constrain a request; got '" + found[0].first + "' and '" + found[1].first + "'.",
                      found[1].first, "invalid_value");
  if (!found.empty()) {
    p.grammar = std::move(found[0].second);
    p.grammar_param = found[0].first;
  }
}

}  // namespace oxyd::server::protocol::detail
