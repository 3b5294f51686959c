#!/usr/bin/env bash
# Build every program listed in manifest.toml into $BIN_DIR (default: bin/).
#
#   ./build.sh                 build all programs
#   ./build.sh NAME...         build only the named programs
#
# Environment:
#   POSCHECK_CC_CMD  compiler command (default: ${CC:-gcc}). To build for the
#                    harness, switch this one line to e.g. "poscheck cc".
#   BIN_DIR          output directory (default: bin, relative to this dir)
#   EXTRA_CFLAGS     appended to the flags (e.g. -DPOS_STRESS, -Werror)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

POSCHECK_CC_CMD="${POSCHECK_CC_CMD:-${CC:-gcc}}"
CFLAGS_BASE="-O1 -g -pthread -Wall -Wextra -std=gnu11"
BIN_DIR="${BIN_DIR:-bin}"
EXTRA_CFLAGS="${EXTRA_CFLAGS:-}"

# name<TAB>source for each program (python3 >= 3.11 for tomllib)
list_programs() {
    python3 - "$@" <<'PY'
import sys, tomllib
with open("manifest.toml", "rb") as f:
    progs = tomllib.load(f)["program"]
want = set(sys.argv[1:])
names = {p["name"] for p in progs}
missing = want - names
if missing:
    sys.exit("build.sh: unknown program(s): " + " ".join(sorted(missing)))
for p in progs:
    if not want or p["name"] in want:
        print(p["name"] + "\t" + p["source"])
PY
}

mkdir -p "$BIN_DIR"
progs="$(list_programs "$@")"
ok=0
failed=()
while IFS=$'\t' read -r name src; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086  # flag strings are meant to be word-split
    if $POSCHECK_CC_CMD $CFLAGS_BASE $EXTRA_CFLAGS -o "$BIN_DIR/$name" "$src"; then
        ok=$((ok + 1))
    else
        echo "build.sh: FAILED: $name ($src)" >&2
        failed+=("$name")
    fi
done <<< "$progs"

echo "build.sh: built $ok program(s) into $BIN_DIR with: $POSCHECK_CC_CMD $CFLAGS_BASE $EXTRA_CFLAGS"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "build.sh: ${#failed[@]} failure(s): ${failed[*]}" >&2
    exit 1
fi
