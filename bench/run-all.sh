#!/usr/bin/env bash
# Runs every benchmark one after the other (never two timings at once) on an
# otherwise idle machine, from the repository root, with lsnn installed:
#   bash bench/run-all.sh
# Output of each script goes to bench/results/<name>.txt as well.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
for script in bench/bench-exact.R bench/bench-approx.R bench/bench-sparse.R bench/bench-embed.R \
              bench/bench-transform.R; do
  [ -f "$script" ] || continue
  name=$(basename "$script" .R)
  echo "== $script ($(date -u +%H:%M:%S))"
  Rscript "$script" 2>&1 | tee "bench/results/$name.txt"
done
