#!/usr/bin/env python3
"""rt against odpor on every sync-point program of the suite (issue 12: `rt = odpor` on the
sync-only programs).

Runs `poscheck explore --algo odpor|rt --points sync` on each program of
benchmarks/manifest.toml whose points are `sync`, with a budget, and prints a markdown table:
executions, sleep-set-blocked runs, complete or not, buggy runs, for both, and whether the
complete explorations agree on the number of executions and on the number of bug-free ones
(a run cut short by a bug is a prefix: the two explorers may cut the same bug-free traces
short in different numbers of ways). Binaries come from
`poscheck build benchmarks/`.

usage: benchmarks/rt_vs_odpor.py [--max-executions N] [--time-limit S] [--out DIR] [NAME ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
POSCHECK = os.path.join(ROOT, "target", "release", "poscheck")


def explore(algo, prog, args, budget, limit, out):
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "r.json")
        cmd = [POSCHECK, "explore", "--algo", algo, "--points", "sync",
               "--max-executions", str(budget), "--time-limit", str(limit),
               "--out-dir", os.path.join(tmp, "bugs"), "--json", js, prog, "--", *args]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if out:
            name = os.path.basename(prog)
            with open(os.path.join(out, f"{name}.{algo}.txt"), "w") as f:
                f.write(p.stdout + p.stderr)
        if not os.path.exists(js):
            return {"error": (p.stderr.strip().splitlines() or ["no report"])[-1]}
        with open(js) as f:
            return json.load(f)


def cell(r):
    if "error" in r:
        return "error", "-", "-", "-"
    done = "complete" if r["complete"] else "limit"
    return str(r["executions"]), str(r["blocked"]), done, str(r["buggy"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-executions", type=int, default=20000)
    ap.add_argument("--time-limit", type=int, default=60)
    ap.add_argument("--out", default=None)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    with open(os.path.join(HERE, "manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    print("| program | odpor runs | blocked | odpor | rt runs | blocked | rt | buggy odpor/rt "
          "| same count | same bug-free count |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in manifest["program"]:
        if p.get("points") != "sync" or (a.names and p["name"] not in a.names):
            continue
        prog = os.path.join(HERE, "bin", p["name"])
        if not os.path.exists(prog):
            sys.exit(f"{prog} missing: run `poscheck build benchmarks/` first")
        o = explore("odpor", prog, p.get("args", []), a.max_executions, a.time_limit, a.out)
        r = explore("rt", prog, p.get("args", []), a.max_executions, a.time_limit, a.out)
        oc, rc = cell(o), cell(r)
        both = oc[2] == "complete" and rc[2] == "complete"
        same = ("yes" if oc[0] == rc[0] else "no") if both else "-"
        good = "-"
        if both:
            og = int(oc[0]) - int(oc[3])
            rg = int(rc[0]) - int(rc[3])
            good = "yes" if og == rg else f"no ({og}/{rg})"
        print(f"| {p['name']} | {oc[0]} | {oc[1]} | {oc[2]} | {rc[0]} | {rc[1]} | {rc[2]} "
              f"| {oc[3]}/{rc[3]} | {same} | {good} |", flush=True)


if __name__ == "__main__":
    main()
