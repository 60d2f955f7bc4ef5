# Approximate extended kNN (nn_kind = "approx") on Fashion-MNIST (70,000 x 784)
# and its first 100 principal components, k = 67, 2 threads: recall@67 on
# 1,000 sampled rows against lsnn's exact search, wall time against the exact
# kind and against rnndescent, HNSW and Annoy (as uwot runs it), a scaling
# table on row subsets, and the peak memory of the approximate search.
#   Rscript bench/bench-approx.R            (from the repository root)
#   Rscript bench/bench-approx.R --no-peers (lsnn only)
# Writes bench/results/approx.rds and bench/results/approx.md (a markdown
# summary, also printed).
source("bench/common.R")
args <- commandArgs(trailingOnly = TRUE)
with_peers <- !"--no-peers" %in% args
ensure_packages(c("irlba", if (with_peers) c("rnndescent", "RcppHNSW", "RcppAnnoy", "uwot")))
library(lsnn)
threads <- 2
k <- 67
n_check <- 1000

machine <- paste(trimws(system("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", intern = TRUE)),
                 "|", parallel::detectCores(), "cores | kernels:", simd_kernels())
cat("machine:", machine, "\n")
cat("load before the run:", trimws(system("cat /proc/loadavg", intern = TRUE)), "\n")

X <- fashion_data()
P <- fashion_pca100()

set.seed(2024)
check_rows <- sort(sample.int(nrow(X), n_check))

# recall@k on the sampled rows: the fraction of each row's k - 1 true
# neighbours (itself excluded) among its k - 1 reported ones.
recall_at <- function(idx, truth, rows = check_rows) {
  hits <- vapply(rows, function(i) length(intersect(idx[i, -1], truth[i, -1])), numeric(1))
  mean(hits) / (ncol(truth) - 1)
}

hnsw_index <- NULL
hnsw_build_seconds <- NA
methods <- list(
  lsnn_approx = function(data) {
    set.seed(1)
    extended_knn(data, k - 1, 0, n_threads = threads)$idx
  },
  rnndescent = function(data) {
    set.seed(1)
    rnndescent::rnnd_knn(data, k = k, n_threads = threads)$idx
  },
  # HNSW with its defaults (M = 16, ef_construction = 200, ef = 10), then
  # searched more widely (ef = 256) for a recall comparable with lsnn's: one
  # index, its build time counted in both.
  hnsw = function(data) {
    t_build <- elapsed(hnsw_index <<- RcppHNSW::hnsw_build(data, distance = "l2", M = 16,
                                                         ef = 200, n_threads = threads))
    t_search <- elapsed(idx <- RcppHNSW::hnsw_search(data, hnsw_index, k = k, ef = 10,
                                                    n_threads = threads)$idx)
    hnsw_build_seconds <<- t_build
    list(idx = idx, seconds = t_build + t_search)
  },
  hnsw_ef256 = function(data) {
    t_search <- elapsed(idx <- RcppHNSW::hnsw_search(data, hnsw_index, k = k, ef = 256,
                                                    n_threads = threads)$idx)
    hnsw_index <<- NULL
    list(idx = idx, seconds = hnsw_build_seconds + t_search)
  },
  annoy = function(data) {
    # uwot's own Annoy search: 50 trees, search_k = 2 * k * n_trees.
    set.seed(1)
    uwot:::annoy_nn(data, k = k, metric = "euclidean", n_trees = 50, search_k = 2 * k * 50,
                    n_threads = threads)$idx
  }
)
if (!with_peers) methods <- methods["lsnn_approx"]

run_all <- function(data, label) {
  cat("\n==", label, paste(dim(data), collapse = " x "), "==\n")
  t_exact <- elapsed(g_exact <- extended_knn(data, k - 1, 0, n_threads = threads, nn_kind = "exact"))
  cat(sprintf("  lsnn exact   %7.1f s\n", t_exact))
  rows <- data.frame(method = "lsnn_exact", seconds = t_exact, recall = 1)
  for (m in names(methods)) {
    idx <- NULL
    t <- elapsed(idx <- methods[[m]](data))
    if (is.list(idx)) {  # the method timed itself
      t <- idx$seconds
      idx <- idx$idx
    }
    r <- recall_at(idx, g_exact$idx)
    cat(sprintf("  %-12s %7.1f s  recall@%d %.4f\n", m, t, k, r))
    rows <- rbind(rows, data.frame(method = m, seconds = t, recall = r))
  }
  rows$vs_exact <- rows$seconds / t_exact
  rows$vs_lsnn_approx <- rows$seconds / rows$seconds[rows$method == "lsnn_approx"]
  list(table = rows, exact_idx = g_exact$idx)
}

res <- list(machine = machine, k = k, threads = threads)
res$fashion <- run_all(X, "Fashion-MNIST")
res$pca <- run_all(P, "Fashion-MNIST, first 100 principal components")

# Scaling on the first n rows of Fashion-MNIST (the 70,000 row figures come
# from the runs above).
scaling <- NULL
for (n in c(2500, 5000, 10000, 20000, 40000)) {
  Xs <- X[seq_len(n), ]
  t_e <- elapsed(ge <- extended_knn(Xs, k - 1, 0, n_threads = threads, nn_kind = "exact"))
  set.seed(1)
  t_a <- elapsed(ga <- extended_knn(Xs, k - 1, 0, n_threads = threads))
  rows <- seq_len(min(n, n_check))
  scaling <- rbind(scaling, data.frame(n = n, exact = t_e, approx = t_a,
                                       recall = recall_at(ga$idx, ge$idx, rows)))
  cat(sprintf("  n = %6d: exact %6.1f s, approx %6.1f s\n", n, t_e, t_a))
}
ft <- res$fashion$table
scaling <- rbind(scaling, data.frame(n = nrow(X), exact = ft$seconds[ft$method == "lsnn_exact"],
                                     approx = ft$seconds[ft$method == "lsnn_approx"],
                                     recall = ft$recall[ft$method == "lsnn_approx"]))
scaling$ratio <- scaling$approx / scaling$exact
# Local growth exponents: time ~ n^b between successive sizes.
scaling$exponent_exact <- c(NA, diff(log(scaling$exact)) / diff(log(scaling$n)))
scaling$exponent_approx <- c(NA, diff(log(scaling$approx)) / diff(log(scaling$n)))
res$scaling <- scaling

# Peak memory of the approximate search on the full data, in a fresh process.
cache <- file.path(results_dir(), "fashion.rds")
mem <- peak_memory_mb(
  c(sprintf(".libPaths(%s)", paste(deparse(.libPaths()), collapse = "")), "library(lsnn)",
    sprintf("X <- readRDS('%s')", cache)),
  "set.seed(1); g <- extended_knn(X, 66, 0, n_threads = 2)"
)
data_mb <- as.numeric(object.size(X)) / 2^20
out_mb <- (k * nrow(X) * (4 + 8)) / 2^20
res$memory <- c(mem, data_mb = data_mb, output_mb = out_mb,
                budget = 2 * (data_mb + out_mb) + 300)

res$settings <- approx_control()
saveRDS(res, file.path(results_dir(), "approx.rds"))

# Markdown summary.
table_md <- function(tab) {
  c("| method | seconds | recall@67 | time / lsnn exact | time / lsnn approx |",
    "|---|---:|---:|---:|---:|",
    sprintf("| %s | %.1f | %.4f | %.3f | %.2f |", tab$method, tab$seconds, tab$recall,
            tab$vs_exact, tab$vs_lsnn_approx))
}
md <- c(
  "# Approximate extended kNN: benchmark",
  "",
  sprintf("Machine: %s. %d threads, k = %d (the row itself and 66 neighbours), recall@%d on %d sampled rows against lsnn's exact search. lsnn settings: `approx_control()` defaults.",
          machine, threads, k, k, n_check),
  "Command: `Rscript bench/bench-approx.R` from the repository root.",
  "",
  "## Fashion-MNIST, 70,000 x 784",
  "", table_md(res$fashion$table), "",
  "## Fashion-MNIST, first 100 principal components (70,000 x 100)",
  "", table_md(res$pca$table), "",
  "Peers: `rnndescent::rnnd_knn()` with its defaults, `RcppHNSW::hnsw_knn()` with its defaults (M = 16, ef_construction = 200, ef = 10) and with ef = 256, Annoy as `uwot` runs it (50 trees, search_k = 2 * k * 50).",
  "",
  "## Scaling (first n rows of Fashion-MNIST)",
  "",
  "| n | exact (s) | approx (s) | approx / exact | recall@67 | exponent exact | exponent approx |",
  "|---:|---:|---:|---:|---:|---:|---:|",
  sprintf("| %d | %.2f | %.2f | %.3f | %.4f | %s | %s |", scaling$n, scaling$exact, scaling$approx,
          scaling$ratio, scaling$recall,
          ifelse(is.na(scaling$exponent_exact), "", sprintf("%.2f", scaling$exponent_exact)),
          ifelse(is.na(scaling$exponent_approx), "", sprintf("%.2f", scaling$exponent_approx))),
  "",
  "The exponent is the slope of log(time) against log(n) from the previous size: 2 for an n^2 search, a little above 1 for n log n.",
  "",
  "## Peak memory (approx, full Fashion-MNIST, fresh process)",
  "",
  sprintf("Process peak %.0f MB (R and the data included), %.0f MB added by the search; data %.0f MB, output %.0f MB; budget 2 x (data + output) + 300 = %.0f MB.",
          res$memory["peak"], res$memory["added"], data_mb, out_mb, res$memory["budget"])
)
writeLines(md, file.path(results_dir(), "approx.md"))
cat("\n", md, sep = "\n")
