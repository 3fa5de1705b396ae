#!/usr/bin/env python3
"""Peer timing for bench/jinja_bench.cc: transformers' render_jinja_template on the same input.
    build/bin/jinja_bench --dump /tmp/jinja_ctx.json
    /work/venv/bin/python tools/jinja_peer_bench.py /tmp/jinja_ctx.json tests/data/chat_templates/Qwen-Qwen3-0.6B.jinja
"""
import json
import sys
import time

from transformers.utils import chat_template_utils as ctu

ctx = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read()
kw = dict(ctx["kwargs"])
def once():
    chat = ctu._normalize_chat_messages(ctx["messages"])
    return ctu.render_jinja_template(conversations=[chat], tools=ctx["tools"], chat_template=src,
                                     add_generation_prompt=True, **kw)[0][0]
once()
n = 200
t = time.perf_counter()
for _ in range(n):
    out = once()
try:
    ours = open(sys.argv[1] + ".out", encoding="utf-8").read()
    print("outputs identical:", ours == out)
except FileNotFoundError:
    pass
print(f"transformers render: {(time.perf_counter() - t) / n * 1e6:.1f} us mean over {n}; output bytes {len(out.encode())}")
