#!/usr/bin/env python3
"""Language-feature goldens for the Jinja engine, rendered by transformers' own chat-template
environment (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its tojson,
raise_exception, namespace, dict; strftime_now pinned as in gen_template_goldens.py).

Run from the repo root:
    /work/venv/bin/python tools/gen_jinja_feature_goldens.py
Writes tests/data/chat/features.jsonl: {"template", "context", "output"} or {..., "error", "error_type"}.
"""
import copy
import datetime
import json
import os

from transformers.utils import chat_template_utils as ctu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED_NOW = datetime.datetime(2025, 7, 26, 14, 5, 9)

M = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
     {"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}]
CTX = {"messages": M, "s": "  Hello, World!  ", "n": 7, "f": 2.5, "l": [3, 1, 2], "d": {"b": 2, "a": 1, "C": 3},
       "u": "Grüße 你好 🎉", "e": "", "z": None, "t": True, "nested": {"x": {"y": [1, {"z": "deep"}]}},
       "words": ["apple", "Banana", "cherry", "apple"], "objs": [{"name": "b", "v": 2}, {"name": "a", "v": 1},
                                                                  {"name": "c", "v": 3, "hidden": True}]}

CASES = [
    # output of Python values
    "{{ 1 }}|{{ 1.0 }}|{{ 1.5e20 }}|{{ 1e-7 }}|{{ 0.1 + 0.2 }}|{{ -0.0 }}|{{ 10 / 4 }}|{{ 10 / 5 }}",
    "{{ true }}|{{ True }}|{{ none }}|{{ None }}|{{ false }}|{{ z }}|{{ t }}",
    "{{ [1, 'a', \"b'c\", 'd\"e', none, true, 1.5] }}",
    "{{ {'a': 1, 'b': [1, 2], 'c': {'d': none}} }}|{{ d }}|{{ (1,) }}|{{ (1, 2) }}|{{ () }}",
    "{{ ['tab\\there', 'nl\\n', 'bs\\\\', '\\x01', 'é', '\\u200b', '\\xa0'] }}",
    "{{ u }}|{{ [u] }}|{{ u|length }}|{{ u[0] }}{{ u[-1] }}|{{ u[::-1] }}|{{ u|upper }}",
    "{{ 'a\\'b' }}|{{ \"a\\\"b\" }}|{{ 'x\\ny' }}|{{ 'oct\\101' }}|{{ 'u\\u00e9' }}|{{ 'keep\\d' }}",
    # arithmetic
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}",
    "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2.0 ** 3 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 'a' ~ 1 ~ none ~ true }}",
    "{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ -2 ** 2 }} {{ 2 * -1 }} {{ +3 }} {{ n - f }}",
    "{{ 'a' + 1 }}", "{{ [1] + 'a' }}", "{{ 1 + 'a' }}", "{{ 1 / 0 }}", "{{ 1 // 0 }}", "{{ 1 % 0 }}",
    "{{ 'ab' * 2.0 }}", "{{ undefined_var + 1 }}", "{{ -'a' }}",
    # comparisons and logic
    "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 != 2 }}",
    "{{ 'a' in 'cat' }} {{ 2 in l }} {{ 'a' in d }} {{ 'zz' not in d }} {{ 5 not in l }}",
    "{{ 1 and 2 }} {{ 0 and 2 }} {{ 0 or 'x' }} {{ '' or none }} {{ not 0 }} {{ not none and 1 }}",
    "{{ 1 < 'a' }}", "{{ 1 in 'abc' }}", "{{ 'a' in 5 }}", "{{ 'a' in z }}",
    "{{ 'yes' if t else 'no' }} {{ 'yes' if z else 'no' }} [{{ 'x' if z }}] {{ 1 if 0 else 2 if 0 else 3 }}",
    # attribute / item access
    "{{ messages[0].role }} {{ messages[-1]['content'] }} {{ nested.x.y[1].z }} {{ nested['x']['y'][0] }}",
    "[{{ messages[0].missing }}] [{{ d.nope }}] [{{ l[10] }}] {{ messages[0].missing is defined }}",
    "{{ messages[0].missing.deeper }}", "{{ l[10].x }}", "{{ undefined_var.x }}", "{{ z.x }}", "{{ z[0] }}",
    "{{ d.items is callable }}", "{{ d['items'] is callable }} {{ d['a'] }}", "{{ l.0 }} {{ messages.0.role }}",
    # slicing
    "{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ l[5:] }} {{ l[1:2] }} {{ l[::-2] }}",
    "{{ s[2:7] }}|{{ s[::-1] }}|{{ s[-3:-1] }}|{{ 'abcdef'[4:1:-1] }}|{{ 'abc'[10:] }}", "{{ l[::0] }}",
    # string methods
    "[{{ s.strip() }}] [{{ s.lstrip() }}] [{{ s.rstrip() }}] [{{ 'xxhixx'.strip('x') }}] [{{ '\\n\\nab\\n'.strip('\\n') }}]",
    "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a,b,c'.rsplit(',', 1) }}",
    "{{ 'x</think>y'.split('</think>')[0] }} {{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }}",
    "{{ 'aXbX'.replace('X', '-') }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}",
    "{{ 'ab'.upper() }} {{ 'AB'.lower() }} {{ '-'.join(['a', 'b']) }} {{ 'abcabc'.find('c') }} {{ 'abc'.count('b') }}",
    "{{ '{} and {}'.format(1, 'x') }} {{ '{0}{0}'.format('z') }} {{ '{a}!'.format(a=5) }}",
    "{{ 'a\\nb\\r\\nc'.splitlines() }} {{ '42'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }}",
    "{{ s.nosuchmethod() }}", "{{ 'abc'.split('') }}", "{{ ''.join([1, 2]) }}",
    # dict / list methods
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {{ d.keys() | list }} {{ d.values() | list }}",
    "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dflt') }} {{ l.index(1) }} {{ l.count(3) }}",
    "{{ l.append(4) }}", "{{ d.update({'x': 1}) }}", "{{ l.pop() }}", "{{ s.__class__ }}",
    # filters
    "{{ l|length }} {{ s|length }} {{ d|length }} {{ l|first }} {{ l|last }} {{ l|sum }} {{ l|min }} {{ l|max }}",
    "{{ l|sort }} {{ l|sort(reverse=true) }} {{ words|sort }} {{ words|sort(case_sensitive=true) }} {{ words|unique|list }}",
    "{{ objs|sort(attribute='name')|map(attribute='name')|join(',') }} {{ objs|sum(attribute='v') }}",
    "{{ objs|selectattr('hidden')|map(attribute='name')|list }} {{ objs|rejectattr('hidden')|map(attribute='name')|list }}",
    "{{ objs|selectattr('name', 'equalto', 'a')|list }} {{ objs|selectattr('hidden', 'defined')|list|length }}",
    "{{ l|select('odd')|list }} {{ l|reject('odd')|list }} {{ l|map('string')|join('-') }} {{ words|map('upper')|list }}",
    "{{ d|dictsort }} {{ d|dictsort(true) }} {{ d|dictsort(by='value', reverse=true) }} {{ d|items|list }}",
    "{{ s|trim }}|{{ s|trim('! ') }}|{{ s|upper }}|{{ s|lower }}|{{ 'ab cd'|title }}|{{ 'aB'|capitalize }}",
    "{{ s|replace('l', 'L') }}|{{ 'x'|default('y') }}|{{ nope|default('y') }}|{{ ''|default('y', true) }}|{{ z|default('y') }}",
    "{{ 3.14159|round(2) }} {{ 2.5|round }} {{ 3.5|round }} {{ 7|round }} {{ 2.567|round(1, 'floor') }} {{ 2.1|round(0, 'ceil') }}",
    "{{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 'q'|float }} {{ 1|float }}",
    "{{ -3|abs }} {{ (-3)|abs }} {{ -2.5|abs }} {{ l|list }} {{ 'abc'|list }} {{ l|reverse|list }} {{ 'abc'|reverse }}",
    "{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(first=true, blank=true) }}|{{ 'x'|indent('> ') }}",
    "{{ l|join }} {{ l|join(', ') }} {{ objs|join(',', attribute='name') }} {{ [1, nope, 2]|join('|') }}",
    "{{ 'one two  three'|wordcount }} {{ l|batch(2)|list }} {{ l|batch(2, 0)|list }} {{ '<a&b>'|e }} {{ 'x'|safe }}",
    "{{ '%s-%d'|format('a', 3) }} {{ 'hi %s' % 'there' }} {{ '%s and %s' % ('a', 'b') }} {{ 'x'|center(5) }}|",
    "{{ nope|length }} {{ nope|list }} [{{ nope|join }}] [{{ nope|trim }}] {{ nope|items|list }} [{{ nope|upper }}]",
    "{{ z|length }}", "{{ 5|length }}", "{{ z|items|list }}", "{{ 'a'|items|list }}", "{{ l|nosuchfilter }}",
    "{{ nope|tojson }}", "{{ [1, 2]|first|upper }}",
    # tojson
    "{{ messages|tojson }}", "{{ d|tojson(indent=2) }}", "{{ l|tojson(separators=(',', ':')) }}",
    "{{ d|tojson(sort_keys=true) }}", "{{ u|tojson }} {{ u|tojson(ensure_ascii=true) }}",
    "{{ {'a': 'x\"y\\\\z\\n\\t\\u0001', 'b': [1.0, 2.5, none, true]}|tojson }}", "{{ {}|tojson }} {{ []|tojson(indent=2) }}",
    "{{ {'k': {'n': [1, {'m': []}]}}|tojson(indent=4) }}", "{{ 'a'|tojson(indent='\\t') }} {{ {'a': [1]}|tojson(indent='--') }}",
    "{{ {1: 'int key', true: 'b'}|tojson }}", "{{ (1, 'a')|tojson }}",
    # tests
    "{{ n is number }} {{ f is float }} {{ n is integer }} {{ t is boolean }} {{ s is string }} {{ d is mapping }} {{ l is iterable }}",
    "{{ l is sequence }} {{ s is sequence }} {{ n is sequence }} {{ d is sequence }} {{ nope is sequence }} {{ nope is iterable }}",
    "{{ n is odd }} {{ n is even }} {{ n is divisibleby 7 }} {{ n is divisibleby(2) }} {{ 'ab' is lower }} {{ 'AB' is upper }}",
    "{{ z is none }} {{ z is not none }} {{ nope is undefined }} {{ nope is not defined }} {{ t is true }} {{ t is false }} {{ 1 is true }}",
    "{{ n is eq 7 }} {{ n is equalto 7 }} {{ n is ne 7 }} {{ n is gt 3 }} {{ n is lt 3 }} {{ n is ge 7 }} {{ 2 is in l }} {{ 'x' is in 'xyz' }}",
    "{{ range is callable }} {{ n is callable }} {{ 'upper' is filter }} {{ 'odd' is test }} {{ z is sameas none }}",
    "{{ nope is odd }}", "{{ n is nosuchtest }}", "{% if n is nosuchtest %}a{% endif %}", "{% if false %}{{ n|nosuch }}{% endif %}ok",
    "{{ 1 if n is nosuchtest else 2 }}", "{{ 1 if false else n|nosuch }}", "{% if true %}{% for x in l %}{{ x|nosuch }}{% endfor %}{% endif %}",
    # statements
    "{% for x in l %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}",
    "{% for x in l %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }}|{% endfor %}",
    "{% for x in l if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% else %}none{% endfor %}",
    "{% for x in [] %}x{% else %}empty{% endfor %} {% for x in nope %}x{% else %}undef-empty{% endfor %}",
    "{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }} {% endfor %}{% for k in d %}{{ k }}{% endfor %}{% for c in 'hé' %}[{{ c }}]{% endfor %}",
    "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x > 4 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "{% for x in l %}{{ loop.cycle('a', 'b') }}{% endfor %} {% for x in [1, 1, 2] %}{{ loop.changed(x) }}{% endfor %}",
    "{% for x in [[1, 2], [3]] %}{% for y in x %}{{ loop.index }}{{ y }}{% endfor %}|{{ loop.index }}{% endfor %}",
    "{% for n in [{'v': 1, 'c': [{'v': 2, 'c': [{'v': 3}]}]}, {'v': 4}] recursive %}<{{ n.v }}:{{ loop.depth }}{% if n.c %}[{{ loop(n.c) }}]{% endif %}>{% endfor %}",
    "{% for x in l %}{{ loop(l) }}{% endfor %}",
    "{% for x in z %}{% endfor %}", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", "{% for x in 5 %}{% endfor %}",
    "{% set x = 1 %}{% for i in l %}{% set x = i %}{% endfor %}{{ x }}",
    "{% set ns = namespace(x=1, items=[]) %}{% for i in l %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }} {{ ns }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = (3, 4) %}{{ c }}{% set t = 5, %}{{ t }}",
    "{% set blk %}inner {{ n }}{% endset %}[{{ blk }}]{% set up | upper %}shout{% endset %}{{ up }}",
    "{% set x = 1 %}{% set x.y = 2 %}", "{% set ns = namespace() %}{% set ns._p = 1 %}", "{{ namespace(_x=1) }}",
    "{% if n > 5 %}big{% elif n > 2 %}mid{% else %}small{% endif %}{% if z %}x{% elif 0 %}y{% endif %}",
    "{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('Bob') }} {{ greet('Al', punct='?') }} {{ greet() }}",
    "{% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}",
    "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ n }}{% endcall %}",
    "{% macro lst(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) lst([1, 2]) %}<{{ item }}>{% endcall %}",
    "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}",
    "{% filter upper %}shout {{ n }}{% endfilter %} {% filter replace('a', 'o')|upper %}banana{% endfilter %}",
    "{% raw %}{{ not rendered }} {% if %}{% endraw %}|{%- raw -%}  x  {%- endraw -%}|",
    "{% with a = 1, b = n %}{{ a + b }}{% endwith %}{{ a }}",
    "{% generation %}gen {{ n }}{% endgeneration %}",
    "{{ raise_exception('custom failure: ' ~ n) }}", "{% if true %}{{ raise_exception('inside if') }}{% endif %}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S %d %b %Y %A %j') }}",
    "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}",
    "{{ range(1000000) }}", "{{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }} {{ dict({'q': 1}, r=2) }}",
    "{{ x }}{% set x = 5 %}{{ x }}", "{% for i in range(3) %}{% set y = i %}{{ y }}{% endfor %}[{{ y }}]",
    # whitespace control and trim/lstrip blocks
    "a\n  {% if true %}\n    b\n  {% endif %}\nc\n",
    "a  {%- if true -%}  b  {%- endif -%}  c",
    "a\n  {%+ if true %}b{% endif %}\n",
    "x\n  {# comment #}\ny\n  {#- c2 -#}\n  z",
    "{{ 'a' -}}\n\n  {{- 'b' }}\n{{ 'c' }}\n\n",
    "line1\n{% for i in l %}\n  item {{ i }}\n{% endfor %}\nend",
    "  {% set x = 1 %}  text\n\t{% if x %}\tindented\n\t{% endif %}",
    "a\r\nb\r\n{% if true %}\r\nc\r\n{% endif %}\r\n",
    "{{ 1 }}  {% if true %}  {{ 2 }}  {% endif %}  {{ 3 }}\n",
    "{%- for m in messages %}\n{{- m.role }}:{{ m.content }}\n{% endfor -%}\n",
    # regressions found by differential fuzzing against jinja2
    "{{ n > 'a' }}", "{{ n >= [1] }}", "{{ 'a' < n }}", "{{ n is gt 'x' }}", "{{ 5|truncate(2) }}", "{{ d in d }}",
    "{{ l|indent }}", "{{ n|last }}", "{{ n|reverse }}", "{{ (1, 2).index(5) }}", "{{ l.index(9) }}", "{{ 2.5 ** 1000 }}",
    "{{ '{} {0}'.format(1) }}", "{{ '{'.format(1) }}", "{{ '{a'.format(1) }}", "{{ '{k}'.format(1) }}", "{{ '{3}'.format(1) }}",
    "{{ 'x' % d }} {{ 'x' % l }}", "{{ 'x' % n }}", "{{ l[] }}", "{{ range(05)|list }}", "{{ [0.5_] }}", "{{ 1_000 + 0.5 }}",
    "{{ l|join(attricute='x') }}", "{{ 'a'|indent(fkrst=true) }}", "{{ l|batch }}", "{{ d|tojson(irdent=2) }}",
    "{{ n is defined(1) }}", "{{ n is divisibleby }}", "{{ n is eq(1, 2) }}", "{{ n is callable(1) }}", "{{ 'upper' is filter 1 }}",
    "{{ nope is callable }} {{ range is callable }}", "{{ nope|dictsort }}", "{{ dict(nope) }}", "{{ l|map(attr='x')|list }}",
    "{{ l|select('nosuchtest')|list }}", "{{ l|map(nope)|list }}", "{% set nope.x = 1 %}", "{% set n.x = nope.y %}",
    "a\x1cb\x1d{{ 1 }}\x1e", "a\rb\r\n{% if true %}\r\nc{% endif %}",
    # markupsafe.Markup from |safe / |escape: `+`, join and str methods escape plain operands
    "{{ '<a>'|safe + '<b>' }} {{ '<b>' + 'x'|safe }} {{ ('<'|e) ~ '<' }} {{ (' <x> '|safe).strip() + '&' }}",
    "{{ ('|'|safe).join(['<', 'a'|safe]) }} {{ '<'|e|e }} {{ '<'|forceescape|forceescape }} {{ ('a'|safe|upper) + '<' }}",
    "{{ ('x'|safe) * 2 + '<' }} {{ ('<t>'|tojson|safe) + '\"' }} {{ '<'|safe|trim + '>' }} {{ 'a' + 'b' }}",
    # errors in syntax are compile errors in jinja2 too
    "{% if %}", "{% for x in %}{% endfor %}", "{{ 1 + }}", "{% endif %}", "{% nosuchtag %}", "{{ 'unterminated }}",
    "{% if true %}no end", "{{ (1, 2 }}",
]


def main():
    lines = []
    for src in CASES:
        rec = {"template": src, "context": CTX}
        try:
            tmpl = ctu._compile_jinja_template(src)
            tmpl.environment.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
            rec["output"] = tmpl.render(**copy.deepcopy(CTX))  # some filters mutate inputs in place
        except Exception as e:  # noqa: BLE001 — the message is the golden
            rec["error"] = str(e)
            rec["error_type"] = type(e).__name__
        lines.append(json.dumps({k: v for k, v in rec.items() if k != "context"}, ensure_ascii=False))
    with open(os.path.join(ROOT, "tests", "data", "chat", "features.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"context": CTX}, ensure_ascii=False) + "\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases, {sum('error' in l for l in lines)} errors")


if __name__ == "__main__":
    main()
