#!/usr/bin/env bash
# Set up lsnn on a fresh machine and run its demo or its test suite.
#   bash tools/setup.sh demo       # install what is missing, install lsnn, run the demo
#   bash tools/setup.sh test       # ... then run the quick tier of the tests
#   bash tools/setup.sh test-all   # ... then run every test (CI runs this)
# Dependencies come from Debian's prebuilt r-cran-* packages where the machine
# is Debian and we are root, from CRAN otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-demo}"
case "$what" in
  demo|test|test-all) ;;
  *) echo "usage: bash tools/setup.sh demo|test|test-all" >&2; exit 2 ;;
esac

# shellcheck source=tools/dependencies.sh
. tools/dependencies.sh
debs="$lsnn_debs r-cran-testthat"
cran="$lsnn_cran, \"testthat\""
need=no
command -v pandoc >/dev/null && [ -d /usr/share/datasets/fashion-mnist ] || need=yes

# The packages of lsnn's Bioconductor and Seurat adapters (LsnnParam(),
# as_seurat_neighbor()), and the peers and backends some tests compare with
# (future.batchtools, RcppHNSW): suggested only, their tests skip without them. The
# test suite installs them from Debian, so that those tests run; elsewhere
# they are left to the user.
adapter_debs="r-bioc-biocneighbors r-bioc-scater r-bioc-scran r-bioc-bluster
              r-bioc-singlecellexperiment r-cran-seurat r-cran-future.batchtools r-cran-igraph
              r-cran-rcpphnsw r-cran-withr"
adapters='"BiocNeighbors", "scater", "scran", "bluster", "SingleCellExperiment", "Seurat",
          "future.batchtools", "igraph", "RcppHNSW", "withr"'
if [ "$what" != demo ] && on_debian_as_root && [ -n "$(missing_r_packages "$adapters")" ]; then
  debs="$debs $adapter_debs"
  need=yes
fi
install_missing "lsnn setup" "$debs" "$cran" "$need"

# Build the source tarball (which runs and keeps the vignettes) and install
# from it, so that vignette(package = "lsnn") lists them; both steps compile,
# on every core.
export MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"
build_dir=$(mktemp -d)
log="$build_dir/lsnn-setup.log"
(cd "$build_dir" && R CMD build --no-manual "$OLDPWD") >"$log" 2>&1 ||
  { cat "$log"; echo "lsnn setup: R CMD build failed" >&2; exit 1; }
R CMD INSTALL --no-test-load "$build_dir"/lsnn_*.tar.gz >>"$log" 2>&1 ||
  { cat "$log"; echo "lsnn setup: R CMD INSTALL failed" >&2; exit 1; }
# The installed vignettes are part of what this script promises (and what
# .ci/run proves): fail when they are missing.
vignettes=$(Rscript -e 'cat(vignette(package = "lsnn")$results[, "Item"], sep = ", ")')
if [ -z "$vignettes" ]; then
  cat "$log"; echo "lsnn setup: lsnn was installed without its vignettes" >&2; exit 1
fi
rm -rf "$build_dir"
echo "lsnn setup: installed lsnn $(Rscript -e 'cat(format(packageVersion("lsnn")))')" \
  "with vignettes: $vignettes"

case "$what" in
  demo) Rscript tools/demo.R ;;
  test) Rscript tools/run-tests.R ;;
  test-all) Rscript tools/run-tests.R --all ;;
esac
