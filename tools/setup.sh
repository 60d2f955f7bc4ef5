#!/usr/bin/env bash
# Set up lsnn on a fresh machine and run its demo or its test suite.
#   bash tools/setup.sh demo   # install what is missing, install lsnn, run the demo
#   bash tools/setup.sh test   # install what is missing, install lsnn, run the tests
# Dependencies come from Debian's prebuilt r-cran-* packages where the machine
# is Debian and we are root, from CRAN otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-demo}"

debs="r-cran-cli r-cran-rcpp r-cran-rcppeigen r-cran-rcppparallel r-cran-matrix r-cran-uwot
      r-cran-rspectra r-cran-irlba r-cran-knitr r-cran-rmarkdown r-cran-png r-cran-testthat"
cran='c("cli", "Rcpp", "RcppEigen", "RcppParallel", "Matrix", "uwot", "RSpectra", "irlba",
        "knitr", "rmarkdown", "png", "testthat")'

missing=$(Rscript -e "p <- $cran; cat(p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)])")
if [ -n "$missing" ]; then
  echo "lsnn setup: installing $missing"
  if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $debs >/dev/null
  else
    Rscript -e "p <- $cran; p <- p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)];
      install.packages(p, repos = 'https://cloud.r-project.org')"
  fi
fi

R CMD INSTALL --no-test-load . >/tmp/lsnn-install.log 2>&1 || { cat /tmp/lsnn-install.log; exit 1; }
echo "lsnn setup: installed lsnn $(Rscript -e 'cat(format(packageVersion("lsnn")))')"

case "$what" in
  demo) Rscript tools/demo.R ;;
  test) Rscript tools/run-tests.R ;;
  *) echo "usage: bash tools/setup.sh demo|test" >&2; exit 2 ;;
esac
