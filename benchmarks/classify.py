#!/usr/bin/env python3
"""Which races matter: `poscheck races --classify --sync` on every program of the suite.

For each program of manifest.toml (built into bin/ with `poscheck build benchmarks/`):
record the default run, reverse each race and synchronisation conflict (the first
--per-pair of each site pair), and classify it; a race harmless alone is also tried together
with one race of its reversed run (--depth 2, the default). For a buggy program, the first
harmful reversal whose outcome is the program's expected bug (else the first harmful pair's
final run with that outcome) is replayed 100 times with `poscheck replay`. Writes OUT/NAME.txt (the command's output), OUT/NAME.json (its --json
report), OUT/schedules/ (the saved schedules), OUT/replays.txt and OUT/table.md, and prints
the table.

Usage: benchmarks/classify.py [OUT]   (default: results/2026-11-25-classify)
Environment: POSCHECK (default: ../target/release/poscheck from this directory).
"""
import json
import os
import re
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
POSCHECK = os.environ.get(
    "POSCHECK", os.path.join(HERE, "..", "target", "release", "poscheck"))
PER_PAIR = "10"
REPLAYS = 100


def replay(schedule, log):
    """Replays of `schedule` that reproduced its recorded outcome, as 'k/100'."""
    o = subprocess.run([POSCHECK, "replay", "--times", str(REPLAYS), schedule],
                       capture_output=True, text=True)
    log.write(f"$ poscheck replay --times {REPLAYS} {schedule}\n{o.stdout}{o.stderr}\n")
    m = re.search(r"reproduced (\d+) of (\d+)", o.stdout)
    return f"{m.group(1)}/{m.group(2)}" if m else "error"


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(HERE, "results", "2026-11-25-classify"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(HERE, "manifest.toml"), "rb") as f:
        progs = tomllib.load(f)["program"]
    rows = []
    with open(os.path.join(out, "replays.txt"), "w") as log:
        for p in progs:
            name, expect = p["name"], p["expect"]
            # mem programs need every access as a point; all others use the profiled
            # racing accesses plus atomics (races), and --sync for the lock orders.
            points = "mem" if p.get("points") == "mem" else "races"
            js = os.path.join(out, f"{name}.json")
            cmd = [POSCHECK, "races", "--classify", "--sync", "--points", points,
                   "--per-pair", PER_PAIR, "--json", js,
                   "--out-dir", os.path.join(out, "schedules"),
                   os.path.join(HERE, "bin", name), "--", *p.get("args", [])]
            t0 = time.time()
            o = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
            dt = time.time() - t0
            with open(os.path.join(out, f"{name}.txt"), "w") as f:
                f.write("$ " + " ".join(os.path.relpath(c, HERE) if c.startswith("/") else c
                                        for c in cmd) + "\n")
                f.write(o.stdout + o.stderr + f"exit {o.returncode}\n")
            if o.returncode == 2 or not os.path.exists(js):
                rows.append([name, expect, points, "error", "", "", "", "", "", "", "", "",
                             "", f"{dt:.1f}"])
                continue
            d = json.load(open(js))
            revs = [r for g in d["races"] for r in g["reversed"]]
            kinds = {}
            for g in d["races"]:
                kinds[g["kind"]] = kinds.get(g["kind"], 0) + g["dynamic"]
            races = ", ".join(f"{kinds[k]} {k}" for k in ("data", "atomic", "sync")
                              if k in kinds) or "0"
            groups = len(d["races"])
            reproduces = ""
            if expect != "none":
                if d["original_kind"] == expect:
                    # The default schedule already hits the bug: its saved schedule is the
                    # one that reproduces it (a harmful race's reversal avoids it).
                    reproduces = (f"{expect} in the recorded run, replay "
                                  f"{replay(d['original_schedule'], log)}")
                else:
                    hit = next((r for r in revs if r["class"] == "harmful"
                                and r["outcome_kind"] == expect), None)
                    pair = next((r["together"] for r in revs if r.get("together")
                                 and r["together"]["outcome_kind"] == expect), None)
                    if hit:
                        reproduces = f"{expect}, replay {replay(hit['schedule'], log)}"
                    elif pair:
                        reproduces = (f"{expect} (pair), replay "
                                      f"{replay(pair['schedule'], log)}")
                    else:
                        reproduces = "no"
            rows.append([name, expect, points, d["original_kind"], races, str(groups),
                         str(len(revs)), str(d["harmful"]), str(d["harmless"]),
                         str(d["not_reversible"]), str(d["harmful_pairs"]),
                         str(d["pair_runs"]), reproduces, f"{dt:.1f}"])
            print(" | ".join(rows[-1]), flush=True)
    head = ["program", "expect", "points", "recorded run", "races (dynamic)",
            "site pairs", "reversed", "harmful", "harmless", "not reversible",
            "harmful together (pairs)", "pair runs", "harmful schedule reproduces the bug",
            "time (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    table = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
