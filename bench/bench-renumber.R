# PaCMAP's steps with and without the renumbering of large layouts
# (R/renumber.R: a breadth-first order of the near graph), on generated
# clusters whose rows come in random order (bench/common.R
# generate_clusters(): 30 Gaussian clusters of unequal size and spread in 50
# columns).
#
#   Rscript bench/bench-renumber.R [n ...] [--steps=41] [--full]
#
# (default 2e5). For each n: PaCMAP's own graph (the approximate locally
# scaled search, as neighbor_embedding() makes it), its mid-near pairs and
# PCA start, made once; then, in the user's order and renumbered (twice
# each, alternating): the time of the order itself, and of `steps` steps in
# PaCMAP's first phase (every kind of pair weighted) and in its last (near
# and further pairs): the time a step is the median over the steps (read
# every 5 steps by a callback, so that the set-up, the further pairs drawn
# and all pairs grouped into tiles, is not in it); the set-up is the whole
# run's time less its steps. --full also runs the whole 450-step layout
# both ways and reports its time and the 10-NN cluster accuracy of the
# layout (20,000 sampled rows). LSNN_BENCH_THREADS (2). Appends rows to
# bench/results/renumber.csv.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
full <- "--full" %in% args
args <- setdiff(args, "--full")
steps <- 41L
given <- grep("^--steps=", args, value = TRUE)
if (length(given) > 0) {
  steps <- as.integer(sub("^--steps=", "", given[1]))
  args <- setdiff(args, given)
}
sizes <- if (length(args) > 0) as.numeric(args) else 2e5
threads <- as.integer(Sys.getenv("LSNN_BENCH_THREADS", "2"))

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
  order <- NULL
  t_order <- elapsed(order <- lsnn:::.neighbour_order(graph$idx, 1L, counts[["near"]]))
  run <- function(o, max_iter, phases) {
    times <- numeric(0)
    watch <- function(iteration, Y) {
      times <<- c(times, proc.time()[["elapsed"]])
      TRUE
    }
    layout <- lsnn:::ne_layout_settings("adam", max_iter, 5L, 1, callback = watch,
                                        callback_every = 5L, phases = phases, local = FALSE,
                                        constant = FALSE)
    total <- elapsed(res <- lsnn:::.pacmap_layout(Y0, 0L, pairs, layout, c(1L, 2L), threads,
                                                  FALSE, FALSE, o))
    step <- median(diff(times)) / 5
    list(Y = res$Y, total = total, step = step, setup = total - max_iter * step)
  }
  for (rep in 1:2) for (on in c(FALSE, TRUE)) {
    o <- if (on) order
    first <- run(o, steps, c(steps, 100L, 250L))
    last <- run(o, steps, c(0L, 0L, steps))
    row <- data.frame(date = format(Sys.time(), "%Y-%m-%d %H:%M"), n = n, threads = threads,
                      renumbered = on, order_s = if (on) t_order else 0, setup_s = first$setup,
                      step_first_ms = 1000 * first$step, step_last_ms = 1000 * last$step,
                      ns_per_pair = 1e9 * first$step / (n * sum(counts)),
                      load = as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1]),
                      full_s = NA_real_, accuracy10 = NA_real_)
    if (full && rep == 1) {
      whole <- run(o, 450L, c(100L, 100L, 250L))
      row$full_s <- whole$total
      set.seed(1)
      s <- sample.int(n, min(n, 20000))
      # (the exact search of all points is quadratic: approximate, as bench-big.R)
      nn <- extended_knn(whole$Y, n_neighbors = 11, n_extra = 0, n_threads = threads,
                         nn_kind = "approx")
      row$accuracy10 <- mean(matrix(label[nn$idx[s, -1]], ncol = 10) == label[s])
    }
    print(row)
    rows[[length(rows) + 1]] <- row
  }
}
out <- file.path(results_dir(), "renumber.csv")
write.table(do.call(rbind, rows), out, sep = ",", row.names = FALSE,
            col.names = !file.exists(out), append = file.exists(out))
