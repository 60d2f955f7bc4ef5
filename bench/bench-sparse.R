# Sparse input against the same data dense: the default search (approximate,
# k = 16) on Fashion-MNIST as a Matrix::dgCMatrix (about half its entries are
# zero) at 10,000 and 70,000 rows, 2 threads, and the break-even densities
# behind extended_knn()'s choice of path, on 5,000 x 784 random data.
#   Rscript bench/bench-sparse.R            (from the repository root)
# Writes bench/results/sparse.rds and prints a markdown summary.
source("bench/common.R")
library(lsnn)
library(Matrix)
threads <- 2
X <- fashion_data()
res <- list()

cat("| rows | dense (s) | dgCMatrix, default (s) | ratio | dgCMatrix, sparse kernels (s) | ratio |\n")
cat("| --- | --- | --- | --- | --- | --- |\n")
for (n in c(10000, nrow(X))) {
  Xn <- X[seq_len(n), ]
  S <- as(Xn, "CsparseMatrix")
  set.seed(1)
  t_dense <- elapsed(extended_knn(Xn, 15, 0, n_threads = threads))
  set.seed(1)
  t_sparse <- elapsed(extended_knn(S, 15, 0, n_threads = threads))
  # the sparse kernels alone, for the record (slow at this density: 10,000 rows only)
  t_kernels <- NA
  if (n <= 10000) {
    op <- options(lsnn.max_dense_bytes = 0)
    set.seed(1)
    t_kernels <- elapsed(extended_knn(S, 15, 0, n_threads = threads))
    options(op)
  }
  res[[paste0("fashion_", n)]] <- c(dense = t_dense, sparse = t_sparse, kernels = t_kernels)
  cat(sprintf("| %d | %s | %s | %s | %s | %s |\n", n, fmt(t_dense), fmt(t_sparse),
              fmt(t_sparse / t_dense), if (is.na(t_kernels)) "-" else fmt(t_kernels),
              if (is.na(t_kernels)) "-" else fmt(t_kernels / t_dense)))
}

cat("\nBreak-even of the sparse kernels (5,000 x 784, uniform values, k = 16):\n\n")
cat("| non-zero | kind | dense (s) | sparse kernels (s) | ratio |\n| --- | --- | --- | --- | --- |\n")
op <- options(lsnn.max_dense_bytes = 0)
set.seed(2)
for (density in c(0.01, 0.02, 0.05, 0.1)) {
  D <- as.matrix(rsparsematrix(5000, 784, density, rand.x = runif))
  S <- as(D, "CsparseMatrix")
  for (kind in c("approx", "exact")) {
    t_dense <- elapsed(extended_knn(D, 15, 0, nn_kind = kind, n_threads = threads))
    t_sparse <- elapsed(extended_knn(S, 15, 0, nn_kind = kind, n_threads = threads))
    res[[sprintf("random_%s_%g", kind, density)]] <- c(dense = t_dense, sparse = t_sparse)
    cat(sprintf("| %g%% | %s | %s | %s | %s |\n", 100 * density, kind, fmt(t_dense),
                fmt(t_sparse), fmt(t_sparse / t_dense)))
  }
}
options(op)
saveRDS(res, file.path(results_dir(), "sparse.rds"))
