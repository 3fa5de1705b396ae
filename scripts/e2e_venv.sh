#!/usr/bin/env bash
# Creates build/e2e-venv (or $OXYD_E2E_VENV) with tests/e2e/requirements.txt: the openai SDK,
# pytest and the oracles the end-to-end tests use. Quick no-op when the venv already matches the
# requirements file (a hash stamp); needs PyPI access the first time. Exit status non-zero when
# it cannot be created: the e2e ctest tests then fail with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${OXYD_E2E_VENV:-build/e2e-venv}"
req=tests/e2e/requirements.txt
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
rm -f "$stamp"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
"$venv/bin/python" -c "import openai, pytest, tokenizers, jinja2, numpy, jsonschema, pydantic"
echo "$want" > "$stamp"
echo "e2e venv ready: $venv"
