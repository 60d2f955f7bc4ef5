# The partitioned exact search (nn_kind = "partition") against the exact and
# approximate kinds, 2 threads: generated clusters (bench/common.R's
# generate_clusters(), 50 columns, PaCMAP's 92 columns) and uniform rows at
# 1e5 (and 1e6 with --big), Fashion-MNIST (70,000 x 784, k = 67), its 50
# principal components and one Gaussian of 250,000 x 50. For each set: the
# search the embeddings choose (search_kind(): the forecast share and the
# intrinsic dimension); for each run: wall time, recall against brute force
# on 200 sampled rows, and for the partitioned search its counts
# (partitions, share of the exact search's products, rows proved with
# partitions skipped).
#   Rscript bench/bench-partition.R          1e5 rows and Fashion-MNIST
#   Rscript bench/bench-partition.R --big    also 1e6 rows (the exact kind is
#                                            left out there: hours)
# Writes bench/results/partition.md (also printed).
source("bench/common.R")
args <- commandArgs(trailingOnly = TRUE)
big <- "--big" %in% args
library(lsnn)
threads <- 2L
n_check <- 200

cat("load before the run:", trimws(system("cat /proc/loadavg", intern = TRUE)), "\n")
out <- character(0)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n")
  out <<- c(out, line)
}

# The k - 1 nearest other rows of the rows `rows` of X, by brute force in R.
truth_of <- function(X, rows, k) {
  tX <- t(X)
  t(vapply(rows, function(i) {
    d2 <- colSums((tX - X[i, ])^2)
    d2[i] <- Inf
    order(d2)[seq_len(k - 1)]
  }, integer(k - 1)))
}

recall_of <- function(idx, truth, rows) {
  hits <- vapply(seq_along(rows), function(r) length(intersect(idx[rows[r], -1], truth[r, ])),
                 numeric(1))
  mean(hits) / ncol(truth)
}

run_kind <- function(X, k, kind) {
  data <- lsnn:::prepare_data(X, "euclidean")
  set.seed(1)
  stats <- NULL
  seconds <- elapsed(graph <- switch(kind,
    exact = lsnn:::exact_knn(data, k, "euclidean", threads, FALSE),
    approx = lsnn:::approx_knn(data, k, "euclidean", threads, FALSE, approx_control(),
                               lsnn:::draw_seed()),
    partition = lsnn:::partition_knn(data, k, "euclidean", threads, FALSE, partition_control(),
                                     lsnn:::draw_seed(), stats = TRUE)
  ))
  list(graph = graph, seconds = seconds, stats = attr(graph, "partition_stats"))
}

bench_set <- function(name, X, k, kinds) {
  set.seed(2024)
  rows <- sort(sample.int(nrow(X), n_check))
  truth <- truth_of(X, rows, k)
  # what the embeddings would run (search_kind()), from its forecast share
  # and the intrinsic dimension
  data <- lsnn:::prepare_data(X, "euclidean")
  if (lsnn:::partition_serves(data, "euclidean")) {
    choose <- elapsed(kind <- lsnn:::search_kind(nrow(X), data, k, "euclidean", threads))
    say("| %s | chosen: %s | share %.3f, intrinsic dimension %.1f | %.1f s to choose |", name, kind,
        lsnn:::partition_forecast(data, k, "euclidean", threads),
        lsnn:::intrinsic_dimension(data, "euclidean", threads), choose)
  }
  rm(data)
  for (kind in kinds) {
    r <- run_kind(X, k, kind)
    s <- r$stats
    extra <- if (is.null(s)) "" else
      sprintf(" | %d partitions (largest %d) | %.1f%% of the exact products | %d rows proved with partitions skipped",
              as.integer(s$partitions), as.integer(s$largest), 100 * s$products,
              as.integer(s$rows_pruned))
    say("| %s | %s | %d x %d, k = %d | %.1f s | recall %.4f%s |", name, kind, nrow(X), ncol(X), k,
        r$seconds, recall_of(r$graph$idx, truth, rows), extra)
    rm(r)
    gc(verbose = FALSE)
  }
}

uniform <- function(n, d = 50) {
  set.seed(7)
  matrix(runif(n * d), n)
}

bench_set("clusters", generate_clusters(1e5), 92L, c("exact", "approx", "partition"))
bench_set("uniform", uniform(1e5), 92L, c("exact", "approx", "partition"))
bench_set("Fashion-MNIST", fashion_data(), 67L, c("exact", "approx", "partition"))
bench_set("Fashion-MNIST, 50 principal components", fashion_pca100()[, 1:50], 92L,
          c("exact", "approx", "partition"))
one_gaussian <- function(n, d = 50) {
  set.seed(8)
  matrix(rnorm(n * d), n)
}
bench_set("one Gaussian", one_gaussian(2.5e5), 92L, c("approx", "partition"))
if (big) {
  bench_set("clusters", generate_clusters(1e6), 92L, c("approx", "partition"))
  bench_set("uniform", uniform(1e6), 92L, c("approx", "partition"))
}
writeLines(out, file.path(results_dir(), "partition.md"))
