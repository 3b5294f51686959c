#!/usr/bin/env python3
"""Hitting families against Optimal-DPOR and sampling on the suite (issue 12).

  hitting_table.py run [--algo hitting|odpor|both] [NAME...]   run the explorations
  hitting_table.py replay [TIMES]                                replay hitting's bug schedules
  hitting_table.py table                                         print the table

`run` explores every program of manifest.toml (or the NAMEs) with its manifest points:

  poscheck explore --algo hitting --depth 3 --prune races  --points P --max-executions N
                   --time-limit T --json OUT/NAME.hitting.json benchmarks/bin/NAME -- ARGS
  poscheck explore --algo odpor                            (same limits)

and keeps each command's output next to its JSON (OUT/NAME.ALGO.txt); the bug schedules go to
OUT/schedules/. Binaries from `poscheck build benchmarks/`. `table` reads those JSON files
and the sampling results of results/2026-11-25-suite-10k/ (hit ratio = buggy tries / tries;
expected tries = 1 / hit ratio) and prints a markdown table.

Environment: POSCHECK (default: ../target/release/poscheck), OUT (default:
results/2026-11-25-hitting), MAX_EXECUTIONS (20000), TIME_LIMIT (120), DEPTH (3).
"""
import json
import os
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
POSCHECK = os.environ.get(
    "POSCHECK", os.path.join(HERE, "..", "target", "release", "poscheck"))
OUT = os.environ.get("OUT", os.path.join(HERE, "results", "2026-11-25-hitting"))
SAMPLING = os.path.join(HERE, "results", "2026-11-25-suite-10k")
MAX_EXECUTIONS = os.environ.get("MAX_EXECUTIONS", "20000")
TIME_LIMIT = os.environ.get("TIME_LIMIT", "120")
DEPTH = os.environ.get("DEPTH", "3")
# Issue 12: hitting must find these besides every bug odpor finds.
MUST = {"reorder_10", "reorder_20", "reorder_50", "twostage_100"}


def programs():
    with open(os.path.join(HERE, "manifest.toml"), "rb") as f:
        return tomllib.load(f)["program"]


def command(p, algo):
    cmd = [POSCHECK, "explore", "--algo", algo]
    if algo == "hitting":
        cmd += ["--depth", DEPTH, "--prune", "races"]
    cmd += ["--points", p["points"], "--max-executions", MAX_EXECUTIONS,
            "--time-limit", TIME_LIMIT,
            "--json", os.path.join(OUT, f"{p['name']}.{algo}.json"),
            "--out-dir", os.path.join(OUT, "schedules"),
            os.path.join(HERE, "bin", p["name"])]
    if p.get("args"):
        cmd += ["--"] + p["args"]
    return cmd


def run(argv):
    algos = ["hitting", "odpor"]
    if argv[:1] == ["--algo"]:
        algos = algos if argv[1] == "both" else [argv[1]]
        argv = argv[2:]
    want = set(argv)
    os.makedirs(OUT, exist_ok=True)
    for p in programs():
        if want and p["name"] not in want:
            continue
        for algo in algos:
            cmd = command(p, algo)
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.time() - t0
            log = os.path.join(OUT, f"{p['name']}.{algo}.txt")
            with open(log, "w") as f:
                f.write("$ " + " ".join(cmd[1:]) + "\n")
                f.write(r.stdout + r.stderr)
                f.write(f"[exit {r.returncode}, wall {wall:.1f} s]\n")
            print(f"{p['name']:22} {algo:8} exit {r.returncode} {wall:7.1f} s", flush=True)


def replay(argv):
    """`poscheck replay --times N` of every schedule hitting saved; OUT/replays.json."""
    times = argv[0] if argv else "100"
    res = {}
    for p in programs():
        h = load(p["name"], "hitting")
        for b in (h or {}).get("bugs", []):
            if not b.get("schedule"):
                continue
            r = subprocess.run([POSCHECK, "replay", "--times", times, b["schedule"]],
                               capture_output=True, text=True)
            line = [x for x in r.stdout.splitlines() if "reproduced" in x]
            got = (line[0].split("reproduced ")[1].replace(" of ", "/").replace(" times", "")
                   if line else "failed: " + r.stderr.strip())
            res.setdefault(p["name"], []).append(got)
            print(f"{p['name']:22} {os.path.basename(b['schedule'])}: {got}", flush=True)
    with open(os.path.join(OUT, "replays.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


def sampling():
    """(program -> {algo: hit ratio}) over every JSON of the 10k suite results."""
    ratios = {}
    for name in sorted(os.listdir(SAMPLING)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(SAMPLING, name)) as f:
            doc = json.load(f)
        for r in doc.get("runs", []):
            for p in r.get("programs", []):
                ratios.setdefault(p["name"], {})[r["algo"]] = p.get("hit_ratio", 0.0)
    return ratios


def load(name, algo):
    path = os.path.join(OUT, f"{name}.{algo}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def tries(ratio):
    return "never" if not ratio else f"{1 / ratio:,.0f}"


def table():
    ratios = sampling()
    replays = {}
    if os.path.exists(os.path.join(OUT, "replays.json")):
        with open(os.path.join(OUT, "replays.json")) as f:
            replays = json.load(f)
    rows = []
    head = ("| program | expect | points | family | construction | r (racing events) "
            "| hitting executions | ≤ 2r+2 | divergent | skipped/exec | time s | hitting bug "
            "| replays "
            "| odpor executions | odpor bug | tries rw | tries best sampler |")
    rows.append(head)
    rows.append("|" + "---|" * (head.count("|") - 1))
    found = {"hitting": 0, "odpor": 0}
    buggy = 0
    misses = []
    false_alarms = []
    for p in programs():
        h, o = load(p["name"], "hitting"), load(p["name"], "odpor")
        if h is None and o is None:
            continue
        bug = p["expect"] != "none"
        buggy += bug
        fam = (h or {}).get("family") or {}
        r = fam.get("ordered")
        hx = h["executions"] if h else None
        hb = bool(h and h["buggy"] > 0)
        ob = bool(o and o["buggy"] > 0)
        if bug:
            found["hitting"] += hb
            found["odpor"] += ob
            if (ob or p["name"] in MUST) and not hb:
                misses.append(p["name"])
        elif hb or ob:
            false_alarms.append(p["name"])

        def yn(d, b):
            if d is None:
                return "-"
            s = "y" if b else "n"
            if b and d.get("first_bug_execution"):
                s += f" (run {d['first_bug_execution']})"
            return s

        def exe(d):
            if d is None:
                return "-"
            s = str(d["executions"])
            if not d["complete"]:
                st = d.get("stopped") or ""
                s += " (limit)" if st.startswith("limit") else " (stopped)"
            return s

        rs = ratios.get(p["name"], {})
        best = max(rs.items(), key=lambda kv: kv[1]) if rs else None
        skipped = h.get("skipped_per_execution") if h else None
        rows.append("| " + " | ".join([
            p["name"], p["expect"], p["points"],
            str(fam.get("size", "-")), fam.get("construction", "-"),
            "-" if r is None else str(r),
            exe(h),
            "-" if r is None or hx is None else ("yes" if hx <= 2 * r + 2 else "**no**"),
            "-" if h is None else str(h.get("divergent", "-")),
            "-" if skipped is None else f"{skipped:.2f}",
            "-" if h is None else f"{h['elapsed_s']:.1f}",
            yn(h, hb), ", ".join(replays.get(p["name"], [])) or "-", exe(o), yn(o, ob),
            tries(rs.get("rw")) if "rw" in rs else "-",
            "-" if best is None else f"{tries(best[1])} ({best[0]})",
        ]) + " |")
    print("\n".join(rows))
    print()
    print(f"bugs found over {buggy} buggy programs: hitting {found['hitting']}, "
          f"odpor {found['odpor']}")
    print("hitting misses a bug odpor finds or one of " + ", ".join(sorted(MUST)) + ": "
          + (", ".join(misses) if misses else "none"))
    print("bug reported on a bug-free program: "
          + (", ".join(false_alarms) if false_alarms else "none"))


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "replay", "table"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "run":
        run(sys.argv[2:])
    elif sys.argv[1] == "replay":
        replay(sys.argv[2:])
    else:
        table()


if __name__ == "__main__":
    main()
