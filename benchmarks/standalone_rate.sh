#!/usr/bin/env bash
# Standalone runs per second (`LD_PRELOAD=libpos.so ./prog`, no runner) of two libpos.so
# builds, interleaved run by run so that load changes hit both alike (issue 15).
#
# Usage: benchmarks/standalone_rate.sh OLD_LIBPOS NEW_LIBPOS [RUNS] PROGRAM [ARGS...]
# Environment: NEW_ENV, extra `NAME=VALUE` words for the new build's runs only (e.g.
# NEW_ENV=POS_TRANSPORT=baton); POS_SEED is set to the run's index, the same for both.
# Prints runs/s of each and the ratio new/old; exits 1 if any run's stderr lacks an
# outcome line (a run that failed to run is not a fast run).
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 OLD_LIBPOS NEW_LIBPOS [RUNS] PROGRAM [ARGS...]" >&2; exit 2; }
old="$1"; new="$2"; shift 2
runs=200
if [[ "$1" =~ ^[0-9]+$ ]]; then runs="$1"; shift; fi
[[ -f "$old" && -f "$new" ]] || { echo "error: no such libpos.so: $old or $new" >&2; exit 2; }
[[ -x "$1" ]] || { echo "error: $1 is not an executable program" >&2; exit 2; }
read -r -a extra <<<"${NEW_ENV:-}"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
t_old=0; t_new=0
now() { date +%s%N; }
one() { # LIB SEED [ENV...] -- adds the run's nanoseconds to stdout
  local lib="$1" seed="$2"; shift 2
  local t0 t1
  t0=$(now)
  env "$@" POS_SEED="$seed" LD_PRELOAD="$lib" "${prog[@]}" >/dev/null 2>"$err" || true
  t1=$(now)
  grep -q '^poscheck: outcome=' "$err" || { echo "error: no outcome line from $lib (seed $seed):" >&2; cat "$err" >&2; exit 1; }
  echo $((t1 - t0))
}
prog=("$@")
for ((i = 0; i < runs; i++)); do
  if ((i % 2 == 0)); then
    a=$(one "$old" "$i"); b=$(one "$new" "$i" "${extra[@]}")
  else
    b=$(one "$new" "$i" "${extra[@]}"); a=$(one "$old" "$i")
  fi
  t_old=$((t_old + a)); t_new=$((t_new + b))
done
awk -v n="$runs" -v a="$t_old" -v b="$t_new" -v p="${prog[*]}" 'BEGIN {
  printf "%s: %d runs each; old %.1f runs/s, new %.1f runs/s, ratio new/old %.2fx\n", p, n, n / (a / 1e9), n / (b / 1e9), a / b }'
