#!/usr/bin/env bash
# Runs the benchmarks one after the other (never two timings at once) on an
# otherwise idle machine, from the repository root, with lsnn installed:
#   bash bench/run-all.sh            the Fashion-MNIST benchmarks
#   bash bench/run-all.sh --large    also the generated data of 1e5 to 1e7
#                                    rows (hours; the shards and graphs are
#                                    written to LSNN_BENCH_DIR, by default
#                                    R's temporary directory, which needs
#                                    room for them)
# The official PaCMAP is compared when PACMAP_SRC names its checkout, and
# FIt-SNE when FITSNE_SRC does (bench/pacmap-peer.py, bench/fitsne.R). Each
# command's output goes to bench/results/<name>.txt as well; the commands
# are those of the figures in bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
large=false
[ "${1:-}" = "--large" ] && large=true

run() {
  local name=$1
  shift
  echo "== $name: $* ($(date -u +%H:%M:%S))"
  env "$@" 2>&1 | tee "bench/results/$name.txt"
}

run exact Rscript bench/bench-exact.R
run approx Rscript bench/bench-approx.R
run sparse Rscript bench/bench-sparse.R
run embed Rscript bench/bench-embed.R
run cost-gradient Rscript bench/bench-cost-gradient.R
run quality Rscript bench/bench-quality.R
run transform Rscript bench/bench-transform.R
run method-comparison Rscript bench/method-comparison.R
run pca Rscript bench/bench-pca.R
run pacmap-pairs Rscript bench/bench-pacmap-pairs.R
run scale-spread Rscript bench/bench-scale.R spread accuracy
run scale-umap Rscript bench/bench-scale.R umap
run scale-tsne LSNN_BENCH_TSNE_ITER=750 LSNN_BENCH_TSNE_RTSNE=false Rscript bench/bench-scale.R tsne
run tsne-grid Rscript bench/bench-tsne-grid.R
[ -n "${PACMAP_SRC:-}" ] && run pacmap Rscript bench/bench-pacmap.R fit transform
run defaults Rscript bench/bench-defaults.R

if $large; then
  run scale-tsne-1e5 LSNN_BENCH_BIG_N=1e5 LSNN_BENCH_BIG_ITER=750 LSNN_BENCH_RTSNE_ITER=1000 \
    LSNN_BENCH_BIG_RUNS=tsne_lsnn,tsne_Rtsne Rscript bench/bench-scale.R million
  run scale-tsne-1e6 LSNN_BENCH_BIG_N=1e6 LSNN_BENCH_BIG_ITER=750 LSNN_BENCH_BIG_RUNS=tsne_lsnn \
    Rscript bench/bench-scale.R million
  run scale-umap-million LSNN_BENCH_BIG_RUNS=umap_lsnn,umap_uwot Rscript bench/bench-scale.R million
  run pacmap-big Rscript bench/bench-big.R 1e6 0 pacmap
  run tsne-big-harder Rscript bench/bench-big.R 1e6 0.05 tsne
  run tsne-big-harder-fitsne LSNN_BENCH_GRID=fitsne Rscript bench/bench-big.R 1e6 0.05 tsne
  run tsne-attraction Rscript bench/bench-attraction.R 1e6
  run shards-format Rscript bench/bench-shards.R format
  run shards-exact Rscript bench/bench-shards.R exact 1
  run shards-approx Rscript bench/bench-shards.R approx 1 1e7
  run shards-simulate Rscript bench/bench-shards.R simulate
  run pacmap-sharded-graph Rscript bench/bench-pacmap-sharded.R graph 1e7
  run pacmap-sharded-layout Rscript bench/bench-pacmap-sharded.R layout 1e7
fi
