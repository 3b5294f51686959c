#!/usr/bin/env python3
"""Run every test binary of the workspace, two at a time (scripts/test.sh), and beside them
the jobs that mostly wait (`WAITING`).

The runner's end-to-end tests are one binary (runner/tests/main.rs) with a module per file;
each module runs as a job of its own (`split_modules`), named after its file.

`cargo test` runs its test binaries one after the other. Most of the runner's end-to-end
binaries spend their time waiting (step timeouts, sleeps, programs blocked on purpose), so
two of them side by side take little more than one: CI stays well under its time limit on
2 cores. The binaries are built once (`cargo test --no-run`), then run from their package's
directory, as cargo runs them, the longest first; each binary's output is printed whole when
it ends, and the exit status is non-zero if any binary failed. Extra arguments go to every
test binary (e.g. a test name filter).

Usage: python3 scripts/run-tests.py [--jobs N] [-- TEST-ARGS...]
"""
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binaries():
    """(name, executable, package directory) of every test target of the workspace."""
    out = subprocess.run(
        ["cargo", "test", "--release", "--workspace", "--no-run", "--message-format=json"],
        cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True,
    ).stdout
    found = []
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") != "compiler-artifact" or not m.get("profile", {}).get("test"):
            continue
        exe = m.get("executable")
        if not exe:
            continue
        t = m["target"]
        pkg_dir = os.path.dirname(m["manifest_path"])
        kind = "unittests" if set(t["kind"]) & {"lib", "bin", "cdylib", "rlib"} else "test"
        found.append((f"{kind} {os.path.relpath(t['src_path'], ROOT)}", exe, pkg_dir, []))
    return found


def split_modules(bins, filtered):
    """The runner's end-to-end binary (`runner/tests/main.rs`, one module per file of
    `runner/tests/`) as one job per module, each the binary run on that module's tests only
    (`--exact` with their names), so that the modules run side by side and apart, as when each
    file was a binary of its own. With a test filter of the caller's, the binary runs once."""
    jobs = []
    for name, exe, cwd, extra in bins:
        if filtered or not name.endswith(os.path.join("tests", "main.rs")):
            jobs.append((name, exe, cwd, extra))
            continue
        listed = subprocess.run([exe, "--list"], cwd=cwd, stdout=subprocess.PIPE, check=True,
                                text=True).stdout
        modules = {}
        for line in listed.splitlines():
            if line.endswith(": test"):
                test = line[: -len(": test")]
                modules.setdefault(test.split("::")[0], []).append(test)
        folder = os.path.dirname(name.split()[-1])
        for module, tests in sorted(modules.items()):
            jobs.append((f"test {folder}/{module}.rs", exe, cwd, ["--exact", *tests]))
    return jobs


# The longest binaries in recent runs start first, so that the pool does not end on one of
# them alone (longest first, as measured on 2 cores on 2026-11-29: corpus_vtime 89 s,
# corpus_cancel 59 s, transport 49 s, corpus_signals 46 s, corpus_blocked 45 s, ...; before,
# corpus_vtime started late and ran alone at the end).
# Jobs that mostly wait (real time passing by design: kernel waits longer than the step
# timeout in corpus_vtime, 81 s of wall time for 26 s of CPU here; corpus_sanitizers 29 s
# for 13 s): they run in a lane of their own beside the `--jobs` lanes, which then stay busy
# with work that uses the cores.
WAITING = ["corpus_vtime", "corpus_sanitizers"]

LONGEST = [
    "corpus_vtime", "corpus_cancel", "transport", "corpus_signals", "corpus_blocked", "lib",
    "explore", "corpus_sanitizers", "corpus_fork", "corpus_futex", "corpus_outside",
    "corpus_thread_exit",
]


def module_of(job):
    """The file stem a job is named after (`corpus_vtime` for `test runner/tests/corpus_vtime.rs`)."""
    return os.path.splitext(os.path.basename(job[0].split()[-1]))[0]


def order(bins):
    def rank(b):
        name = module_of(b)
        return LONGEST.index(name) if name in LONGEST else len(LONGEST)
    return sorted(bins, key=rank)


def main():
    args = sys.argv[1:]
    jobs = 2
    if args[:1] == ["--jobs"]:
        jobs = int(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    queue = order(split_modules(binaries(), filtered=bool(args)))
    lock = threading.Lock()
    failed = []
    spent = [0.0, 0.0]  # wall and CPU seconds of every binary, summed

    def worker(waiting_lane=False):
        while True:
            with lock:
                mine = [j for j in queue if (module_of(j) in WAITING) == waiting_lane]
                if not mine:
                    return
                queue.remove(mine[0])
                name, exe, cwd, extra = mine[0]
            start = time.monotonic()
            p = subprocess.Popen([exe, *extra, *args], cwd=cwd, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, errors="replace")
            out = p.stdout.read()
            p.stdout.close()
            # The CPU time of the binary and everything it ran and waited for (poscheck, the
            # programs), which is what the CI's 2 cores pay for: most binaries also wait.
            _, status, usage = os.wait4(p.pid, 0)
            code = p.returncode = os.waitstatus_to_exitcode(status)
            took = time.monotonic() - start
            cpu = usage.ru_utime + usage.ru_stime
            with lock:
                print(f"     Running {name} ({os.path.relpath(exe, ROOT)}): "
                      f"exit {code}, {took:.1f} s, CPU {cpu:.1f} s", flush=True)
                print(out, flush=True)
                spent[0] += took
                spent[1] += cpu
                if code != 0:
                    failed.append(name)

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
    threads.append(threading.Thread(target=worker, args=(True,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"test binaries: {spent[0]:.0f} s of wall time and {spent[1]:.0f} s of CPU in all, "
          f"{jobs} at a time and a lane for {', '.join(WAITING)}", flush=True)
    # Doc tests (none today, but cargo test would run them).
    doc = subprocess.run(["cargo", "test", "--release", "--workspace", "--doc"], cwd=ROOT)
    if doc.returncode != 0:
        failed.append("doc tests")
    if failed:
        print(f"test binaries failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("every test binary passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
