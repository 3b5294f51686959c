#!/usr/bin/env bash
# Throughput of `poscheck explore` on real binaries: executions per second of Optimal-DPOR
# on lastzero(10) (3328 executions) and filesystem(18) (32 executions), built with
# `poscheck cc -O1` and explored with `--points mem`. Every execution is a fresh process
# under libpos, so the figure is dominated by process start-up and the per-event round trip.
#
# Usage: scripts/bench-explore.sh [REPEATS]   (default 1; the best run is reported)
# Environment: CARGO_TARGET_DIR as for cargo (the release build is used and made if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-1}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p poscheck -p pos-preload
poscheck="$target/release/poscheck"
work="$(mktemp -d -t poscheck-bench-explore.XXXXXX)"
trap 'rm -rf "$work"' EXIT

bench() {
    local name="$1" n="$2" want="$3"
    "$poscheck" cc -O1 -pthread -o "$work/$name" "tests/c/explore/$name.c"
    local best=""
    for _ in $(seq "$repeats"); do
        "$poscheck" explore --algo odpor --points mem --out-dir "$work/out" \
            --json "$work/$name.json" "$work/$name" -- "$n" >/dev/null
        local line
        line="$(python3 - "$work/$name.json" "$want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
if d["executions"] != want or not d["complete"]:
    sys.exit(f"unexpected result: {d['executions']} executions, complete={d['complete']}")
print(f"{d['executions_per_s']:.1f} {d['executions']} {d['elapsed_s']:.2f}")
PY
)"
        read -r rate execs secs <<<"$line"
        if [[ -z "$best" ]] || awk "BEGIN{exit !($rate > ${best%% *})}"; then
            best="$rate $execs $secs"
        fi
    done
    read -r rate execs secs <<<"$best"
    printf '%-16s odpor  %6d executions  %8.2f s  %8.1f executions/s\n' \
        "$name($n)" "$execs" "$secs" "$rate"
}

echo "poscheck explore --algo odpor --points mem ($(nproc) cores, best of $repeats)"
bench lastzero 10 3328
bench filesystem 18 32
