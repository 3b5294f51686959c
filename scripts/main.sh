#!/usr/bin/env bash
# The main job (README): build poscheck and libpos, build the benchmark suite with
# `poscheck cc`, compare the sampling algorithms on it (the POS paper's Table 3 shape), and
# write the HTML report (charts and every bug's interleaving) to poscheck-out/report.html.
# Usage: scripts/main.sh [TRIES] [ALGOS]   (defaults: 1000 tries; rw,pct3,pos,surw,rff,auto)
set -euo pipefail
cd "$(dirname "$0")/.."
tries="${1:-1000}"
algos="${2:-rw,pct3,pos,surw,rff,auto}"
bash scripts/install-deps.sh
cargo build --release --workspace
./target/release/poscheck build benchmarks/
mkdir -p poscheck-out
# Exit code 1 means "bugs were found": that is the expected result on this suite.
./target/release/poscheck compare --algos "$algos" --tries "$tries" --seed 1 \
  --json poscheck-out/compare.json benchmarks/ || [ $? -eq 1 ]
echo "poscheck: comparison saved to poscheck-out/compare.json"
./target/release/poscheck report poscheck-out/compare.json -o poscheck-out/report.html
echo "poscheck: HTML report: $(pwd)/poscheck-out/report.html"
