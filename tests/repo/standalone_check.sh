#!/usr/bin/env bash
# ctest repo_standalone: fails when a file of the repository refers to the folder beside it
# (`..` + `/shared`, or the same path built in Python) instead of something inside the repository:
# a user's clone has nothing beside it. Files: `git ls-files` where SRC is a git checkout, else
# every file under SRC but build*/ (.ci/run's copy of the checkout has no .git).
# Usage: standalone_check.sh SRC
set -uo pipefail
src="${1:?usage: standalone_check.sh SRC}"
cd "$src" || exit 1
dd='\.\.'  # kept apart so that this file does not match its own pattern
pattern="$dd/shared|\"$dd\", *\"shared\"|parent */ *\"shared\""
# The pattern must catch what it is for (else this test could never fail).
for probe in "see ${dd//\\/}/shared/DESIGN.md" 'os.path.join(ROOT, "'"${dd//\\/}"'", "shared")' \
             "ROOT.parent / \"shared\""; do
  if ! printf '%s\n' "$probe" | grep -qE "$pattern"; then
    echo "standalone_check: FAIL: the pattern misses: $probe" >&2
    exit 1
  fi
done
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
  list() { git ls-files -z; }
else
  list() { find . -path ./.git -prune -o -path './build*' -prune -o -type f -print0; }
fi
hits=$(list | xargs -0 grep -InE "$pattern" -- 2>/dev/null)
if [ -n "$hits" ]; then
  echo "standalone_check: FAIL: these lines point outside the repository (copy the data into" \
       "tests/data/ with its source noted, or point at a file of the repository):" >&2
  printf '%s\n' "$hits" >&2
  exit 1
fi
echo "standalone_check: no file refers to a folder beside the repository"
