# What lsnn's scripts need installed, and the one way they install it:
# Debian's prebuilt packages where the machine is Debian and we are root,
# CRAN otherwise. Sourced by tools/setup.sh and tools/site.sh.

# Debian packages of lsnn's imports and suggests, pandoc for the vignettes and
# Debian's Fashion-MNIST (optional data the LSNN vignette and the demo use)
lsnn_debs="r-cran-rcpp r-cran-rcppeigen r-cran-rcppparallel r-cran-matrix r-cran-uwot
           r-cran-rspectra r-cran-irlba r-cran-knitr r-cran-rmarkdown r-cran-png r-cran-cli
           r-cran-future r-cran-future.apply pandoc dataset-fashion-mnist"
# the same R packages by their CRAN names (elements of an R character vector)
lsnn_cran='"Rcpp", "RcppEigen", "RcppParallel", "Matrix", "uwot", "RSpectra", "irlba",
           "knitr", "rmarkdown", "png", "cli", "future", "future.apply"'

on_debian_as_root() {
  [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null
}

# The R packages among `cran` (elements of an R character vector) that do not load.
missing_r_packages() {
  Rscript -e "p <- c($1); cat(p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)])"
}

# install_missing LABEL DEBS CRAN [NEED]: when an R package of CRAN is missing
# or NEED is "yes" (something outside R is missing), installs DEBS from
# Debian where it can; else installs the missing R packages from CRAN.
install_missing() {
  local label="$1" debs="$2" cran="$3" need="${4:-no}" missing
  missing=$(missing_r_packages "$cran")
  if on_debian_as_root && { [ -n "${missing// /}" ] || [ "$need" = yes ]; }; then
    echo "$label: installing from Debian: $debs" | tr -s ' \n' ' '; echo
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $debs >/dev/null
  elif [ -n "${missing// /}" ]; then
    echo "$label: installing from CRAN: $missing"
    Rscript -e "p <- c($cran); p <- p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)];
      install.packages(p, repos = 'https://cloud.r-project.org')"
  fi
}
