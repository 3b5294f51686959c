#!/usr/bin/env bash
# Install poscheck under a prefix: PREFIX/bin/poscheck and PREFIX/lib/poscheck/libpos.so,
# where the installed poscheck looks for the library (next to itself, then ../lib/poscheck/).
# Usage: scripts/install.sh [--no-build] [PREFIX]   (default PREFIX: ~/.local)
#   --no-build: install the existing target/release build instead of running cargo first.
# Afterwards: PREFIX/bin must be on PATH; `poscheck env` prints the LD_PRELOAD line for
# controlled runs without poscheck (`env $(poscheck env) ./prog`).
set -euo pipefail
build=1
if [ "${1:-}" = "--no-build" ]; then
  build=0
  shift
fi
if [ "$#" -gt 1 ]; then
  echo "install.sh: error: usage: scripts/install.sh [--no-build] [PREFIX]" >&2
  exit 2
fi
prefix="${1:-$HOME/.local}"
repo="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}/release"
if [ "$build" = 1 ]; then
  (cd "$repo" && cargo build --release -p poscheck -p pos-preload)
fi
for f in "$target/poscheck" "$target/libpos.so"; do
  if [ ! -f "$f" ]; then
    echo "install.sh: error: $f is missing (build with \`cargo build --release\`)" >&2
    exit 2
  fi
done
mkdir -p "$prefix/bin" "$prefix/lib/poscheck"
# Through a temporary name and a rename: a running poscheck (or a program linked against
# libpos.so) keeps its old file instead of seeing it rewritten under it.
install -m 0755 "$target/poscheck" "$prefix/bin/.poscheck.new"
mv -f "$prefix/bin/.poscheck.new" "$prefix/bin/poscheck"
install -m 0755 "$target/libpos.so" "$prefix/lib/poscheck/.libpos.so.new"
mv -f "$prefix/lib/poscheck/.libpos.so.new" "$prefix/lib/poscheck/libpos.so"
# The installed pair must find each other (this also checks the library's protocol marker).
env -u POSCHECK_LIBPOS "$prefix/bin/poscheck" env >/dev/null
echo "installed $prefix/bin/poscheck and $prefix/lib/poscheck/libpos.so"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
