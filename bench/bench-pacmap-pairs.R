# The time of PaCMAP's layout per pair evaluation (each pair counted from
# both of its points, as in the cost's definition), on random pairs: 23
# near, 12 mid-near and 46 further pairs per point (PaCMAP's counts at
# 70,000 points).
#
#   Rscript bench/bench-pacmap-pairs.R [n ...] [--counts=near,mid,further] [--full]
#
# (--counts=40,20,80: PaCMAP's counts at 1e6 points.)
# (default 5000 70000). For each n: the user time of 1 thread and the
# elapsed time of 2 threads per pair evaluation, from a run of many steps
# minus a run of 1 step (setting up the pairs), each the best of 3, all in
# PaCMAP's first phase (every kind of pair weighted). --full also times a whole
# 450-step PaCMAP and LocalMAP layout of the largest n on 2 threads.
suppressPackageStartupMessages(library(lsnn))
args <- commandArgs(TRUE)
full <- "--full" %in% args
args <- setdiff(args, "--full")
counts <- c(near = 23L, mid_near = 12L, further = 46L)
given <- grep("^--counts=", args, value = TRUE)
if (length(given) > 0) {
  counts[] <- as.integer(strsplit(sub("^--counts=", "", given[1]), ",")[[1]])
  args <- setdiff(args, given)
}
sizes <- if (length(args) > 0) as.integer(as.numeric(args)) else c(5000L, 70000L)

random_pairs <- function(n) {
  lapply(counts, function(k) {
    m <- matrix(sample.int(n - 1L, n * k, TRUE), n)
    m + (m >= seq_len(n))
  })
}

layout_settings <- function(steps, phases = c(steps, 100L, 250L), local = FALSE) {
  lsnn:::ne_layout_settings("adam", steps, 0L, 1, phases = phases, local = local,
                            constant = FALSE)
}

run_time <- function(Y, pairs, layout, threads, what) {
  t <- system.time(lsnn:::.pacmap_layout(Y, 0L, pairs, layout, c(1L, 2L), threads, FALSE, FALSE))
  t[[what]]
}

cat(sprintf("%d near, %d mid-near, %d further pairs per point\n", counts[1], counts[2],
            counts[3]))
for (n in sizes) {
  set.seed(1)
  pairs <- random_pairs(n)
  Y <- matrix(rnorm(2 * n, sd = 10), n)
  evaluations <- 2 * n * sum(counts)
  # steps enough for about half a second at 2 ns per evaluation
  steps <- max(20L, as.integer(round(0.5 / (2e-9 * evaluations))))
  per_eval <- function(threads, what) {
    t1 <- tk <- Inf
    for (r in 1:3) {
      t1 <- min(t1, run_time(Y, pairs, layout_settings(1L), threads, what))
      tk <- min(tk, run_time(Y, pairs, layout_settings(steps), threads, what))
    }
    1e9 * (tk - t1) / (steps - 1) / evaluations
  }
  one <- per_eval(1L, "user.self")
  two <- per_eval(2L, "elapsed")
  cat(sprintf(paste("%6d points, %d steps: %.2f ns per pair evaluation (1 thread, user time),",
                    "%.2f ns (2 threads, elapsed); %.1f ms per step on 2 threads\n"),
              n, steps, one, two, 1e-6 * two * evaluations))
}

if (full) {
  n <- max(sizes)
  set.seed(1)
  pairs <- random_pairs(n)
  Y <- matrix(rnorm(2 * n, sd = 1e-4), n)
  for (local in c(FALSE, TRUE)) {
    t <- run_time(Y, pairs, layout_settings(450L, c(100L, 100L, 250L), local), 2L, "elapsed")
    cat(sprintf("%s layout of %d points, 450 steps, 2 threads: %.1f s\n",
                if (local) "LocalMAP" else "PaCMAP", n, t))
  }
}
