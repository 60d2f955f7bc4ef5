# FIt-SNE (Linderman et al. 2019) as a peer for the benchmarks only: built
# from its own source against Debian's FFTW and driven through the R wrapper
# it ships, so its file format is never re-implemented here. Source after
# bench/common.R (results_dir(), elapsed()).
#
#   FITSNE_SRC=/path/to/FIt-SNE Rscript -e '
#     source("bench/common.R"); source("bench/fitsne.R")
#     r <- fitsne_run(X, max_iter = 1000); r$seconds'

# A checkout of FIt-SNE, named by FITSNE_SRC; nothing is downloaded here.
fitsne_source <- function() {
  src <- Sys.getenv("FITSNE_SRC")
  if (!nzchar(src) || !file.exists(file.path(src, "src", "tsne.cpp"))) {
    stop("FIt-SNE's source not found (FITSNE_SRC = '", src, "'): set FITSNE_SRC to ",
         "a checkout of https://github.com/KlugerLab/FIt-SNE, e.g.\n",
         "  git clone https://github.com/KlugerLab/FIt-SNE && export FITSNE_SRC=$PWD/FIt-SNE",
         call. = FALSE)
  }
  normalizePath(src)
}

# The fast_tsne binary, compiled once with the command of FIt-SNE's README
# and reused afterwards (delete it to rebuild after updating the source).
# The path is absolute: fitsne_run() calls it from another directory.
fitsne_build <- function(src = fitsne_source(), dest = file.path(results_dir(), "fitsne")) {
  bin <- file.path(dest, "fast_tsne")
  if (file.exists(bin)) return(normalizePath(bin))
  # FFTW's headers and library: Debian's package when we may install it;
  # the package lists are refreshed only if the first attempt fails
  if (!file.exists("/usr/include/fftw3.h") && file.exists("/etc/debian_version") &&
      Sys.info()[["user"]] == "root") {
    apt <- function(...) system2("apt-get", c(...), stdout = FALSE, stderr = FALSE)
    if (apt("install", "-y", "-qq", "libfftw3-dev") != 0) {
      apt("update", "-qq")
      apt("install", "-y", "-qq", "libfftw3-dev")
    }
  }
  dir.create(dest, showWarnings = FALSE, recursive = TRUE)
  cpp <- file.path(src, "src", c("sptree.cpp", "tsne.cpp", "nbodyfft.cpp"))
  status <- system2("g++", c("-std=c++11", "-O3", shQuote(cpp), "-o", shQuote(bin),
                             "-pthread", "-lfftw3", "-lm", "-Wno-address-of-packed-member"))
  if (status != 0 || !file.exists(bin)) {
    stop("building FIt-SNE failed (is FFTW installed? Debian: apt-get install libfftw3-dev)",
         call. = FALSE)
  }
  normalizePath(bin)
}

# FIt-SNE's own fftRtsne(). The wrapper sits at the top of the checkout
# (older or newer layouts: rwrapper/). It sets FAST_TSNE_SCRIPT_DIR with <<-
# when sourced; a binding in the parent environment catches that so the
# global environment is left alone.
fitsne_wrapper <- function(src = fitsne_source()) {
  file <- file.path(src, c("fast_tsne.R", file.path("rwrapper", "fast_tsne.R")))
  file <- file[file.exists(file)][1]
  if (is.na(file)) stop("no fast_tsne.R in ", src, call. = FALSE)
  outer <- new.env(parent = globalenv())
  assign("FAST_TSNE_SCRIPT_DIR", NA_character_, envir = outer)
  env <- new.env(parent = outer)
  suppressMessages(sys.source(file, envir = env, chdir = TRUE))
  env$fftRtsne
}

# t-SNE of X by FIt-SNE: X's first pca_dims principal components (as the
# other peers get), then fftRtsne() with its own defaults apart from the
# arguments named here (more through ...). The binary writes files to its
# working directory in some modes, so it runs in a scratch directory, which
# also holds the wrapper's data and result files. Times in seconds: pca,
# tsne (the whole wrapper call: writing the data, its PCA initialisation,
# neighbours, affinities, optimisation, reading back) and their total.
fitsne_run <- function(X, perplexity = 30, max_iter = 1000, threads = 2, pca_dims = 50, ...) {
  bin <- fitsne_build()
  fftRtsne <- fitsne_wrapper()
  X <- as.matrix(X)
  t_pca <- elapsed(X50 <- if (requireNamespace("irlba", quietly = TRUE)) {
    irlba::prcomp_irlba(X, n = pca_dims, center = TRUE, scale. = FALSE)$x
  } else {
    stats::prcomp(X, rank. = pca_dims)$x
  })
  wd <- tempfile("fitsne-")
  dir.create(wd)
  old <- setwd(wd)
  on.exit({ setwd(old); unlink(wd, recursive = TRUE) }, add = TRUE)
  t_tsne <- elapsed(Y <- fftRtsne(X50, perplexity = perplexity, max_iter = max_iter,
                                  nthreads = threads, fast_tsne_path = bin,
                                  data_path = file.path(wd, "data.dat"),
                                  result_path = file.path(wd, "result.dat"), ...))
  list(Y = Y, seconds = c(pca = t_pca, tsne = t_tsne, total = t_pca + t_tsne))
}
