#!/usr/bin/env bash
# ctest repo_thread_local: fails when a file of src/backend, src/ops or src/model declares a
# thread_local. The kernels' working memory is the thread pool's (core/thread_scratch.h, one table
# of slots in src/backend/cpu/scratch_slots.h): a thread_local buffer there is held once per thread
# that ever ran the op, is counted in no model's memory, and is shared by every model served on that
# thread (issue 22).
# Usage: thread_local_check.sh SRC
set -uo pipefail
src="${1:?usage: thread_local_check.sh SRC}"
cd "$src" || exit 1
pattern='(^|[^A-Za-z0-9_])thread_local([^A-Za-z0-9_]|$)'
# The pattern must catch what it is for (else this test could never fail).
for probe in '  thread_local std::vector<float> buf;' 'static thread_local int x = 0;'; do
  printf '%s\n' "$probe" | grep -qE "$pattern" || { echo "thread_local_check: FAIL: the pattern misses: $probe" >&2; exit 1; }
done
printf '%s\n' 'float* p = this_thread_scratch().get_as<float>(kSlot, n);' | grep -qE "$pattern" &&
  { echo "thread_local_check: FAIL: the pattern matches this_thread_scratch" >&2; exit 1; }
hits=$(grep -rnE "$pattern" src/backend src/ops src/model --include='*.cc' --include='*.h' --include='*.cu' --include='*.cuh' |
  grep -vE '^[^:]+:[0-9]+: *//')
if [ -n "$hits" ]; then
  echo "thread_local_check: FAIL: thread_local in kernel or model code (use the pool's scratch, src/backend/cpu/scratch_slots.h):" >&2
  printf '%s\n' "$hits" >&2
  exit 1
fi
echo "thread_local_check: ok (no thread_local in src/backend, src/ops, src/model)"
