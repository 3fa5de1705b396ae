#!/usr/bin/env bash
# ctest repo_family_names: fails when a source file outside src/model/archs/ names a model family.
# A family (docs/adding-a-model.md) is declared once, in src/model/archs/<family>.cc; everything
# else reaches it through the registry. Names checked: every X(<family>) of
# src/model/archs/registry.cc, and the Hugging Face model_type / architecture names and GGUF arch
# strings the family files declare, as string literals ("qwen3", "Qwen3ForCausalLM"), plus any
# comparison of a `family` with a literal. Exempt: src/tokenizer/ and src/chat/ (tokenizer and
# template names that happen to match, e.g. tokenizer.ggml.model "llama"), and lines carrying
# the comment `not a model family`.
# Usage: family_names_check.sh SRC
set -uo pipefail
src="${1:?usage: family_names_check.sh SRC}"
cd "$src" || exit 1
archs=src/model/archs
families=$(sed -n 's/^ *X(\([a-z0-9_]*\)).*/\1/p' "$archs/registry.cc")
n=$(printf '%s\n' "$families" | grep -c .)
if [ "$n" -lt 9 ]; then
  echo "family_names_check: FAIL: found $n families in $archs/registry.cc (X(<family>) lines)" >&2
  exit 1
fi
names=$(
  printf '%s\n' "$families"
  for f in $families; do
    [ -f "$archs/$f.cc" ] || { echo "family_names_check: FAIL: $archs/$f.cc is missing" >&2; exit 1; }
    grep -E 'config\.(name|hf_model_types|gguf_archs|gguf_architecture|gguf_model_type) *=' "$archs/$f.cc" |
      grep -oE '"[A-Za-z0-9_.-]+"' | tr -d '"'
  done | sort -u
) || exit 1
patterns=$(mktemp)
trap 'rm -f "$patterns"' EXIT
printf '%s\n' "$names" | sed 's/.*/"&"/' >"$patterns"
compare='family *[!=]= *"|" *[!=]= *[a-z_.>-]*family\b'
# The patterns must catch what they are for (else this test could never fail).
for probe in 'if (c.family == "gemma3") {' 'const char* k = "Qwen3ForCausalLM";' 'x = "gpt-oss";'; do
  if ! printf '%s\n' "$probe" | grep -qF -f "$patterns" && ! printf '%s\n' "$probe" | grep -qE "$compare"; then
    echo "family_names_check: FAIL: the patterns miss: $probe" >&2
    exit 1
  fi
done
hits=$(find src -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
         -not -path "$archs/*" -not -path 'src/tokenizer/*' -not -path 'src/chat/*' -print0 |
       xargs -0 grep -HnE -e "$compare" -e "$(paste -sd'|' "$patterns" | sed 's/[.]/\\./g')" -- 2>/dev/null |
       grep -v 'not a model family')
if [ -n "$hits" ]; then
  echo "family_names_check: FAIL: these lines name a model family outside $archs/ (declare it in" \
       "the family's file and reach it through the registry, model/archs/registry.h):" >&2
  printf '%s\n' "$hits" >&2
  exit 1
fi
echo "family_names_check: $n families, none named outside $archs/"
