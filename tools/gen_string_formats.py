#!/usr/bin/env python3
"""String-format cases for tests/grammar (tool_args' format regexes, issue 25): per JSON Schema
format, strings labelled valid/invalid by the `jsonschema` package's FormatChecker (Draft 2020-12,
with its format extras: rfc3339-validator, isoduration, fqdn, rfc3987), the oracle. "canonical" are
the forms a model writes for the format (each must be labelled valid); "cases" are those plus
seeded mutations of them (a character deleted, inserted, replaced or duplicated), most of them
invalid. The test checks that the grammar accepts every canonical string and no invalid case.

    python -m venv v && v/bin/pip install "jsonschema[format]==4.26.0"
    v/bin/python tools/gen_string_formats.py > tests/data/grammar/string_formats.json
"""
import importlib.metadata
import json
import random

import jsonschema

R = random.Random(2025)
CANONICAL = {
    "date": ["2024-02-29", "2023-12-31", "1999-01-01", "2000-02-29", "2024-04-30", "0001-11-09"],
    "time": ["12:30:45Z", "00:00:00+01:00", "23:59:59.123456-08:30", "08:05:09z"],
    "date-time": ["2024-05-17T12:30:45Z", "1985-04-12T23:20:50.52Z", "1996-12-19T16:39:57-08:00",
                  "2024-02-29t00:00:00+05:30"],
    "duration": ["P3D", "PT1H30M", "P1Y2M10DT2H30M", "P4W", "PT45S", "P1M", "PT10M5S"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "F47AC10B-58CC-4372-A567-0E02B2C3D479"],
    "ipv4": ["192.168.0.1", "10.0.0.255", "8.8.8.8", "255.255.255.0", "0.0.0.0"],
    "hostname": ["example.com", "a-b.c-d.example", "localhost", "xn--bcher-kva.example", "host1.sub2.org"],
    "email": ["user@example.com", "first.last+tag@sub.example.org", "a_b-c@host", "x!#$%&'*+/=?^_`{|}~@y.z"],
    "uri": ["https://example.com/path?q=1#frag", "http://user:pw@host:8080/a/b/", "mailto:someone@example.com",
            "urn:isbn:0451450523", "file:///etc/hosts", "ftp://ftp.example.org/pub/%20x", "tel:+1-816-555-1212",
            "https://example.com"],
}
ALPHABET = "0123456789aZz-:.+T@/%#?_ "


def mutations(s: str, n: int) -> list[str]:
    out = []
    for _ in range(n):
        i = R.randrange(len(s) + 1)
        c = R.choice(ALPHABET)
        kind = R.randrange(4)
        if kind == 0 and i < len(s):
            m = s[:i] + s[i + 1:]
        elif kind == 1:
            m = s[:i] + c + s[i:]
        elif kind == 2 and i < len(s):
            m = s[:i] + c + s[i + 1:]
        else:
            m = s[:i] + s[i - 1:] if i else s + s[-1]
        out.append(m)
    return out


def main() -> None:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    out = {"generator": "tools/gen_string_formats.py", "jsonschema": importlib.metadata.version("jsonschema"),
           "formats": {}}
    for fmt, canon in CANONICAL.items():
        assert fmt in checker.checkers, f"the checker has no {fmt} (install jsonschema[format])"
        for s in canon:
            assert checker.conforms(s, fmt), (fmt, s)
        cases = dict.fromkeys(canon)
        for s in canon:
            cases.update(dict.fromkeys(mutations(s, 60)))
        out["formats"][fmt] = {"canonical": canon,
                               "cases": [[s, checker.conforms(s, fmt)] for s in cases]}
    json.dump(out, __import__("sys").stdout, indent=0, ensure_ascii=False)


if __name__ == "__main__":
    main()
