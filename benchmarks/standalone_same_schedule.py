#!/usr/bin/env python3
"""Same POS_SEED => the same schedule, byte for byte, across libpos builds and transports
(issue 15). Runs every suite program of benchmarks/manifest.toml standalone
(`LD_PRELOAD=libpos.so setarch -R ./prog`, ASLR off so that addresses in the schedule are
stable) once per seed with the reference libpos and once per candidate, and compares the
POS_SCHEDULE_OUT files and the outcome lines.

Usage: benchmarks/standalone_same_schedule.py REF_LIBPOS CAND_LIBPOS[:ENV=VAL,...] ... [--seeds 1,2,3]
                                               [--algos pos] [--only NAME,...]
Exit status 1 if any pair differs, 2 on bad usage."""
import os, subprocess, sys, tempfile, tomllib

def main():
    args = sys.argv[1:]
    seeds, algos, only = [1, 2, 3], ["pos"], None
    libs = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--seeds", "--algos", "--only") and i + 1 < len(args):
            v = args[i + 1].split(",")
            if a == "--seeds":
                seeds = [int(x) for x in v]
            elif a == "--algos":
                algos = v
            else:
                only = set(v)
            i += 2
            continue
        libs.append(a)
        i += 1
    if len(libs) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    def parse(spec):
        path, _, envs = spec.partition(":")
        env = dict(e.split("=", 1) for e in envs.split(",") if e)
        if not os.path.isfile(path):
            print(f"error: no such libpos.so: {path}", file=sys.stderr)
            sys.exit(2)
        return spec, os.path.abspath(path), env
    libs = [parse(l) for l in libs]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "manifest.toml"), "rb") as f:
        progs = tomllib.load(f)["program"]
    tmp = tempfile.mkdtemp()
    same = differ = 0
    for p in progs:
        exe = os.path.join(root, "bin", p["name"])
        if (only and p["name"] not in only) or not os.path.exists(exe):
            continue
        for algo in algos:
            for seed in seeds:
                outs = []
                for k, (spec, path, extra) in enumerate(libs):
                    sched = os.path.join(tmp, f"{k}.json")
                    if os.path.exists(sched):
                        os.remove(sched)
                    env = dict(os.environ, POS_SEED=str(seed), POS_ALGO=algo,
                               POS_SCHEDULE_OUT=sched, LD_PRELOAD=path, **extra)
                    try:
                        r = subprocess.run(["setarch", "-R", exe, *p.get("args", [])], env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           timeout=60, cwd=root)
                        err = r.stderr.decode(errors="replace")
                    except subprocess.TimeoutExpired:
                        err = "timeout"
                    outcome = [l for l in err.splitlines() if l.startswith("poscheck: outcome=")]
                    text = open(sched).read() if os.path.exists(sched) else None
                    outs.append((outcome, text))
                ref = outs[0]
                for (spec, _, _), o in zip(libs[1:], outs[1:]):
                    if o == ref:
                        same += 1
                    else:
                        differ += 1
                        print(f"DIFFER {p['name']} algo={algo} seed={seed} {spec}: "
                              f"{ref[0]} vs {o[0]}" + ("" if ref[1] == o[1] else " (schedules differ)"))
                print(f"{p['name']} algo={algo} seed={seed}: {ref[0][-1] if ref[0] else 'no outcome'}",
                      flush=True)
    print(f"{same} identical, {differ} different")
    sys.exit(1 if differ else 0)

main()
