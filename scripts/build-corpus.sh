#!/usr/bin/env bash
# Builds the test corpus (tests/corpus/*) into one directory of binaries, the way the
# end-to-end tests build it, so that whole-corpus checks can run over it, for example
#   scripts/build-corpus.sh /tmp/corpus && scripts/determinism.sh /tmp/corpus
# Usage: scripts/build-corpus.sh OUT [CORPUS_DIR...]   (default: every tests/corpus/* folder)
# C files are built with gcc and clang-14, C++ with g++ and clang++-14 (-std=c++20), Rust
# with rustc -O; files in a folder named omp/ get -fopenmp (gcc and g++ only: libgomp).
# Binary names: <folder>_<file>_<compiler>. A compiler that is missing is skipped (said).
# lib*.c and *_lib.* files are libraries of a test, not programs: skipped, except that
# X_main.cpp is linked with X_lib.cpp built as a shared library (found through its run path).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 OUT [CORPUS_DIR...]" >&2; exit 2; }
out=$1
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ $# -eq 0 ]; then
  # threads_warning/ holds programs for the ELF check of `run` (built by its test, one with
  # its own library), not programs to schedule.
  for d in "$root"/tests/corpus/*/; do
    case "$d" in */threads_warning/) ;; *) set -- "$@" "$d" ;; esac
  done
fi
have() { command -v "$1" >/dev/null 2>&1; }
built=0
build() { # compiler, source, binary, flags...
  local cc=$1 src=$2 bin=$3
  shift 3
  if ! have "$cc"; then
    echo "build-corpus: $cc not found; $src skipped for it" >&2
    return 0
  fi
  local lib=() so
  case "$src" in
    *_main.cpp)
      # Its library, built with the same compiler, linked after the source (--as-needed).
      so="$(dirname "$bin")/lib$(basename "$bin").so"
      if ! "$cc" "$@" -shared -fPIC -o "$so" "${src%_main.cpp}_lib.cpp" 2>"$bin.log"; then
        echo "build-corpus: $cc failed on ${src%_main.cpp}_lib.cpp:" >&2
        tail -5 "$bin.log" >&2
        exit 1
      fi
      lib=("$so" "-Wl,-rpath,$(dirname "$so")")
      ;;
  esac
  if ! "$cc" "$@" -o "$bin" "$src" "${lib[@]}" 2>"$bin.log"; then
    echo "build-corpus: $cc failed on $src:" >&2
    tail -5 "$bin.log" >&2
    exit 1
  fi
  rm -f "$bin.log"
  built=$((built + 1))
}
while IFS= read -r src; do
  rel=${src#"$root"/tests/corpus/}
  stem=$(echo "${rel%.*}" | tr '/' '_')
  omp=()
  case "/$rel" in */omp/*) omp=(-fopenmp) ;; esac
  case "$src" in
    */lib*.c | *_lib.c | *_lib.cpp) ;;
    *.c)
      build gcc "$src" "$out/${stem}_gcc" -O1 -g -pthread "${omp[@]}"
      [ ${#omp[@]} -gt 0 ] || build clang-14 "$src" "$out/${stem}_clang" -O1 -g -pthread
      ;;
    *.cpp)
      build g++ "$src" "$out/${stem}_gxx" -std=c++20 -O1 -g -pthread "${omp[@]}"
      [ ${#omp[@]} -gt 0 ] || build clang++-14 "$src" "$out/${stem}_clangxx" -std=c++20 -O1 -g -pthread
      ;;
    *.rs)
      build rustc "$src" "$out/${stem}_rustc" -O --edition 2021
      ;;
  esac
done < <(find "$@" -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.rs' \) | sort)
echo "build-corpus: $built binaries in $out"
