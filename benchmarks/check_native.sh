#!/usr/bin/env bash
# Run every built benchmark natively (no controlled scheduling) RUNS times
# with a TIMEOUT-second limit each and print per-program outcome counts.
#
#   ./check_native.sh              all programs in manifest.toml
#   ./check_native.sh NAME...      only the named programs
#
# Environment: RUNS (default 20), TIMEOUT (seconds, default 5),
#              BIN_DIR (default bin).
# Outcome per run: pass (exit 0) | assert (SIGABRT) | crash (SIGSEGV/SIGBUS/
#   other signal or non-zero exit) | hang (timeout; counts as the bug for
#   deadlock programs).
# Exit status is non-zero if a binary is missing or a bug-free program
# (expect = "none") did anything but pass.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

RUNS="${RUNS:-20}"
TIMEOUT="${TIMEOUT:-5}"
BIN_DIR="${BIN_DIR:-bin}"
ulimit -c 0 2>/dev/null || true

# name<TAB>expect<TAB>args (args NUL-free, joined by \x1f)
progs="$(python3 - "$@" <<'PY'
import sys, tomllib
with open("manifest.toml", "rb") as f:
    progs = tomllib.load(f)["program"]
want = set(sys.argv[1:])
for p in progs:
    if not want or p["name"] in want:
        print(p["name"] + "\t" + p["expect"] + "\t" + "\x1f".join(p.get("args", [])))
PY
)" || exit 2

status=0
printf '%-22s %-9s %5s %6s %6s %5s %6s  %s\n' program expect pass assert crash hang other note
while IFS=$'\t' read -r name expect argstr; do
    [ -n "$name" ] || continue
    bin="$BIN_DIR/$name"
    if [ ! -x "$bin" ]; then
        printf '%-22s %-9s  MISSING (%s)\n' "$name" "$expect" "$bin"
        status=1
        continue
    fi
    args=()
    if [ -n "$argstr" ]; then IFS=$'\x1f' read -r -a args <<< "$argstr"; fi
    pass=0 nassert=0 crash=0 hang=0 other=0
    for ((i = 0; i < RUNS; i++)); do
        # subshell so that bash's "Aborted"/"Segmentation fault" job
        # messages go to /dev/null as well
        ( timeout -k 1 "$TIMEOUT" "$bin" "${args[@]}"; exit $? ) >/dev/null 2>&1
        rc=$?
        case $rc in
            0) pass=$((pass + 1)) ;;
            134) nassert=$((nassert + 1)) ;;          # SIGABRT (assert)
            124|137) hang=$((hang + 1)) ;;            # timeout / killed
            135|136|139) crash=$((crash + 1)) ;;      # SIGBUS/SIGFPE/SIGSEGV
            *) other=$((other + 1)) ;;
        esac
    done
    note=""
    if [ "$expect" = none ] && [ "$pass" -ne "$RUNS" ]; then
        note="FAIL: bug-free program did not always pass"
        status=1
    elif [ "$expect" != none ] && [ "$pass" -ne "$RUNS" ]; then
        note="bug observed natively"
    fi
    printf '%-22s %-9s %5d %6d %6d %5d %6d  %s\n' "$name" "$expect" "$pass" "$nassert" "$crash" "$hang" "$other" "$note"
done <<< "$progs"
exit $status
