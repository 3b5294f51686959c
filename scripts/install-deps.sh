#!/usr/bin/env bash
# Installs the system packages poscheck's build and tests need (idempotent, Debian).
# gcc builds the C test programs and the benchmark suite; clang-14 is the second compiler
# `poscheck cc` supports (POSCHECK_CC=clang). The end-to-end tests build C++ programs with
# both g++ and clang++-14 (the clang-14 package provides clang++-14 and clang-14).
# chromium (headless) checks that the HTML report renders. gdb is the debugger of
# `poscheck debug`.
# When another apt or dpkg holds the package locks (unattended upgrades, a second install),
# this waits for it (up to APT_LOCK_WAIT seconds, default 600) instead of failing at once.
#
# Usage: scripts/install-deps.sh [--nidhugg]
#   --nidhugg (or POSCHECK_DEPS_NIDHUGG=1) also installs what building Nidhugg from source
#   needs for scripts/bench-vs-nidhugg.sh --build-nidhugg (autotools, LLVM 14 headers and
#   libraries, Boost, libffi/zlib/libedit headers). Off by default: CI does not need them.
set -euo pipefail
nidhugg="${POSCHECK_DEPS_NIDHUGG:-0}"
for arg in "$@"; do
  case "$arg" in
    --nidhugg) nidhugg=1 ;;
    *) echo "install-deps: unknown argument '$arg' (usage: install-deps.sh [--nidhugg])" >&2; exit 2 ;;
  esac
done
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v clang-14 >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || need+=(clang-14)
command -v g++ >/dev/null 2>&1 || need+=(g++)
# clang++-14 builds the C++ corpus programs (tests/corpus/*/*.cpp) next to g++.
command -v clang++-14 >/dev/null 2>&1 || need+=(clang-14)
# clang's sanitizer runtimes (clang -fsanitize=address/thread builds of
# runner/tests/corpus_sanitizers.rs); clang-14 only recommends them. gcc's (libasan8,
# libtsan2) come with gcc.
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q 'install ok installed' \
  || need+=(libclang-rt-14-dev)
# GLib's headers and library build the GLib corpus (runner/tests/corpus_glib.rs: GMutex and
# GCond as scheduling points, preload/src/glib.rs).
dpkg-query -W -f='${Status}' libglib2.0-dev 2>/dev/null | grep -q 'install ok installed' \
  || need+=(libglib2.0-dev)
# musl-gcc builds the musl-linked static test programs of the ptrace backend
# (runner/tests/ptrace_*.rs), next to gcc -static (glibc).
command -v musl-gcc >/dev/null 2>&1 || need+=(musl-tools)
# Headless Chromium renders the HTML report once in a test (runner/tests/report_html.rs:
# a screenshot, no console errors); the test is skipped where it is absent.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# `script` gives runner/tests/progress.rs a pseudo-terminal (the live progress lines).
command -v script >/dev/null 2>&1 || need+=(bsdutils)
# gdb runs `poscheck debug` (a schedule replayed under the debugger) and its test.
command -v gdb >/dev/null 2>&1 || need+=(gdb)
# Nidhugg (the stateless model checker scripts/bench-vs-nidhugg.sh compares against) is
# built with autoreconf + configure + make against Debian's LLVM 14; configure requires
# Boost (base, unit_test_framework, system) even when its own tests are not built.
if [ "$nidhugg" = 1 ]; then
  for pkg in autoconf automake pkg-config llvm-14-dev libffi-dev zlib1g-dev \
    libedit-dev libzstd-dev libboost-dev libboost-test-dev libboost-system-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
      || need+=("$pkg")
  done
fi
wait_s=${APT_LOCK_WAIT:-600}

# apt-get with the dpkg lock timeout; `apt-get update` takes the lists lock, which that
# option does not cover on every apt version, so a lock failure is retried until the
# deadline.
apt_wait() {
  local deadline=$((SECONDS + wait_s)) out
  while true; do
    if out=$($SUDO apt-get -o DPkg::Lock::Timeout="$wait_s" "$@" 2>&1); then
      return 0
    fi
    if grep -qiE 'could not get lock|unable to lock|is another process using it' <<<"$out" \
      && [ "$SECONDS" -lt "$deadline" ]; then
      echo "install-deps: apt is busy (another package manager holds its lock); waiting" >&2
      sleep "${APT_LOCK_POLL:-5}"
      continue
    fi
    printf '%s\n' "$out" >&2
    return 1
  done
}

if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  apt_wait update -qq
  apt_wait install -y -qq "${need[@]}"
fi
