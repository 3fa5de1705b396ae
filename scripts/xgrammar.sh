#!/usr/bin/env bash
# Fetches XGrammar's C++ core (the PyPI source distribution, pinned, checked by sha256) and builds
# libxgrammar.a as a project of its own, so that its flags (-Werror, -flto) never reach ours.
# Usage: scripts/xgrammar.sh <build dir>; leaves <build dir>/_deps/xgrammar/{src,build,stamp}.
# Idempotent: a second run with the stamp present does nothing. The tarball is cached in
# ${OXYD_CACHE_DIR:-~/.cache/oxydllm} so that a clean build directory does not download it again.
# Called by cmake/xgrammar.cmake at configure time; nothing of XGrammar is ever in the tracked tree.
set -euo pipefail
XG_VERSION=0.2.8
XG_SHA256=8305646fd2b319d6c3003f51a1665e54cbbe9cba1fb636bc41d0b46434ccbb80
build_dir="$(cd "${1:?usage: xgrammar.sh <build dir>}" && pwd)"
deps="$build_dir/_deps/xgrammar"
stamp="$deps/stamp-$XG_VERSION"
[ -f "$stamp" ] && [ -f "$deps/build/libxgrammar.a" ] && exit 0

cache="${OXYD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oxydllm}"
tarball="$cache/xgrammar-$XG_VERSION.tar.gz"
check() { echo "$XG_SHA256  $1" | sha256sum -c --status; }
if [ ! -f "$tarball" ] || ! check "$tarball"; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/dl.XXXXXX")"
  echo "xgrammar.sh: downloading xgrammar==$XG_VERSION (PyPI source distribution)"
  # pip where it exists (it honours the user's index configuration), else the PyPI URL directly.
  if ! python3 -m pip download --quiet --no-deps --no-binary xgrammar "xgrammar==$XG_VERSION" -d "$tmp" 2>/dev/null; then
    curl -fsSL --retry 3 -o "$tmp/xgrammar-$XG_VERSION.tar.gz" \
      "https://files.pythonhosted.org/packages/source/x/xgrammar/xgrammar-$XG_VERSION.tar.gz"
  fi
  mv "$tmp/xgrammar-$XG_VERSION.tar.gz" "$tarball"
  rm -rf "$tmp"
fi
if ! check "$tarball"; then
  echo "xgrammar.sh: $tarball does not have the pinned sha256 $XG_SHA256" >&2
  exit 1
fi

rm -rf "$deps"
mkdir -p "$deps/build"
tar -xzf "$tarball" -C "$deps"
mv "$deps/xgrammar-$XG_VERSION" "$deps/src"
# Its cmake/config.cmake turns the Python bindings ON unconditionally; a config.cmake in the build
# directory is read first and wins.
cat > "$deps/build/config.cmake" <<'CFG'
set(CMAKE_BUILD_TYPE Release)
set(XGRAMMAR_BUILD_PYTHON_BINDINGS OFF)
set(XGRAMMAR_BUILD_CXX_TESTS OFF)
set(XGRAMMAR_ENABLE_CPPTRACE OFF)
set(XGRAMMAR_ENABLE_COVERAGE OFF)
set(XGRAMMAR_ENABLE_INTERNAL_CHECK OFF)
CFG
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Our flags come after theirs: no LTO (a plain archive links with any linker) and warnings kept
# warnings (a newer compiler must not fail the build on code that is not ours).
cmake -S "$deps/src" -B "$deps/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="${CXX:-c++}" -DCMAKE_CXX_FLAGS="-fno-lto -Wno-error -w" "${launcher[@]}" >"$deps/configure.log" 2>&1 ||
  { cat "$deps/configure.log" >&2; exit 1; }
cmake --build "$deps/build" -j "$(nproc)" --target xgrammar >"$deps/build.log" 2>&1 ||
  { tail -50 "$deps/build.log" >&2; exit 1; }
touch "$stamp"
echo "xgrammar.sh: built $deps/build/libxgrammar.a"
