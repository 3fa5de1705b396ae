// arguments_format (see tool_args.h).
#include "grammar/tool_args.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace oxyd::grammar {

using json = nlohmann::ordered_json;

namespace {

json text(const std::string& s) { return {{"type", "const_string"}, {"value", s}}; }
json seq(json elements) {
  return elements.size() == 1 ? elements[0] : json{{"type", "sequence"}, {"elements", std::move(elements)}};
}
json any_of(json elements) {
  return elements.size() == 1 ? elements[0] : json{{"type", "or"}, {"elements", std::move(elements)}};
}
json optional(json content) { return {{"type", "optional"}, {"content", std::move(content)}}; }
json json_value(const json& schema) {
  return {{"type", "json_schema"}, {"json_schema", schema}, {"max_whitespace_cnt", 1}};
}

// ---- string formats ----

// A JSON Schema string "format" (draft 2020-12 §7.3) as a regex over the string's characters, for
// the formats whose syntax is regular: the RFC 3339 date, time, date-time and duration (its
// Appendix A), RFC 4122 uuid, dotted-quad ipv4, RFC 1123 hostname, and subsets of RFC 5321 email
// (dot-atom local part, a domain of hostname labels) and RFC 3986 uri (a registered-name
// authority, no IP literal), so that every string matched is valid. "" for the others: a format
// is an annotation unless a validator asserts it, and those stay unchecked.
std::string format_regex(const std::string& format) {
  const std::string hour = "([01][0-9]|2[0-3])", minute = "[0-5][0-9]";
  // Days each month has; 29 February in leap years only (divisible by 4, centuries by 400).
  const std::string leap = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29";
  const std::string date = "([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|"
                           "02-(0[1-9]|1[0-9]|2[0-8]))|" + leap + ")";
  // No leap second: whether 60 is valid depends on the offset and the date.
  const std::string time = hour + ":" + minute + ":" + minute + "(\\.[0-9]+)?([Zz]|[+-]" + hour + ":" + minute + ")";
  const std::string label = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
  const std::string atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
  const std::string pct = "%[0-9A-Fa-f]{2}", chars = "A-Za-z0-9._~!$&'()*+,;=";  // unreserved + sub-delims
  const std::string pchar = "([" + chars + ":@-]|" + pct + ")";
  const std::string hex4 = "[0-9A-Fa-f]{4}", octet = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  if (format == "date") return date;
  if (format == "time") return time;
  if (format == "date-time") return date + "[Tt]" + time;
  if (format == "duration") {
    const std::string t = "T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)";
    const std::string day = "([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)";
    return "P(" + day + "(" + t + ")?|" + t + "|[0-9]+W)";
  }
  if (format == "uuid") return "[0-9A-Fa-f]{8}-" + hex4 + "-" + hex4 + "-" + hex4 + "-[0-9A-Fa-f]{12}";
  if (format == "ipv4") return "(" + octet + "\\.){3}" + octet;
  if (format == "hostname") return label + "(\\." + label + ")*";
  if (format == "email") return atom + "(\\." + atom + ")*@" + label + "(\\." + label + ")*";
  if (format == "uri") {
    const std::string authority = "(([" + chars + ":-]|" + pct + ")*@)?([" + chars + "-]|" + pct + ")*(:[0-9]*)?";
    const std::string path = pchar + "+(/" + pchar + "*)*";
    const std::string hier = "//" + authority + "(/" + pchar + "*)*|/(" + path + ")?|" + path;
    return "[A-Za-z][A-Za-z0-9+.-]*:(" + hier + ")?(\\?(" + pchar + "|[/?])*)?(#(" + pchar + "|[/?])*)?";
  }
  return "";
}

// ---- XML_PARAMETERS ----

bool read_as_json(const json& prop) {
  return prop.is_object() && prop.contains("type") && prop["type"].is_string() && prop["type"] != "string";
}

std::string regex_escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (std::string_view("\\^$.|?*+()[]{}/-").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A raw string value as a regex between the template's newlines (which the reader drops): the
// value's pattern, else its format (format_regex), else a length bound, or an enum / const of
// strings as alternatives; "" where no regex says the schema (an unbounded string, a format
// format_regex does not know, a non-string enum).
std::string raw_value_regex(const json& prop) {
  if (!prop.is_object()) return "";
  std::string body;
  const std::string format = prop.contains("format") && prop["format"].is_string() ? format_regex(prop["format"]) : "";
  if (prop.contains("pattern") && prop["pattern"].is_string()) {
    body = prop["pattern"].get<std::string>();
    if (!body.empty() && body.front() == '^') body.erase(0, 1);
    if (body.size() > 1 && body.back() == '$' && body[body.size() - 2] != '\\') body.pop_back();
  } else if (!format.empty()) {
    body = format;
  } else if (prop.contains("minLength") || prop.contains("maxLength")) {
    auto count = [&](const char* k) {
      return prop.contains(k) && prop[k].is_number_integer() && prop[k].get<int64_t>() >= 0 ? std::to_string(prop[k].get<int64_t>()) : "";
    };
    const std::string lo = count("minLength");
    // No control character: one would end the value early or be a newline the reader drops.
    body = "[^\\x00-\\x1f]{" + (lo.empty() ? "0" : lo) + "," + count("maxLength") + "}";
  } else {
    const json values = prop.contains("const") ? json::array({prop["const"]}) : prop.value("enum", json());
    if (!values.is_array() || values.empty()) return "";
    for (const json& v : values) {
      if (!v.is_string()) return "";
      body += (body.empty() ? "" : "|") + regex_escape(v.get<std::string>());
    }
  }
  return "\\n(" + body + ")\\n";
}

json xml_parameter(const std::string& name, const json& prop) {
  const std::string open = "<parameter=" + name + ">";
  if (read_as_json(prop)) return seq({text(open + "\n"), json_value(prop), text("\n</parameter>\n")});
  const std::string re = raw_value_regex(prop);
  if (!re.empty()) return seq({text(open), {{"type", "regex"}, {"pattern", re}}, text("</parameter>\n")});
  // Any text up to the closing tag (the template's newlines included).
  return {{"type", "tag"}, {"begin", open}, {"content", {{"type", "any_text"}}}, {"end", "</parameter>\n"}};
}

json xml_parameters(const json& schema) {
  json out = json::array({text("\n")});
  if (!schema.is_object() || !schema.contains("properties") || !schema["properties"].is_object()) return out[0];
  std::set<std::string> required;
  for (const json& r : schema.value("required", json::array()))
    if (r.is_string()) required.insert(r.get<std::string>());
  for (const auto& [name, prop] : schema["properties"].items()) {
    json p = xml_parameter(name, prop);
    out.push_back(required.count(name) ? std::move(p) : optional(std::move(p)));
  }
  return seq(std::move(out));
}

// ---- BARE_KEYS ----

class BareKeys {
 public:
  BareKeys(const json& root, std::string quote) : root_(root), q_(std::move(quote)) {}

  json value(const json& s, int depth = 0) {
    if (depth > kMaxDepth || s.is_boolean() || !s.is_object()) return any();
    if (s.contains("$ref") && s["$ref"].is_string()) return value(resolve(s["$ref"]), depth + 1);
    if (s.contains("const")) return text(literal(s["const"]));
    if (s.contains("enum") && s["enum"].is_array() && !s["enum"].empty()) {
      json alts = json::array();
      for (const json& v : s["enum"]) alts.push_back(text(literal(v)));
      return any_of(std::move(alts));
    }
    for (const char* k : {"anyOf", "oneOf"})
      if (s.contains(k) && s[k].is_array() && !s[k].empty()) {
        json alts = json::array();
        for (const json& sub : s[k]) alts.push_back(value(sub, depth + 1));
        return any_of(std::move(alts));
      }
    if (s.contains("type") && s["type"].is_array()) {
      json alts = json::array();
      for (const json& t : s["type"]) {
        json one = s;
        one["type"] = t;
        alts.push_back(value(one, depth));
      }
      return alts.empty() ? any() : any_of(std::move(alts));
    }
    const std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>()
                             : s.contains("properties")                  ? "object"
                             : s.contains("items")                       ? "array"
                                                                         : "";
    if (type == "string") return string(s);
    if (type == "integer" || type == "number") return json_value(s);  // the same text as JSON
    if (type == "boolean") return any_of({text("true"), text("false")});
    if (type == "null") return text("null");
    if (type == "array") return array(s, depth);
    if (type == "object") return object(s, depth);
    return any();
  }

 private:
  static constexpr int kMaxDepth = 8;

  const json& resolve(const std::string& ref) const {
    static const json kAny = json::object();
    if (ref == "#") return root_;
    if (ref.rfind("#/", 0) != 0) return kAny;
    const json* at = &root_;
    size_t b = 2;
    while (b <= ref.size()) {
      const size_t e = std::min(ref.find('/', b), ref.size());
      const std::string key = ref.substr(b, e - b);
      if (!at->is_object() || !at->contains(key)) return kAny;
      at = &(*at)[key];
      b = e + 1;
    }
    return *at;
  }

  std::string literal(const json& v) const {
    if (v.is_string()) return q_ + v.get<std::string>() + q_;
    if (v.is_array()) {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + literal(v[i]);
      return out + "]";
    }
    if (v.is_object()) {
      std::map<std::string, const json*> sorted;
      for (const auto& [k, x] : v.items()) sorted[k] = &x;
      std::string out = "{";
      for (const auto& [k, x] : sorted) out += (out.size() > 1 ? "," : "") + k + ":" + literal(*x);
      return out + "}";
    }
    return v.dump();
  }

  json string(const json& s) const {
    std::string body;
    if (s.contains("pattern") && s["pattern"].is_string()) {
      body = s["pattern"].get<std::string>();  // XGrammar's regex matches whole: no anchors
      if (!body.empty() && body.front() == '^') body.erase(0, 1);
      if (body.size() > 1 && body.back() == '$' && body[body.size() - 2] != '\\') body.pop_back();
      if (body.empty()) body = "[^\"]*";
    } else if (s.contains("format") && s["format"].is_string() && !format_regex(s["format"]).empty()) {
      body = format_regex(s["format"]);  // no '"' in any of them
    } else {
      auto count = [&](const char* k, int64_t dflt) {
        return s.contains(k) && s[k].is_number_integer() && s[k].get<int64_t>() >= 0 ? s[k].get<int64_t>() : dflt;
      };
      const int64_t lo = count("minLength", 0), hi = count("maxLength", -1);
      if (hi == 0) return text(q_ + q_);
      body = lo == 0 && hi < 0 ? "[^\"]*" : "[^\"]{" + std::to_string(lo) + "," + (hi >= 0 ? std::to_string(hi) : "") + "}";
    }
    return seq({text(q_), {{"type", "regex"}, {"pattern", body}}, text(q_)});
  }

  json array(const json& s, int depth) {
    auto count = [&](const char* k, int64_t dflt) {
      return s.contains(k) && s[k].is_number_integer() && s[k].get<int64_t>() >= 0 ? s[k].get<int64_t>() : dflt;
    };
    const int64_t lo = count("minItems", 0), hi = count("maxItems", -1);
    if (hi == 0) return text("[]");
    const json item = value(s.contains("items") ? s["items"] : json(true), depth + 1);
    const json more = seq({text(","), item});
    json tail = hi < 0 ? (lo <= 1 ? json{{"type", "star"}, {"content", more}}
                                  : json{{"type", "repeat"}, {"min", lo - 1}, {"max", -1}, {"content", more}})
                       : json{{"type", "repeat"}, {"min", std::max<int64_t>(lo - 1, 0)}, {"max", hi - 1}, {"content", more}};
    json body = hi == 1 ? item : seq({item, std::move(tail)});
    if (lo == 0) body = optional(std::move(body));
    return seq({text("["), std::move(body), text("]")});
  }

  // Properties in sorted order, "," between the present ones: a comma goes after each optional
  // property before the first required one and before each property after it (linear in size);
  // with none required, one branch per first present property.
  json object(const json& s, int depth) {
    if (!s.contains("properties") || !s["properties"].is_object() || s["properties"].empty()) {
      const bool closed = s.contains("additionalProperties") && s["additionalProperties"] == false;
      return closed ? text("{}") : any_object();
    }
    std::map<std::string, const json*> props;
    for (const auto& [k, p] : s["properties"].items()) props[k] = &p;
    std::set<std::string> required;
    for (const json& r : s.value("required", json::array()))
      if (r.is_string() && props.count(r.get<std::string>())) required.insert(r.get<std::string>());
    std::vector<std::pair<std::string, json>> items;
    for (const auto& [k, p] : props) items.emplace_back(k, seq({text(k + ":"), value(*p, depth + 1)}));
    json out = json::array({text("{")});
    if (!required.empty()) {
      bool seen = false;
      for (auto& [k, p] : items) {
        const bool req = required.count(k) > 0;
        if (!seen && !req) out.push_back(optional(seq({p, text(",")})));
        else if (!seen) out.push_back(p), seen = true;
        else out.push_back(req ? seq({text(","), p}) : optional(seq({text(","), p})));
      }
    } else {
      json firsts = json::array();
      for (size_t i = 0; i < items.size(); ++i) {
        json branch = json::array({items[i].second});
        for (size_t j = i + 1; j < items.size(); ++j) branch.push_back(optional(seq({text(","), items[j].second})));
        firsts.push_back(seq(std::move(branch)));
      }
      out.push_back(optional(any_of(std::move(firsts))));
    }
    out.push_back(text("}"));
    return seq(std::move(out));
  }

  std::string ebnf(const std::string& root) const {
    return "root ::= " + root + "\n"
           "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
           "object ::= \"{\" (pair (\",\" pair)*)? \"}\"\n"
           "pair ::= [a-zA-Z_] [a-zA-Z0-9_]* \":\" value\n"
           "array ::= \"[\" (value (\",\" value)*)? \"]\"\n"
           "string ::= " + json(q_).dump() + " [^\"]* " + json(q_).dump() + "\n"
           "number ::= \"-\"? ([0-9] | [1-9] [0-9]+) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)?\n";
  }
  json any() const { return {{"type", "grammar"}, {"grammar", ebnf("value")}}; }
  json any_object() const { return {{"type", "grammar"}, {"grammar", ebnf("object")}}; }

  const json& root_;
  std::string q_;
};

}  // namespace

json arguments_format(const json& schema, ArgsSyntax syntax, const std::string& quote) {
  switch (syntax) {
    case ArgsSyntax::JSON: return json_value(schema);
    case ArgsSyntax::XML_PARAMETERS: return xml_parameters(schema);
    case ArgsSyntax::BARE_KEYS: {
      if (quote.empty() || quote.find('"') == std::string::npos)
        throw_error(ErrorCode::INVALID_ARGUMENT, "tool call grammar: bare-key arguments need a quote holding '\"'");
      BareKeys b(schema, quote);
      json s = schema.is_object() && !schema.contains("type") && !schema.contains("properties") ? json{{"type", "object"}}
                                                                                                 : schema;
      return b.value(s);
    }
  }
  return json_value(schema);
}

}  // namespace oxyd::grammar
