#!/usr/bin/env python3
"""JSON-Schema suite for tests/grammar: seeded random schemas (the subset OpenAI strict mode,
pydantic and zod emit: nested objects, arrays with min/maxItems, required, additionalProperties,
$defs/$ref, anyOf, enum, const, string min/maxLength and pattern, integer/number bounds, booleans,
null), each with instances labelled valid/invalid by the `jsonschema` package (Draft 2020-12),
the oracle. Instances are written as json.dumps writes them (", " and ": "), the whitespace the
grammar layer compiles schemas with, and with keys in the schema's property order (XGrammar keeps
the declared order, which JSON Schema does not constrain).

Left out, as a grammar cannot or XGrammar does not decide them: uniqueItems, oneOf (treated as
anyOf), allOf, not, dependentRequired, if/then/else, and floats that are integral (1.0 is an
integer to JSON Schema, not to a grammar).

    python tools/gen_json_schema_suite.py > tests/data/grammar/json_schema_suite.json
"""
import copy
import importlib.metadata
import json
import random
import sys

import jsonschema

R = random.Random(25)
WORDS = ["id", "name", "age", "tags", "city", "kind", "meta", "score", "items", "note", "flag", "x", "y", "owner"]
PATTERNS = [("^[a-z]{2,5}$", ["ab", "hello"], ["A", "toolong", "a1"]),
            ("^[0-9]{3}-[0-9]{2}$", ["123-45"], ["12-345", "abc"]),
            ("^(red|green|blue)$", ["red", "blue"], ["yellow", "Red"])]


def gen_schema(depth, defs):
    kinds = ["string", "integer", "number", "boolean", "enum", "const", "null"]
    if depth > 0:
        kinds += ["object", "object", "array", "anyOf", "ref"]
    k = R.choice(kinds)
    if k == "string":
        s = {"type": "string"}
        r = R.random()
        if r < 0.3:
            s["minLength"] = R.randint(0, 3)
            s["maxLength"] = s["minLength"] + R.randint(0, 6)
        elif r < 0.5:
            p = R.choice(PATTERNS)
            s["pattern"] = p[0]
        return s
    if k == "integer":
        s = {"type": "integer"}
        if R.random() < 0.6:
            s["minimum"] = R.randint(-50, 50)
            s["maximum"] = s["minimum"] + R.randint(0, 100)
        elif R.random() < 0.3:
            s["exclusiveMinimum"] = R.randint(-5, 5)
        return s
    if k == "number":
        s = {"type": "number"}
        if R.random() < 0.4:
            s["minimum"] = R.randint(-10, 0)
            s["maximum"] = R.randint(1, 10)
        return s
    if k == "boolean":
        return {"type": "boolean"}
    if k == "null":
        return {"type": "null"}
    if k == "enum":
        return {"enum": R.sample(["a", "b", "c d", 1, 2, True, None, "é"], R.randint(1, 4))}
    if k == "const":
        return {"const": R.choice(["fixed", 7, False, "x\"y"])}
    if k == "object":
        n = R.randint(0, 4)
        names = R.sample(WORDS, n)
        props = {p: gen_schema(depth - 1, defs) for p in names}
        s = {"type": "object", "properties": props}
        req = [p for p in names if R.random() < 0.6]
        if req:
            s["required"] = req
        s["additionalProperties"] = False
        return s
    if k == "array":
        s = {"type": "array", "items": gen_schema(depth - 1, defs)}
        if R.random() < 0.6:
            s["minItems"] = R.randint(0, 2)
            s["maxItems"] = s["minItems"] + R.randint(0, 3)
        return s
    if k == "anyOf":
        return {"anyOf": [gen_schema(depth - 1, defs) for _ in range(R.randint(2, 3))]}
    # ref
    name = "D%d" % len(defs)
    defs[name] = None  # reserved before recursing, so nested refs get other names
    defs[name] = gen_schema(depth - 1, defs)
    return {"$ref": "#/$defs/" + name}


def resolve(s, defs):
    while "$ref" in s:
        s = defs[s["$ref"].split("/")[-1]]
    return s


def gen_value(s, defs, depth=0):
    """A value meant to be valid (checked by the oracle anyway)."""
    s = resolve(s, defs)
    if "anyOf" in s:
        return gen_value(R.choice(s["anyOf"]), defs, depth)
    if "enum" in s:
        return R.choice(s["enum"])
    if "const" in s:
        return s["const"]
    t = s["type"]
    if t == "string":
        if "pattern" in s:
            return R.choice([p for p in PATTERNS if p[0] == s["pattern"]][0][1])
        lo, hi = s.get("minLength", 0), s.get("maxLength", 6)
        return "".join(R.choice("abc xyzé\"\\\n") for _ in range(R.randint(lo, hi)))
    if t == "integer":
        lo = s.get("minimum", s.get("exclusiveMinimum", -1000) + 1)
        return R.randint(lo, s.get("maximum", lo + 2000))
    if t == "number":
        v = round(R.uniform(s.get("minimum", -100), s.get("maximum", 100)), 2)
        return v if v != int(v) else v + 0.25 if v + 0.25 <= s.get("maximum", 1e9) else v - 0.25
    if t == "boolean":
        return R.random() < 0.5
    if t == "null":
        return None
    if t == "array":
        lo = s.get("minItems", 0)
        return [gen_value(s["items"], defs, depth + 1) for _ in range(R.randint(lo, s.get("maxItems", lo + 2)))]
    out = {}
    for p, ps in s.get("properties", {}).items():
        if p in s.get("required", []) or R.random() < 0.5:
            out[p] = gen_value(ps, defs, depth + 1)
    return out


def mutations(v, s, defs):
    """Values near a valid one that are likely invalid."""
    s = resolve(s, defs)
    out = [R.choice([123, "str", True, None, [], {}, 1.5])]
    if isinstance(v, dict):
        props = list(s.get("properties", {}).keys())
        for p in s.get("required", []):
            if p in v:
                w = {k: x for k, x in v.items() if k != p}
                out.append(w)
        w = dict(v)
        w["zz_extra"] = 1
        out.append(w)
        for p in props:
            if p in v:
                for m in mutations(v[p], s["properties"][p], defs)[:2]:
                    w = dict(v)
                    w[p] = m
                    out.append(w)
    elif isinstance(v, list):
        out.append(v + [v[0]] * 4 if v else [None])
        if v:
            out.append(v[:-1])
            for m in mutations(v[0], resolve(s, defs).get("items", {}), defs)[:2]:
                out.append([m] + v[1:])
    elif isinstance(v, str):
        out += [v + "QQ9", "", v * 3, 5]
    elif isinstance(v, bool):
        out.append("true")
    elif isinstance(v, int):
        out += [v + 1000, v - 1000, v + 0.5, str(v)]
    elif isinstance(v, float):
        out += [v + 1000.5, -v - 1000.25]
    return out


def ordered(v, s, defs):
    """v with object keys in the schema's property order (recursively; anyOf picks the first fit)."""
    s = resolve(s, defs)
    if "anyOf" in s:
        for b in s["anyOf"]:
            if jsonschema.Draft202012Validator({**resolve(b, defs), "$defs": defs}).is_valid(v):
                return ordered(v, b, defs)
        return v
    if isinstance(v, dict) and "properties" in s:
        keys = [k for k in s["properties"] if k in v] + [k for k in v if k not in s["properties"]]
        return {k: ordered(v[k], s["properties"].get(k, {}), defs) for k in keys}
    if isinstance(v, list) and "items" in s:
        return [ordered(x, s["items"], defs) for x in v]
    return v


def main():
    suite = []
    while len(suite) < 300:
        defs = {}
        body = gen_schema(R.choice([1, 2, 2, 3]), defs)
        root = resolve(body, defs)
        if root.get("type") != "object" and R.random() < 0.7:
            continue  # mostly objects, as response_format schemas are
        schema = copy.deepcopy(body)
        if defs:
            schema["$defs"] = defs
        validator = jsonschema.Draft202012Validator(schema)
        cands = []
        for _ in range(4):
            v = gen_value(body, defs)
            cands.append(v)
            cands += mutations(v, body, defs)
        seen, instances = set(), []
        for v in cands:
            v = ordered(v, body, defs)
            text = json.dumps(v, ensure_ascii=R.random() < 0.5)
            if text in seen:
                continue
            seen.add(text)
            instances.append({"json": text, "valid": validator.is_valid(v)})
        if not any(i["valid"] for i in instances) or all(i["valid"] for i in instances):
            continue
        suite.append({"schema": schema, "instances": instances})
    n_inst = sum(len(c["instances"]) for c in suite)
    n_valid = sum(i["valid"] for c in suite for i in c["instances"])
    json.dump({"generator": "tools/gen_json_schema_suite.py", "oracle": "jsonschema " + importlib.metadata.version("jsonschema"),
               "num_schemas": len(suite), "num_instances": n_inst, "num_valid": n_valid, "cases": suite},
              sys.stdout, indent=None, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
