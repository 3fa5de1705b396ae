#!/usr/bin/env bash
# ctest entry for one tests/e2e module: run_e2e.sh VENV_DIR OXYDLLM_BIN test_x.py [pytest args].
# A missing venv is a failure (CI must not pass silently); OXYD_E2E_SKIP=1 turns it into a skip (77).
set -uo pipefail
venv="$1" bin="$2"
shift 2
if [ -n "${OXYD_E2E_SKIP:-}" ]; then
  echo "e2e: skipped because OXYD_E2E_SKIP is set"
  exit 77
fi
if [ ! -f "$venv/.requirements.sha256" ] || [ ! -x "$venv/bin/python" ]; then
  echo "e2e: FAIL: no Python venv at $venv with tests/e2e/requirements.txt installed." >&2
  echo "e2e: run scripts/e2e_venv.sh (needs PyPI access once), or set OXYD_E2E_SKIP=1 to skip the e2e tests." >&2
  exit 1
fi
cd "$(dirname "$0")"
export OXYDLLM_BIN="$bin" PYTHONDONTWRITEBYTECODE=1
tmp="$(mktemp -d "${TMPDIR:-/tmp}/oxyd-e2e.XXXXXX")"
"$venv/bin/python" -m pytest -q -p no:cacheprovider -rfEs --basetemp "$tmp/pytest" "$@"
rc=$?
rm -rf "$tmp"
exit $rc
