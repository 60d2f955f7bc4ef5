# Principal components of data: exactly through the covariance in the core
# (pca_scores(), inst/include/lsnn/pca.h), or by irlba's truncated SVD
# (pca_irlba()); pca_components() picks one. Every way returns
# list(center, rotation, scores) with scores = sweep(X, 2, center) %*% rotation
# and each component signed so that its largest score in absolute value is
# positive.

# The most columns pca_components() computes exactly. The exact way costs
# n d^2 multiply-adds for the covariance (in parallel, interruptible) and an
# eigendecomposition of the d x d covariance on one thread that cannot be
# interrupted: about 1 s at d = 784, 2.4 s at 1024 but 30 s at 2048, where
# the matrix no longer fits in the cache. Beyond this, irlba's Lanczos
# iterations cost less.
pca_exact_max_cols <- 1024L

# The first k principal components of the rows of X (a dense numeric
# matrix), exactly: list(center, rotation, scores, variance), where variance
# holds the components' variances (divisor n - 1). Identical for any
# n_threads.
pca_scores <- function(X, k, n_threads = 1L, verbose = FALSE) {
  if (inherits(X, "sparseMatrix")) {
    stop_arg("'X' must be a dense matrix for the exact PCA (sparse data goes through irlba)")
  }
  data <- prepare_data(X, "euclidean", "X")
  if (data$kind != "dense") stop_arg("'X' must be a dense matrix for the exact PCA")
  k <- check_whole(k, "k", min = 1, max = data$d)
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  .pca_scores(data$x, k, TRUE, n_threads, verbose, simd_option())
}

# The first k principal components of the prepared data (prepare_data()),
# by irlba's truncated SVD of the implicitly centred data (sparse data stays
# sparse), with the same signs as pca_scores().
pca_irlba <- function(data, k, name = "k") {
  if (!requireNamespace("irlba", quietly = TRUE)) {
    stop_arg("the PCA of sparse data or of more than ", pca_exact_max_cols, " columns needs ",
             "the irlba package: install it, or reduce the data beforehand")
  }
  if (k >= min(data$n, data$d)) {
    stop_arg("'", name, "' must be less than ", min(data$n, data$d), ", the smaller dimension ",
             "of the data, for a PCA of sparse data or of more than ", pca_exact_max_cols,
             " columns (it is ", k, ")")
  }
  X <- dense_or_rows(data)
  if (data$kind == "sparse") X <- methods::as(X, "CsparseMatrix")
  center <- Matrix::colMeans(X)
  s <- irlba::irlba(X, nv = k, nu = k, center = center)
  scores <- s$u %*% diag(s$d, k)
  flip <- vapply(seq_len(k), function(j) {
    if (scores[which.max(abs(scores[, j])), j] < 0) -1 else 1
  }, numeric(1))
  list(center = center, rotation = sweep(s$v, 2, flip, "*"),
       scores = sweep(scores, 2, flip, "*"))
}

# The first k principal components of the prepared data: exactly when it is
# dense with at most pca_exact_max_cols columns, else by irlba. `name`: the
# user's argument that set k, for errors.
pca_components <- function(data, k, n_threads, verbose, name = "k") {
  if (data$kind == "dense" && data$d <= pca_exact_max_cols) {
    res <- .pca_scores(data$x, k, TRUE, n_threads, verbose, simd_option())
    return(res[c("center", "rotation", "scores")])
  }
  pca_irlba(data, k, name)
}
