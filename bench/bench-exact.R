# Exact extended kNN and local scaling on Fashion-MNIST (70,000 x 784) and its
# first 100 principal components, 2 threads, against rnndescent's brute force
# and against the floor set by the machine's float matrix-product rate.
#   Rscript bench/bench-exact.R            (from the repository root)
# Writes bench/results/exact.rds and prints a markdown summary.
source("bench/common.R")
ensure_packages(c("rnndescent", "irlba"))
library(lsnn)
threads <- 2
k <- 67

cat("machine:", system("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", intern = TRUE),
    "|", parallel::detectCores(), "cores | kernels:", simd_kernels(), "\n")

rate <- lsnn:::.float_gemm_rate(1024L, 784L, 20L, threads, "auto")
cat(sprintf("float matrix-product rate (Eigen via lsnn's kernel, %d threads): %.1f G multiply-adds/s\n",
            threads, rate / 1e9))

X <- fashion_data()
P <- fashion_pca100()
res <- list(rate = rate)

floor_s <- function(n, d) n^2 * d / rate

# lsnn exact on the full data sets
t_full <- elapsed(g_full <- extended_knn(X, k - 1, 0, n_threads = threads, nn_kind = "exact"))
t_pca <- elapsed(g_pca <- extended_knn(P, k - 1, 0, n_threads = threads, nn_kind = "exact"))
res$full <- c(seconds = t_full, floor = floor_s(nrow(X), ncol(X)))
res$pca <- c(seconds = t_pca, floor = floor_s(nrow(P), ncol(P)))
cat(sprintf("lsnn exact 67-NN, 70,000 x 784: %.1f s; floor %.1f s; ratio to floor %.2f\n",
            t_full, res$full["floor"], t_full / res$full["floor"]))
cat(sprintf("lsnn exact 67-NN, 70,000 x 100 (PCA): %.1f s; floor %.1f s; ratio to floor %.2f\n",
            t_pca, res$pca["floor"], t_pca / res$pca["floor"]))

# rnndescent's brute force is O(n^2) like lsnn's: compared on row subsets
# (the full set would take hours), with the ratio at each size.
peer <- NULL
for (n in c(5000, 10000, 20000)) {
  Xs <- X[seq_len(n), ]
  t_l <- elapsed(gl <- extended_knn(Xs, k - 1, 0, n_threads = threads, nn_kind = "exact"))
  t_r <- elapsed(gr <- rnndescent::brute_force_knn(Xs, k = k, n_threads = threads))
  same <- mean(gl$idx == gr$idx)
  peer <- rbind(peer, data.frame(n = n, lsnn = t_l, rnndescent = t_r, speedup = t_r / t_l,
                                 same_idx = same))
}
res$peer <- peer
print(peer)

# Local scaling of the full 70,000 x 67 graph: C++ against plain R (the
# reference implementation of the tests, which follows the seed article).
source("tests/testthat/helper-reference.R")
t_cpp <- elapsed(ls_cpp <- enn_to_lsnn(g_full, 15))
t_r <- elapsed(ls_r <- ref_lsnn(g_full, 15))
stopifnot(identical(ls_cpp, ls_r))
res$enn_to_lsnn <- c(cpp = t_cpp, r = t_r)
cat(sprintf("enn_to_lsnn on 70,000 x 67: %.3f s (C++) vs %.1f s (plain R): %.0fx\n",
            t_cpp, t_r, t_r / t_cpp))

# Peak memory of the full exact search, in a fresh process.
mem <- peak_memory_mb(
  c("library(lsnn)", "X <- readRDS('bench/results/fashion.rds')"),
  "g <- extended_knn(X, 66, 0, n_threads = 2, nn_kind = 'exact')"
)
data_mb <- object.size(X) / 2^20
out_mb <- (object.size(g_full$idx) + object.size(g_full$dist)) / 2^20
res$memory <- c(mem, data_mb = as.numeric(data_mb), output_mb = as.numeric(out_mb))
cat(sprintf("peak memory added by the search: %.0f MB (budget 3 x output + 300 = %.0f MB; data %.0f MB)\n",
            mem["added"], 3 * out_mb + 300, data_mb))

saveRDS(res, file.path(results_dir(), "exact.rds"))
