# The price of one cost_gradient() call against one iteration of
# neighbor_embedding() on the same affinities: the all-pairs P that
# perplexity_affinities() gives for n random rows (n (n - 1) entries; 25
# million at the default n = 5,000), t-SNE, exact gradient, 1 thread.
#
#   Rscript bench/bench-cost-gradient.R [n] [rounds]
#
# Prints the time of a cost_gradient() call (checks of P included), that of
# one iteration (the optimisation time of 21 iterations minus that of 1,
# over 20), each the best of `rounds` (default 5) elapsed times taken in
# turn, so that both see the same state of the machine, and their ratio
# (target: at most 3).
suppressPackageStartupMessages(library(lsnn))
args <- commandArgs(TRUE)
n <- if (length(args) > 0) as.integer(args[1]) else 5000L
rounds <- if (length(args) > 1) as.integer(args[2]) else 5L
set.seed(1)
X <- matrix(rnorm(n * 10), n)
P <- perplexity_affinities(X)
Y <- matrix(rnorm(n * 2), n)

optimize_time <- function(iters) {
  res <- neighbor_embedding(P = P, gradient = "exact", init = "random", max_iter = iters,
                            epoch = 1e6, tol = 0, exaggeration = 1, ret_extra = TRUE, seed = 1)
  res$time[["optimize"]]
}
times <- matrix(NA_real_, rounds, 3, dimnames = list(NULL, c("call", "iter21", "iter1")))
invisible(cost_gradient(Y, P, gradient = "exact"))
for (r in seq_len(rounds)) {
  times[r, "call"] <- system.time(cost_gradient(Y, P, gradient = "exact"))[["elapsed"]]
  times[r, "iter21"] <- optimize_time(21)
  times[r, "iter1"] <- optimize_time(1)
}
call_time <- min(times[, "call"])
iteration <- (min(times[, "iter21"]) - min(times[, "iter1"])) / 20
cat(sprintf("n = %d, nnz(P) = %.3g: cost_gradient() %.1f ms, one iteration %.1f ms, ratio %.2f\n",
            n, length(P@x), 1000 * call_time, 1000 * iteration, call_time / iteration))
