# metric = "hamming" on binarised Fashion-MNIST (70,000 x 784, pixel > 127,
# a logical matrix), k = 15, 2 threads: lsnn's exact search against
# rnndescent's brute force (which packs logical data into bitsets too), and
# both approximate searches (recall@15 against lsnn's exact graph).
#   Rscript bench/bench-hamming.R            (from the repository root)
#   Rscript bench/bench-hamming.R --full     (also rnndescent's brute force on all 70,000 rows)
# rnndescent's brute force is timed on row subsets (it grows as n^2, as
# lsnn's does) and extrapolated to 70,000 rows, unless --full.
# Times are elapsed seconds, with the process's CPU seconds (all threads) in
# brackets: on a shared machine the CPU time is the steadier comparison.
# Writes bench/results/hamming.rds and prints a markdown summary.
source("bench/common.R")
args <- commandArgs(trailingOnly = TRUE)
full_peer <- "--full" %in% args
ensure_packages("rnndescent")
library(lsnn)
threads <- 2
k <- 15
n_check <- 2000

machine <- paste(trimws(system("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", intern = TRUE)),
                 "|", parallel::detectCores(), "cores | kernels:", simd_kernels(),
                 "| rnndescent", as.character(utils::packageVersion("rnndescent")))
cat("machine:", machine, "\n")
cat("load before the run:", trimws(system("cat /proc/loadavg", intern = TRUE)), "\n")

# elapsed and CPU seconds of expr (evaluated in the caller's frame)
timed <- function(expr) {
  gc(verbose = FALSE)
  st <- system.time(force(expr))
  c(elapsed = st[["elapsed"]], cpu = st[["user.self"]] + st[["sys.self"]])
}
both <- function(t) sprintf("%.2f (%.2f)", t[["elapsed"]], t[["cpu"]])

X <- fashion_data() > 127
cat(sprintf("data: %d x %d logical, %.1f%% TRUE\n", nrow(X), ncol(X), 100 * mean(X)))
res <- list(machine = machine, n = nrow(X), d = ncol(X), k = k, threads = threads)

# ---- exact ----
t_exact <- timed(g_exact <- extended_knn(X, k - 1, 0, n_threads = threads, nn_kind = "exact",
                                         metric = "hamming"))
res$lsnn_exact <- t_exact
cat(sprintf("lsnn exact %d-NN, 70,000 x 784 hamming: %s s\n", k, both(t_exact)))

# Agreement on a subset: identical distances (both exact), and the share of
# identical indices (tie order may differ: lsnn breaks ties by row number).
peer <- NULL
sizes <- if (full_peer) c(10000, 20000, nrow(X)) else c(10000, 20000)
for (n in sizes) {
  Xs <- X[seq_len(n), ]
  t_l <- timed(gl <- extended_knn(Xs, k - 1, 0, n_threads = threads, nn_kind = "exact",
                                  metric = "hamming"))
  t_r <- timed(gr <- rnndescent::brute_force_knn(Xs, k = k, metric = "hamming",
                                                 n_threads = threads))
  peer <- rbind(peer, data.frame(
    n = n, lsnn = t_l[["elapsed"]], lsnn_cpu = t_l[["cpu"]], rnndescent = t_r[["elapsed"]],
    rnndescent_cpu = t_r[["cpu"]], speedup = t_r[["elapsed"]] / t_l[["elapsed"]],
    speedup_cpu = t_r[["cpu"]] / t_l[["cpu"]],
    same_dist = isTRUE(all.equal(gl$dist, gr$dist, tolerance = 1e-6)),
    same_idx = mean(gl$idx == gr$idx),
    idx_differs_only_in_ties = all(gl$idx == gr$idx | abs(gl$dist - gr$dist) < 1e-6)))
}
res$peer <- peer
print(peer)
last <- peer[nrow(peer), ]
grow <- if (last$n == nrow(X)) 1 else (nrow(X) / last$n)^2
t_r70 <- c(elapsed = last$rnndescent * grow, cpu = last$rnndescent_cpu * grow)
res$rnndescent_70k <- t_r70
res$rnndescent_70k_measured <- last$n == nrow(X)
cat(sprintf("rnndescent brute force at 70,000 rows (%s): %s s, %.1fx (CPU %.1fx) lsnn's %s s\n",
            if (last$n == nrow(X)) "measured" else sprintf("extrapolated as n^2 from %d rows", last$n),
            both(t_r70), t_r70[["elapsed"]] / t_exact[["elapsed"]], t_r70[["cpu"]] / t_exact[["cpu"]],
            both(t_exact)))

# ---- approximate ----
set.seed(2024)
check_rows <- sort(sample.int(nrow(X), n_check))
# recall@k on the sampled rows: the share of the true k - 1 neighbours (self
# excluded) found, and, since distances tie, the share of found neighbours
# no farther than the row's true (k - 1)-th distance.
recall_of <- function(g) {
  hits <- vapply(check_rows, function(i) length(intersect(g$idx[i, -1], g_exact$idx[i, -1])), 0)
  within <- mean(g$dist[check_rows, -1] <= g_exact$dist[check_rows, k])
  c(recall = mean(hits) / (k - 1), recall_by_distance = within)
}
set.seed(1)
t_approx <- timed(g_approx <- extended_knn(X, k - 1, 0, n_threads = threads, metric = "hamming"))
set.seed(1)
t_rnnd <- timed(g_rnnd <- rnndescent::rnnd_knn(X, k = k, metric = "hamming", n_threads = threads))
row_of <- function(method, t, recall) {
  data.frame(method = method, seconds = t[["elapsed"]], cpu_seconds = t[["cpu"]], t(recall))
}
approx <- rbind(
  row_of("lsnn approx", t_approx, recall_of(g_approx)),
  row_of("rnndescent rnnd_knn", t_rnnd, recall_of(g_rnnd)),
  row_of("lsnn exact", t_exact, c(recall = 1, recall_by_distance = 1)))
res$approx <- approx
print(approx)

saveRDS(res, file.path(results_dir(), "hamming.rds"))

cat("\n## metric = \"hamming\", binarised Fashion-MNIST (70,000 x 784), k = 15, 2 threads\n\n")
cat("Machine:", machine, "\n\n")
cat("Seconds elapsed (CPU seconds, both threads, in brackets).\n\n")
cat("| rows | lsnn exact | rnndescent brute_force_knn | ratio (CPU) | same distances | same indices |\n")
cat("| --- | --- | --- | --- | --- | --- |\n")
for (r in seq_len(nrow(peer))) {
  with(peer[r, ], cat(sprintf("| %s | %.2f (%.2f) | %.2f (%.2f) | %.1fx (%.1fx) | %s | %.4f |\n",
                              format(n, big.mark = ","), lsnn, lsnn_cpu, rnndescent, rnndescent_cpu,
                              speedup, speedup_cpu, same_dist, same_idx)))
}
if (!res$rnndescent_70k_measured) {
  cat(sprintf("| 70,000 | %s | %s (n^2 extrapolation) | %.1fx (%.1fx) | | |\n", both(t_exact),
              both(t_r70), t_r70[["elapsed"]] / t_exact[["elapsed"]], t_r70[["cpu"]] / t_exact[["cpu"]]))
}
cat("\n| search | seconds (CPU) | recall@15 | share within the true 15th distance |\n")
cat("| --- | --- | --- | --- |\n")
for (r in seq_len(nrow(approx))) {
  with(approx[r, ], cat(sprintf("| %s | %.2f (%.2f) | %.4f | %.4f |\n", method, seconds,
                                cpu_seconds, recall, recall_by_distance)))
}
