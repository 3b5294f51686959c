#!/usr/bin/env bash
# Side by side: `poscheck explore` against Nidhugg (the stateless model checker for LLVM IR,
# https://github.com/nidhugg/nidhugg) on the same C files, with the same trace counts.
#
# Programs: readers(8), lastzero(10), indexer(14), filesystem(18) (tests/c/explore/) and
# wronglock (benchmarks/src/, buggy: both tools are told to explore every trace anyway).
#   poscheck: `poscheck cc -O1`, `poscheck explore --algo odpor --points mem` (size in argv).
#   Nidhugg:  `clang-14 -O0 -S -emit-llvm` of a copy whose main gets the size as argv (a
#             generated wrapper renames the program's main), `nidhugg --sc --optimal
#             --keep-going --no-check-mutex-init` (the programs use static initialisers).
# Beside them, each round measures the native floor of such an execution (build_floor below):
# fork + the program's number of threads created and joined, no control, as runs/s.
# Rounds are interleaved (poscheck, Nidhugg, floor, poscheck, Nidhugg, ... per program); each
# tool's row reports the MEDIAN wall time of its command over the rounds, and executions/s =
# (traces + sleep-set blocked) / that time. Both walls include start-up: Nidhugg's parsing
# and transforming the IR, poscheck's fork server (its own exploration time is listed too).
# Compiling is not timed. The trace counts (and blocked counts) must be equal, or the row
# says MISMATCH and the script exits 1 at the end; other failures exit 2.
#
# Usage: scripts/bench-vs-nidhugg.sh [--build-nidhugg [SRC]] [--build-only] [--rounds N]
#                                    [--out FILE] [--algo odpor|sdpor]
#   --build-nidhugg [SRC]  build Nidhugg at the pinned commit below, with Debian's LLVM 14,
#                          into the cache dir, from SRC (a checkout or a git dir; default: a
#                          clone of the public repository). Needs `scripts/install-deps.sh
#                          --nidhugg`. Without it the script uses $NIDHUGG, `nidhugg` on PATH
#                          or the cache; if there is none it says how to build it and exits 0.
#   --build-only           stop after building (with --build-nidhugg).
#   --rounds N             interleaved rounds per program (default 3; the median is reported).
#   --out FILE             also write the table to FILE.
#   --algo sdpor           source-DPOR on both sides (poscheck --algo dpor, nidhugg --source).
# Environment: CARGO_TARGET_DIR as for cargo (target/release/poscheck is built if needed),
#   NIDHUGG (path to the nidhugg binary), POSCHECK_CACHE (default ~/.cache/poscheck).
set -euo pipefail
caller_dir="$PWD"
cd "$(dirname "$0")/.."

# Nidhugg 0.4 (git describe: v0.3.1-115-g0aea4d23, 2026-04-01), the commit the README table uses.
NIDHUGG_COMMIT=0aea4d237eefe492f09df8e23a54cbeba69c42de
NIDHUGG_REPO=https://github.com/nidhugg/nidhugg
LLVM_ROOT=/usr/lib/llvm-14
cache="${POSCHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/poscheck}"

die() {
    echo "bench-vs-nidhugg: $*" >&2
    exit 2
}

build=0 build_only=0 src="" rounds=3 out="" algo=odpor
while [[ $# -gt 0 ]]; do
    case "$1" in
    --build-nidhugg)
        build=1
        if [[ $# -gt 1 && "$2" != --* ]]; then
            src="$2"
            shift
        fi
        ;;
    --build-only) build_only=1 ;;
    --rounds)
        [[ $# -gt 1 && "$2" =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive integer"
        rounds="$2"
        shift
        ;;
    --out)
        [[ $# -gt 1 ]] || die "--out needs a file name"
        out="$2"
        [[ $out == /* ]] || out="$caller_dir/$out"
        shift
        ;;
    --algo)
        [[ $# -gt 1 && ("$2" == odpor || "$2" == sdpor) ]] || die "--algo is odpor or sdpor"
        algo="$2"
        shift
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
[[ $build_only == 0 || $build == 1 ]] || die "--build-only needs --build-nidhugg"

# Clones SRC (or the public repository) at the pinned commit into $cache/nidhugg-src and
# installs it under $cache/nidhugg; the build log is $cache/nidhugg-build.log.
build_nidhugg() {
    local from="${src:-$NIDHUGG_REPO}" srcdir="$cache/nidhugg-src" log="$cache/nidhugg-build.log"
    [[ -x "$LLVM_ROOT/bin/llvm-config" ]] ||
        die "no $LLVM_ROOT/bin/llvm-config: run scripts/install-deps.sh --nidhugg"
    for tool in autoreconf automake clang-14 clang++-14 make git; do
        command -v "$tool" >/dev/null 2>&1 ||
            die "$tool is missing: run scripts/install-deps.sh --nidhugg"
    done
    mkdir -p "$cache"
    echo "bench-vs-nidhugg: building Nidhugg $NIDHUGG_COMMIT from $from (log: $log)" >&2
    # A failed clone or build leaves an earlier installation in place.
    rm -rf "$srcdir.new"
    {
        git clone -q --no-checkout "$from" "$srcdir.new" &&
            git -C "$srcdir.new" checkout -q "$NIDHUGG_COMMIT" &&
            rm -rf "$srcdir" && mv "$srcdir.new" "$srcdir" &&
            (
                cd "$srcdir" &&
                    autoreconf --install &&
                    ./configure --prefix="$cache/nidhugg" --with-llvm="$LLVM_ROOT" \
                        --with-clang=/usr/bin/clang-14 --with-clangxx=/usr/bin/clang++-14 &&
                    nice make -j2 &&
                    rm -rf "$cache/nidhugg" &&
                    make install
            )
    } >"$log" 2>&1 || die "building Nidhugg failed; the last lines of $log: $(tail -n 3 "$log" | tr '\n' ' ')"
    [[ -x "$cache/nidhugg/bin/nidhugg" ]] || die "the build did not install $cache/nidhugg/bin/nidhugg"
    echo "bench-vs-nidhugg: installed $cache/nidhugg/bin/nidhugg" >&2
}

if [[ $build == 1 ]]; then
    build_nidhugg
    [[ $build_only == 0 ]] || exit 0
fi

# The nidhugg binary: $NIDHUGG, PATH, then the cache.
nidhugg="${NIDHUGG:-}"
if [[ -n "$nidhugg" ]]; then
    [[ -x "$nidhugg" ]] || die "NIDHUGG=$nidhugg is not an executable"
elif command -v nidhugg >/dev/null 2>&1; then
    nidhugg="$(command -v nidhugg)"
elif [[ -x "$cache/nidhugg/bin/nidhugg" ]]; then
    nidhugg="$cache/nidhugg/bin/nidhugg"
else
    echo "bench-vs-nidhugg: skipped: no nidhugg (NIDHUGG, PATH or $cache/nidhugg); build it with: scripts/install-deps.sh --nidhugg && $0 --build-nidhugg"
    exit 0
fi
clang=clang-14
command -v "$clang" >/dev/null 2>&1 || die "clang-14 is missing (Nidhugg reads its LLVM 14 IR): run scripts/install-deps.sh"

target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p poscheck -p pos-preload || die "cargo build --release failed"
poscheck="$target/release/poscheck"
work="$(mktemp -d -t poscheck-vs-nidhugg.XXXXXX)"
trap 'rm -rf "$work"' EXIT

case "$algo" in
odpor) nid_algo=--optimal ;;
sdpor) nid_algo=--source ;;
esac
pos_algo="$algo"
[[ $algo == sdpor ]] && pos_algo=dpor

# name, source file, size (-: the program takes no argument), expected to be buggy (1),
# threads an execution creates (for the native floor)
programs=(
    "readers tests/c/explore/readers.c 8 0 9"
    "lastzero tests/c/explore/lastzero.c 10 0 11"
    "indexer tests/c/explore/indexer.c 14 0 14"
    "filesystem tests/c/explore/filesystem.c 18 0 18"
    "wronglock benchmarks/src/wronglock.c - 1 4"
)

# The native floor of an execution made of a process and its threads, which is what every
# execution of poscheck is: a loop that forks a child, which keeps to the CPU it starts on
# (as poscheck's runs do), creates THREADS threads that each lock and unlock a mutex, joins
# them and exits; no exec, no poscheck. Appends "floor NAME RUNS/S" to $work/runs.
build_floor() {
    cat >"$work/floor.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int x;
static void *work(void *a) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); return a; }
int main(int argc, char **argv) {
    int runs = atoi(argv[1]), threads = atoi(argv[2]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < runs; i++) {
        pid_t p = fork();
        if (p < 0) return 1;
        if (p == 0) {
            cpu_set_t s;
            CPU_ZERO(&s);
            CPU_SET(sched_getcpu(), &s);
            sched_setaffinity(0, sizeof s, &s);
            pthread_t t[64];
            for (int k = 0; k < threads; k++) pthread_create(&t[k], 0, work, 0);
            for (int k = 0; k < threads; k++) pthread_join(t[k], 0);
            _exit(0);
        }
        if (waitpid(p, 0, 0) != p) return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", runs / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
    return 0;
}
C
    gcc -O2 -pthread -o "$work/floor" "$work/floor.c" >"$work/floor.log" 2>&1 ||
        die "cannot build the native floor: $(head -n 1 "$work/floor.log")"
}

run_floor() {
    local name="$1" threads="$2" rate
    rate="$("$work/floor" 1000 "$threads")" || die "the native floor failed for $name"
    echo "floor $name $rate" >>"$work/runs"
}

# Builds both versions of one program: $work/NAME (poscheck cc -O1) and $work/NAME.ll
# (LLVM IR at -O0 for Nidhugg). Nidhugg starts main without arguments, so the IR comes from
# a wrapper that renames the program's main and calls it with argv = {NAME, SIZE}; `atoi`
# is a macro for the size there, as Nidhugg has no libc to call, and argv is filled element
# by element (an initialiser is a memcpy, which Nidhugg runs as an opaque external call).
build_program() {
    local name="$1" file="$2" size="$3" input="$2"
    "$poscheck" cc -O1 -pthread -o "$work/$name" "$file" >"$work/$name.cc.log" 2>&1 ||
        die "poscheck cc $file failed: $(head -n 1 "$work/$name.cc.log")"
    if [[ $size != - ]]; then
        input="$work/$name.nidhugg.c"
        cat >"$input" <<C
#include <stdlib.h>
#define atoi(s) ($size)
#define main program_main
#include "$PWD/$file"
#undef main
int main(void) {
    char *argv[3];
    argv[0] = "$name";
    argv[1] = "$size";
    argv[2] = 0;
    return program_main(2, argv);
}
C
    fi
    "$clang" -O0 -S -emit-llvm -o "$work/$name.ll" "$input" >"$work/$name.clang.log" 2>&1 ||
        die "$clang -emit-llvm $file failed: $(head -n 1 "$work/$name.clang.log")"
}

now() { date +%s.%N; }

# One run of each tool; appends "tool name traces blocked wall-s own-s" to $work/runs.
run_poscheck() {
    local name="$1" size="$2" buggy="$3" rc=0 t0 t1
    local args=()
    [[ $size == - ]] || args=(-- "$size")
    t0="$(now)"
    "$poscheck" explore --algo "$pos_algo" --points mem --out-dir "$work/out" \
        --json "$work/$name.json" "$work/$name" "${args[@]}" >"$work/$name.pos.log" 2>&1 || rc=$?
    t1="$(now)"
    # explore exits 1 when it found a bug: expected for the buggy program, never for the others.
    [[ $rc == "$buggy" ]] ||
        die "poscheck explore $name exited $rc (expected $buggy): $(tail -n 1 "$work/$name.pos.log")"
    python3 - "$work/$name.json" "$name" "$t0" "$t1" >>"$work/runs" <<'PY' || exit 2
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    d["executions"], d["blocked"], d["elapsed_s"], d["complete"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"bench-vs-nidhugg: poscheck explore {sys.argv[2]}: unreadable JSON report: {e}")
if not d["complete"]:
    sys.exit(f"bench-vs-nidhugg: poscheck explore {sys.argv[2]} did not complete: {d['stopped']}")
wall = float(sys.argv[4]) - float(sys.argv[3])
print("poscheck", sys.argv[2], d["executions"], d["blocked"], f"{wall:.6f}", f"{d['elapsed_s']:.6f}")
PY
}

run_nidhugg() {
    local name="$1" buggy="$2" rc=0 t0 t1
    t0="$(now)"
    "$nidhugg" --sc "$nid_algo" --keep-going --no-check-mutex-init "$work/$name.ll" >"$work/$name.nid.log" 2>&1 || rc=$?
    t1="$(now)"
    python3 - "$work/$name.nid.log" "$name" "$t0" "$t1" "$rc" "$buggy" >>"$work/runs" <<'PY' || exit 2
import re, sys
log, name, t0, t1, rc, buggy = sys.argv[1:]
text = open(log, errors="replace").read()
for w in re.findall(r"^WARNING: .*$", text, re.M):
    sys.exit(f"bench-vs-nidhugg: nidhugg {name}: {w}")
if "Error detected" in text and buggy == "0":
    sys.exit(f"bench-vs-nidhugg: nidhugg reports an error in the correct program {name} (see the IR wrapper)")
if "Error detected" not in text and buggy == "1":
    sys.exit(f"bench-vs-nidhugg: nidhugg finds no error in the buggy program {name}")
m = re.search(r"^Trace count: (\d+)$", text, re.M)
if not m:
    last = (text.strip().splitlines() or ["(no output)"])[-1]
    sys.exit(f"bench-vs-nidhugg: nidhugg {name} exited {rc} without a trace count: {last}")
blocked = sum(int(b) for b in re.findall(r"^(?:Sleepset|Assume|Await)-blocked trace count: (\d+)$", text, re.M))
wall = float(t1) - float(t0)
print("nidhugg", name, m.group(1), blocked, f"{wall:.6f}", "-")
PY
}

: >"$work/runs"
build_floor
for p in "${programs[@]}"; do
    read -r name file size buggy threads <<<"$p"
    build_program "$name" "$file" "$size"
    for _ in $(seq "$rounds"); do
        run_poscheck "$name" "$size" "$buggy"
        run_nidhugg "$name" "$buggy"
        run_floor "$name" "$threads"
    done
done

status=0
nid_version="$("$nidhugg" --version 2>&1)" || true
python3 - "$work/runs" "$rounds" "$algo" "$(nproc)" "$nid_version" >"$work/table" <<'PY' || status=$?
import statistics, sys
runs_file, rounds, algo, cores, version = sys.argv[1:]
version = next((l for l in version.splitlines() if "nidhugg" in l.lower()), "Nidhugg")
runs = {}
order = []
floor = {}
for line in open(runs_file):
    if line.startswith("floor "):
        _, name, rate = line.split()
        floor.setdefault(name, []).append(float(rate))
        continue
    tool, name, traces, blocked, wall, own = line.split()
    if name not in order:
        order.append(name)
    runs.setdefault((tool, name), []).append((int(traces), int(blocked), float(wall), own))
sizes = {"readers": 8, "lastzero": 10, "indexer": 14, "filesystem": 18}
nid_flag = "--optimal" if algo == "odpor" else "--source"
pos_flag = "odpor" if algo == "odpor" else "dpor"
print(f"poscheck explore --algo {pos_flag} --points mem (cc -O1) vs {version.strip()} --sc {nid_flag} (clang-14 -O0)")
print(f"{cores} cores; {rounds} interleaved rounds; median wall time of each tool's command; exec/s = (traces + blocked) / median wall")
print()
print("| program | traces poscheck | traces Nidhugg | poscheck exec/s | Nidhugg exec/s | ratio poscheck/Nidhugg | native floor runs/s | poscheck/floor | Nidhugg/floor |")
print("|---|---|---|---|---|---|---|---|---|")
bad = False
for name in order:
    p, n = runs[("poscheck", name)], runs[("nidhugg", name)]
    label = f"{name}({sizes[name]})" if name in sizes else name
    counts_p = {(t, b) for t, b, _, _ in p}
    counts_n = {(t, b) for t, b, _, _ in n}
    def shown(c):
        return "/".join(f"{t}" + (f" (+{b} blocked)" if b else "") for t, b in sorted(c))
    tp, tn = shown(counts_p), shown(counts_n)
    if counts_p != counts_n or len(counts_p) != 1:
        bad = True
        print(f"| {label} | {tp} | {tn} | MISMATCH | MISMATCH | MISMATCH | | | |")
        continue
    (t, b), = counts_p
    wp = statistics.median(w for _, _, w, _ in p)
    wn = statistics.median(w for _, _, w, _ in n)
    rp, rn = (t + b) / wp, (t + b) / wn
    rf = statistics.median(floor[name])
    print(f"| {label} | {tp} | {tn} | {rp:,.0f} | {rn:,.0f} | {rp / rn:.2f} | {rf:,.0f} | {rp / rf:.2f} | {rn / rf:.2f} |")
print()
print("Native floor: a process forked per execution that keeps to its CPU, creates the")
print("program's number of threads (each locks and unlocks a mutex), joins them and exits;")
print("no exec, no control (median of the rounds, 1,000 runs each). Nidhugg/floor > 1: Nidhugg")
print("interprets an execution faster than the kernel creates its process and threads, which")
print("no tool that runs each execution as a native process can match.")
print()
print("Per run (wall s; poscheck's own exploration time in brackets):")
for name in order:
    p, n = runs[("poscheck", name)], runs[("nidhugg", name)]
    ps = " ".join(f"{w:.3f} [{float(o):.3f}]" for _, _, w, o in p)
    ns = " ".join(f"{w:.3f}" for _, _, w, _ in n)
    print(f"  {name:<11} poscheck {ps} | nidhugg {ns}")
sys.exit(3 if bad else 0)
PY
[[ $status == 0 || $status == 3 ]] || die "cannot summarise the runs (python exited $status)"
cat "$work/table"
[[ -z "$out" ]] || cp "$work/table" "$out" || die "cannot write $out"
if [[ $status == 3 ]]; then
    echo "bench-vs-nidhugg: trace counts differ (MISMATCH rows above)" >&2
    exit 1
fi
