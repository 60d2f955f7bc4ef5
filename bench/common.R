# Shared set-up for the benchmark scripts: peers installed on demand, the
# Fashion-MNIST data (raw and its first 100 principal components, cached in
# bench/results/), timing and peak-memory helpers.

ensure_packages <- function(pkgs) {
  missing <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
  if (length(missing) == 0) return(invisible())
  debs <- paste0("r-cran-", tolower(missing))
  if (file.exists("/etc/debian_version") && Sys.info()[["user"]] == "root") {
    system2("apt-get", c("install", "-y", "-qq", debs), stdout = FALSE)
  }
  still <- missing[!vapply(missing, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still) > 0) install.packages(still, repos = "https://cloud.r-project.org")
}

results_dir <- function() {
  dir <- file.path("bench", "results")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  dir
}

fashion_data <- function() {
  cache <- file.path(results_dir(), "fashion.rds")
  if (file.exists(cache)) return(readRDS(cache))
  fm <- lsnn::fashion_mnist()
  saveRDS(fm$X, cache, compress = FALSE)
  fm$X
}

fashion_pca100 <- function() {
  cache <- file.path(results_dir(), "fashion-pca100.rds")
  if (file.exists(cache)) return(readRDS(cache))
  ensure_packages("irlba")
  set.seed(1)
  X <- fashion_data()
  pca <- irlba::prcomp_irlba(X, n = 100, center = TRUE, scale. = FALSE)
  saveRDS(pca$x, cache, compress = FALSE)
  pca$x
}

elapsed <- function(expr) {
  gc(verbose = FALSE)
  t <- system.time(force(expr))[["elapsed"]]
  t
}

# Peak resident memory (MB) that `code` adds in a fresh R process after its
# `setup` has run: the kernel's high-water mark is reset between the two.
peak_memory_mb <- function(setup, code) {
  script <- tempfile(fileext = ".R")
  writeLines(c(
    setup,
    "invisible(gc(full = TRUE))",
    "rss <- function(field) as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', grep(field, readLines('/proc/self/status'), value = TRUE))) / 1024",
    "writeLines('5', '/proc/self/clear_refs')",
    "base <- rss('^VmRSS')",
    code,
    "cat(base, rss('^VmHWM'), '\\n')"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE)
  v <- as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
  c(before = v[1], peak = v[2], added = v[2] - v[1])
}

fmt <- function(x, digits = 2) formatC(x, digits = digits, format = "f")
