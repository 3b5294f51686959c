#!/usr/bin/env bash
# Same seed => same results: runs `poscheck run` twice with the same seed on the same
# programs, both at once (so the machine is loaded, as in a CI job sharing its cores), and
# checks that every program's hit count, outcome counts and mean steps agree and that the
# saved schedules are byte-identical. Programs with partial runs (a thread set aside outside
# control) are listed and not compared: when such a thread came back was up to the kernel.
# Usage: scripts/determinism.sh [-a ALGOS] [-t TRIES] [-s SEED] [-o DIR]
#                               [-1 ARGS] [-2 ARGS] [-j JOBS] [-q] PATH...
#   ALGOS comma-separated (default rw,pct3,pos), TRIES default 200, SEED default 20261124;
#   DIR keeps both runs' JSON, logs and schedules (default: a temporary directory, removed);
#   ARGS: extra `poscheck run` options of run 1 and of run 2 (e.g. `-1 "--transport socket"
#   -2 "--transport baton"`: two transports, same schedules); JOBS: --jobs of each run
#   (default 1); -q: one run after the other instead of both at once, each one's wall time
#   printed (for a speed comparison on a quiet machine).
# Exit 0 when both runs agree everywhere, 1 with the differences listed otherwise.
set -euo pipefail
set -f # algorithm names such as pos* are not file patterns
algos=rw,pct3,pos
tries=200
seed=20261124
keep=
extra1=
extra2=
jobs=1
sequential=
usage="usage: $0 [-a ALGOS] [-t TRIES] [-s SEED] [-o DIR] [-1 ARGS] [-2 ARGS] [-j JOBS] [-q] PATH..."
while getopts "a:t:s:o:1:2:j:q" o; do
  case $o in
    a) algos=$OPTARG ;;
    t) tries=$OPTARG ;;
    s) seed=$OPTARG ;;
    o) keep=$OPTARG ;;
    1) extra1=$OPTARG ;;
    2) extra2=$OPTARG ;;
    j) jobs=$OPTARG ;;
    q) sequential=1 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
poscheck="${POSCHECK:-$root/target/release/poscheck}"
[ -x "$poscheck" ] || { echo "determinism: $poscheck is not built (cargo build --release)" >&2; exit 2; }
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work="$(cd "$keep" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

run_all() { # $1: run directory, $2: extra options (split on spaces)
  local dir=$1 extra=$2 a
  shift 2
  mkdir -p "$dir"
  local -a more=()
  [ -z "$extra" ] || read -r -a more <<<"$extra"
  local IFS=,
  local start=$SECONDS
  for a in $algos; do
    # Exit 1 means "bugs were found": expected for buggy programs.
    local rc=0
    "$poscheck" run --algo "$a" --tries "$tries" --seed "$seed" --jobs "$jobs" "${more[@]}" \
      --json "$dir/$a.json" --out-dir "$dir/out-$a" "$@" >"$dir/$a.log" 2>&1 || rc=$?
    if [ $rc -gt 1 ]; then
      echo "determinism: poscheck run --algo $a failed (exit $rc):" >&2
      tail -5 "$dir/$a.log" >&2
      return 1
    fi
  done
  echo "determinism: run ${dir##*/} (${extra:-no extra options}): $((SECONDS - start)) s wall"
}
ok=0
if [ -n "$sequential" ]; then
  run_all "$work/1" "$extra1" "$@" || ok=1
  run_all "$work/2" "$extra2" "$@" || ok=1
else
  run_all "$work/1" "$extra1" "$@" &
  p1=$!
  run_all "$work/2" "$extra2" "$@" &
  p2=$!
  wait $p1 || ok=1
  wait $p2 || ok=1
fi
[ $ok -eq 0 ] || exit 2

python3 - "$work" "$algos" <<'EOF'
import json, os, sys
work, algos = sys.argv[1], sys.argv[2].split(",")
diffs, cells, partial = [], 0, []
for a in algos:
    runs = [json.load(open(os.path.join(work, k, a + ".json"))) for k in ("1", "2")]
    progs = [{p["name"]: p for p in r["programs"]} for r in runs]
    for name in sorted(set(progs[0]) | set(progs[1])):
        p1, p2 = progs[0].get(name), progs[1].get(name)
        cells += 1
        if p1 is None or p2 is None:
            diffs.append(f"{a} {name}: missing in one run")
            continue
        # A partial run had a thread blocked (or spinning) outside control: when it came back
        # was up to the kernel, so its schedule is not expected to repeat. Listed, not compared.
        if p1.get("partial") or p2.get("partial"):
            partial.append(f"{a} {name}")
            continue
        for key in ("hits", "outcomes", "mean_steps", "first_hit", "step_limits"):
            if p1.get(key) != p2.get(key):
                diffs.append(f"{a} {name}: {key} {p1.get(key)} vs {p2.get(key)}")
        s1, s2 = p1.get("schedule"), p2.get("schedule")
        if (s1 is None) != (s2 is None):
            diffs.append(f"{a} {name}: a schedule was saved in one run only")
        elif s1 is not None and open(s1, "rb").read() != open(s2, "rb").read():
            diffs.append(f"{a} {name}: saved schedules differ ({s1} vs {s2})")
for d in diffs:
    print("determinism: DIFFERENT:", d)
for p in partial:
    print("determinism: not compared (partial runs):", p)
print(f"determinism: {cells} program x algorithm cells, {len(diffs)} difference(s), "
      f"{len(partial)} not compared (partial runs)")
sys.exit(1 if diffs else 0)
EOF
