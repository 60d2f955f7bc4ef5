# PaCMAP's steps with and without the renumbering of large layouts
# (R/renumber.R: a breadth-first order of the near graph), on generated
# clusters whose rows come in random order (bench/common.R
# generate_clusters(): 30 Gaussian clusters of unequal size and spread in 50
# columns).
#
#   Rscript bench/bench-renumber.R [n ...] [--steps=50] [--full]
#
# (default 2e5). For each n: PaCMAP's own graph (the approximate locally
# scaled search, as neighbor_embedding() makes it), its mid-near pairs and
# PCA start, made once; then, in the user's order and renumbered, the time
# of the order itself and of a layout of 1 step and of `steps` steps, all in
# PaCMAP's first phase (every kind of pair weighted), each the best of 2:
# the time a step is their difference over steps - 1, and the set-up (the
# further pairs drawn and all pairs grouped into tiles) the 1-step time.
# --full also runs the whole 450-step layout both ways and reports its time
# and the 10-NN cluster accuracy of the layout (20,000 sampled rows).
# LSNN_BENCH_THREADS (2). Appends rows to bench/results/renumber.csv.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
full <- "--full" %in% args
args <- setdiff(args, "--full")
steps <- 50L
given <- grep("^--steps=", args, value = TRUE)
if (length(given) > 0) {
  steps <- as.integer(sub("^--steps=", "", given[1]))
  args <- setdiff(args, given)
}
sizes <- if (length(args) > 0) as.numeric(args) else 2e5
threads <- as.integer(Sys.getenv("LSNN_BENCH_THREADS", "2"))

layout_list <- function(max_iter, phases) {
  lsnn:::ne_layout_settings("adam", max_iter, 0L, 1, phases = phases, local = FALSE,
                            constant = FALSE)
}

best_of <- function(times, f) min(vapply(seq_len(times), function(i) elapsed(f()), 0))

rows <- list()
for (n in sizes) {
  X <- generate_clusters(n)
  label <- attr(X, "cluster")
  attr(X, "cluster") <- NULL
  counts <- lsnn:::pacmap_pair_counts(n, lsnn:::pacmap_n_neighbors(n), 0.5, 2)
  scale <- lsnn:::pacmap_scale_columns(n)
  t_graph <- elapsed(graph <- locally_scaled_knn(X, n_neighbors = counts[["near"]] + 1L,
                                                 n_extra = 50, scale_from = scale[["from"]],
                                                 scale_to = scale[["to"]], n_threads = threads))
  data <- lsnn:::prepare_data(X, "euclidean", "X")
  mid <- lsnn:::.pacmap_mid_near(data, "euclidean", counts[["mid_near"]], c(7L, 8L), threads,
                                 lsnn:::simd_option())
  Y0 <- lsnn:::pacmap_init("pca", data, NULL, n, 2L, FALSE)
  rm(data)
  pairs <- list(near = graph$idx, near_from = 1L, near_k = counts[["near"]], mid_near = mid,
                further = NULL, n_further = counts[["further"]])
  cat(sprintf("n = %g: graph %.1f s; pairs a point %d near, %d mid-near, %d further\n", n,
              t_graph, counts[["near"]], counts[["mid_near"]], counts[["further"]]))
  for (on in c(FALSE, TRUE)) {
    t_order <- if (on) elapsed(order <- lsnn:::.neighbour_order(graph$idx, 1L, counts[["near"]])) else 0
    if (!on) order <- NULL
    run <- function(max_iter, phases) {
      lsnn:::.pacmap_layout(Y0, 0L, pairs, layout_list(max_iter, phases), c(1L, 2L), threads,
                            FALSE, FALSE, order)
    }
    t1 <- best_of(2, function() run(1L, c(steps, 100L, 250L)))
    tk <- best_of(2, function() run(steps, c(steps, 100L, 250L)))
    step <- (tk - t1) / (steps - 1)
    row <- data.frame(date = format(Sys.time(), "%Y-%m-%d %H:%M"), n = n, threads = threads,
                      renumbered = on, order_s = t_order, setup_s = t1, step_ms = 1000 * step,
                      ns_per_pair = 1e9 * step / (n * sum(counts)),
                      load = as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1]),
                      full_s = NA_real_, accuracy10 = NA_real_)
    if (full) {
      row$full_s <- elapsed(res <- run(450L, c(100L, 100L, 250L)))
      s <- sample.int(n, min(n, 20000))
      row$accuracy10 <- knn_label_accuracy(res$Y[s, ], res$Y, label[s], label, self = TRUE,
                                           n_threads = threads)
    }
    print(row)
    rows[[length(rows) + 1]] <- row
  }
}
out <- file.path(results_dir(), "renumber.csv")
write.table(do.call(rbind, rows), out, sep = ",", row.names = FALSE,
            col.names = !file.exists(out), append = file.exists(out))
