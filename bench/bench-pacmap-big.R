# PaCMAP on generated clustered data (bench/common.R generate_clusters(): 30
# Gaussian clusters of unequal size and spread in 50 columns, optionally
# with a share of uniform rows), from the data to the layout: the
# approximate LSNN graph, the pairs, the PCA start and 450 Adam iterations.
#
#   Rscript bench/bench-pacmap-big.R [n] [uniform] [method]
#
# n (default 1e6) rows, `uniform` (default 0) the share of uniform rows,
# method "pacmap" (default) or "localmap". Run each size in its own process:
# the peak resident memory printed is the process's (VmHWM), the data
# included. Environment: LSNN_BENCH_THREADS (2). Appends a row to
# bench/results/pacmap-big.csv.
suppressMessages(library(lsnn))
source(file.path("bench", "common.R"))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
uniform <- if (length(args) >= 2) as.numeric(args[2]) else 0
method <- if (length(args) >= 3) args[3] else "pacmap"
threads <- as.integer(Sys.getenv("LSNN_BENCH_THREADS", "2"))

X <- generate_clusters(n, uniform = uniform)
cluster <- attr(X, "cluster")
attr(X, "cluster") <- NULL
mem_data <- process_memory_gb()
set.seed(42)
secs <- elapsed(res <- neighbor_embedding(X, method, n_threads = threads, verbose = TRUE,
                                          ret_extra = TRUE))
mem <- process_memory_gb()
Y <- res$embedding
iters <- res$iterations

# 10-NN cluster accuracy in the layout over 20,000 sampled points (the
# uniform rows have no cluster and are left out of the sample)
set.seed(1)
sample_rows <- sample(which(cluster > 0), min(20000, sum(cluster > 0)))
# (the exact search of all points is quadratic: approximate beyond 2e5)
nn <- extended_knn(Y, n_neighbors = 11, n_extra = 0, n_threads = threads,
                   nn_kind = if (n > 2e5) "approx" else "exact")
acc <- mean(matrix(cluster[nn$idx[sample_rows, -1]], ncol = 10) == cluster[sample_rows])

row <- data.frame(date = format(Sys.time(), "%Y-%m-%d %H:%M"), method = method, n = n,
                  uniform = uniform, threads = threads, seconds = secs,
                  graph_and_pairs = res$time[["affinities"]], init = res$time[["init"]],
                  optimize = res$time[["optimize"]], iterations = iters,
                  ms_per_iteration = 1000 * res$time[["optimize"]] / iters,
                  us_per_iteration_per_point = 1e6 * res$time[["optimize"]] / iters / n,
                  peak_gb = mem[["peak"]], data_gb = mem_data[["current"]],
                  knn10_cluster = acc)
print(row, row.names = FALSE)
file <- file.path(results_dir(), "pacmap-big.csv")
utils::write.table(row, file, sep = ",", row.names = FALSE, append = file.exists(file),
                   col.names = !file.exists(file))
