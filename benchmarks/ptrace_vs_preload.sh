#!/usr/bin/env bash
# The ptrace backend against the preload backend on the suite's `sync` programs (issue 13):
#
#   poscheck compare --backend preload --algos A --tries N --seed S SUITE_DYN
#   poscheck compare --backend ptrace  --algos A --tries N --seed S SUITE_STATIC
#   poscheck compare --backend ptrace --syscall-points-only ...    SUITE_STATIC
#
# SUITE_DYN and SUITE_STATIC are temporary suites holding the `points = "sync"` entries of
# benchmarks/manifest.toml, built with plain gcc (dynamically linked) and with `gcc -static`.
# Outputs (the three tables as text and JSON, the saved schedules) go to OUT.
#
# Usage: benchmarks/ptrace_vs_preload.sh [OUT] [TRIES] [ALGOS] [SEED]
#        (default benchmarks/results/2026-11-26-ptrace, 1000, rw,pos, 1)
# Environment: POSCHECK (default: target/release/poscheck, or $CARGO_TARGET_DIR's).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-benchmarks/results/2026-11-26-ptrace}"
tries="${2:-1000}"
algos="${3:-rw,pos}"
seed="${4:-1}"
poscheck="${POSCHECK:-${CARGO_TARGET_DIR:-target}/release/poscheck}"
[[ -x "$poscheck" ]] || { echo "no $poscheck: cargo build --release" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for kind in dyn static; do
  mkdir -p "$work/$kind"
  cp -r benchmarks/src "$work/$kind/src"
  python3 - "$work/$kind/manifest.toml" <<'PY'
import sys, tomllib
m = tomllib.load(open("benchmarks/manifest.toml", "rb"))
def q(v):
    if isinstance(v, list):
        return "[" + ", ".join(q(x) for x in v) + "]"
    return '"' + str(v).replace('\\', '\\\\').replace('"', '\\"') + '"'
with open(sys.argv[1], "w") as f:
    for p in m["program"]:
        if p.get("points", "sync") != "sync":
            continue
        f.write("[[program]]\n")
        for k, v in p.items():
            f.write(f"{k} = {q(v)}\n")
        f.write("\n")
PY
done
"$poscheck" build --cc gcc "$work/dyn" >"$out/build-dyn.txt" 2>&1
"$poscheck" build --cc "gcc -static" "$work/static" >"$out/build-static.txt" 2>&1
run() {
  local name="$1"; shift
  "$poscheck" compare --algos "$algos" --tries "$tries" --seed "$seed" \
    --json "$out/$name.json" --out-dir "$out/schedules-$name" "$@" >"$out/$name.txt" 2>&1 || true
}
run preload --backend preload "$work/dyn"
run ptrace --backend ptrace "$work/static"
run ptrace-syscalls --backend ptrace --syscall-points-only "$work/static"
tail -n 6 "$out"/preload.txt "$out"/ptrace.txt "$out"/ptrace-syscalls.txt
