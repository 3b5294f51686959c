#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what the tests need, builds the
# workspace (libpos.so included), checks formatting and lints, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo fmt --all -- --check
cargo build --release --workspace
cargo clippy --release --workspace --all-targets -- -D warnings
# Every test binary, two at a time, and the ones that mostly wait beside them: the same tests
# as `cargo test --release --workspace`, in less wall time.
python3 scripts/run-tests.py
