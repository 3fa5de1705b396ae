#!/usr/bin/env bash
# Creates .venv with the Python reference libraries used by tools/ to generate goldens
# (gguf-py, tokenizers, transformers, jinja2). Tests never need it: goldens are committed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r tools/requirements.txt
