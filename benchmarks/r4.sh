#!/usr/bin/env bash
# R4 (conflict-reversal bounding, issue 12 item 5) on every program of the suite:
#
#   poscheck explore --algo r4 --bound K --points P --max-executions N --time-limit T \
#       benchmarks/bin/NAME -- ARGS          (K = 1 and 2)
#
# with each program's manifest points mode (`auto`, a sampling mode that learns racing sites
# while tries run, is explored with `mem`, as the odpor table of the README does: an
# exploration must not change its scheduling points mid-search). Every distinct bug's saved
# schedule is replayed with `poscheck replay --times 100`. Raw outputs (text, JSON, saved
# schedules, replay outputs) go to OUT; OUT/table.md is the README table.
#
# Usage: benchmarks/r4.sh [OUT] [MAX_EXECUTIONS] [TIME_LIMIT]
#        (default benchmarks/results/2026-11-25-r4, 20000, 60s)
# Environment: POSCHECK (default: target/release/poscheck, or $CARGO_TARGET_DIR's).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-benchmarks/results/2026-11-25-r4}"
max="${2:-20000}"
limit="${3:-60s}"
poscheck="${POSCHECK:-${CARGO_TARGET_DIR:-target}/release/poscheck}"
[[ -x "$poscheck" ]] || { echo "no $poscheck: cargo build --release -p poscheck -p pos-preload" >&2; exit 2; }
mkdir -p "$out"
"$poscheck" build benchmarks/ >"$out/build.txt" 2>&1

# name, points, args (space-separated), expect: one line per program of the manifest.
python3 - >"$out/programs.tsv" <<'PY'
import tomllib
m = tomllib.load(open("benchmarks/manifest.toml", "rb"))
for p in m["program"]:
    points = p.get("points", "sync")
    if points == "auto":
        points = "mem"
    print("\t".join([p["name"], points, p.get("expect", "none"), " ".join(p.get("args", []))]))
PY

while IFS=$'\t' read -r name points expect args; do
    for k in 1 2; do
        tag="$name.bound$k"
        read -ra argv <<<"$args"
        start=$(date +%s%N)
        set +e
        "$poscheck" explore --algo r4 --bound "$k" --points "$points" \
            --max-executions "$max" --time-limit "$limit" \
            --json "$out/$tag.json" --out-dir "$out/$tag-schedules" \
            "benchmarks/bin/$name" -- "${argv[@]}" >"$out/$tag.txt" 2>&1
        code=$?
        set -e
        end=$(date +%s%N)
        echo "exit $code wall $(( (end - start) / 1000000 )) ms" >>"$out/$tag.txt"
        # Replay every saved schedule 100 times.
        for s in "$out/$tag-schedules"/*.json; do
            [[ -e "$s" ]] || continue
            "$poscheck" replay --times 100 "$s" >"${s%.json}.replay.txt" 2>&1 || true
        done
        echo "$name bound $k: exit $code"
    done
done <"$out/programs.tsv"

python3 - "$out" >"$out/table.md" <<'PY'
import json, os, re, sys
out = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(out, "programs.tsv"))]
print("| program | points | expect | bound 1: executions (per depth) | bound 2: executions (per depth) | bug found at depth | replay 100/100 | time b1 / b2 (s) | skipped (b2) |")
print("|---|---|---|---|---|---|---|---|---|")
lines = []
for name, points, expect, _ in rows:
    cells, bugs, replays, times, skipped = [], [], [], [], ""
    for k in (1, 2):
        tag = f"{name}.bound{k}"
        try:
            d = json.load(open(os.path.join(out, f"{tag}.json")))
        except Exception:
            cells.append("error (no JSON)")
            times.append("-")
            continue
        why = ""
        if d["stopped"] and not d["stopped"].startswith("bound"):
            why = " " + d["stopped"].split(":")[0]
        cells.append(f"{d['executions']} {d['executions_per_bound']}{why}")
        times.append(f"{d['elapsed_s']:.1f}")
        if d["first_bug_bound"] is not None:
            bugs.append(f"{d['first_bug_bound']} (b{k}: {d['buggy']} buggy)")
        if k == 2 and d.get("r4"):
            skipped = f"{d['r4']['divergent']} runs"
        sched_dir = os.path.join(out, f"{tag}-schedules")
        if os.path.isdir(sched_dir):
            for f in sorted(os.listdir(sched_dir)):
                if f.endswith(".replay.txt"):
                    t = open(os.path.join(sched_dir, f)).read()
                    m = re.search(r"reproduced (\d+) of (\d+)", t)
                    replays.append(f"{m.group(1)}/{m.group(2)}" if m else "no")
    bug = bugs[0].split(" ")[0] if bugs else "none"
    rep = "-" if not replays else ("yes (%d schedules)" % len(replays) if all(r == "100/100" for r in replays) else "NO: " + ", ".join(replays))
    print(f"| {name} | {points} | {expect} | {cells[0]} | {cells[1]} | {bug} | {rep} | {' / '.join(times)} | {skipped} |")
PY
cat "$out/table.md"
