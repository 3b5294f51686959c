#!/usr/bin/env bash
# Installs the system packages poscheck's build and tests need (idempotent, Debian).
# gcc builds the C test programs and the benchmark suite; clang-14 is the second compiler
# `poscheck cc` supports (POSCHECK_CC=clang).
set -euo pipefail
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v clang-14 >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || need+=(clang-14)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
