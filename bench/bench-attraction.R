# How t-SNE's approximate layout reads large affinities: the same P and
# start, 2 and 42 iterations of the early exaggeration (the layout is small,
# so the attraction over P is most of each iteration), with P
#   copy      in a padded copy of its own, in the layout's order (double);
#   renumber  where it is, its columns renumbered in place (what
#             neighbor_embedding() does with a P it returns);
#   consume   rewritten in place into the layout's order, the values in
#             single precision (what it does with a P it does not return).
# The time of 40 iterations is the difference of the two runs' times.
#
#   Rscript bench/bench-attraction.R [n] [rounds]
#
# n (default 1e6) generated rows (bench/common.R generate_clusters(), 5 %
# uniform), their approximate 90-NN graph and perplexity-30 P, built once;
# `rounds` (default 2) runs of each mode, interleaved. Prints seconds per
# 40 iterations.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
rounds <- if (length(args) >= 2) as.integer(args[2]) else 2L
threads <- 2L

X <- generate_clusters(n, uniform = 0.05)
attr(X, "cluster") <- NULL
g <- extended_knn(X, n_neighbors = 90, n_extra = 0, nn_kind = "approx", n_threads = threads,
                  seed = 1)
set.seed(1)
pc <- stats::prcomp(X[sample.int(n, min(n, 1e5)), ], rank. = 2)
Y0 <- scale(X, pc$center, FALSE) %*% pc$rotation
Y0 <- 1e-4 * unname(Y0) / stats::sd(Y0[, 1])
rm(X)
P <- perplexity_affinities(nn_method = g, perplexity = 30, n_threads = threads)
rm(g)
invisible(gc())

layout_time <- function(mode, iters) {
  # a P of its own for each run (a consumed P is not P any more)
  Pm <- P
  Pm@x <- P@x + 0
  Pm@i <- P@i + 0L
  old <- options(lsnn.in_place_bytes = if (mode == "copy") Inf else NULL)
  on.exit(options(old))
  cost <- lsnn:::ne_cost_list(lsnn:::ne_cost_settings("tsne"), "approx")
  layout <- lsnn:::ne_layout_settings("gradient_descent", iters, 1000L, n / 12, tol = 0,
                                      exaggeration = 12, stop_lying_iter = 250L)
  access <- if (mode == "copy") "read" else mode
  invisible(gc())
  elapsed(lsnn:::.optimize_layout(Y0, Pm, cost, layout, threads, FALSE, "auto", access))
}

res <- NULL
for (r in seq_len(rounds)) {
  for (mode in c("copy", "renumber", "consume")) {
    t2 <- layout_time(mode, 2)
    t42 <- layout_time(mode, 42)
    res <- rbind(res, data.frame(round = r, mode = mode, set_up_and_2 = t2,
                                 per_40_iterations = t42 - t2))
  }
}
print(res, row.names = FALSE, digits = 4)
print(stats::aggregate(per_40_iterations ~ mode, res, mean), digits = 4)
