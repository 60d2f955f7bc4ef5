# Principal components of data: exactly through the covariance in the core
# (pca_scores(), inst/include/lsnn/pca.h), or by irlba's truncated SVD
# (pca_irlba()), or exactly in R when the data's smaller side is at most
# twice the components (pca_small()); pca_components() picks one. Every way returns
# list(center, rotation, scores) with scores = sweep(X, 2, center) %*% rotation
# (center NULL and scores = X %*% rotation without centring) and each
# component signed so that its largest score in absolute value is positive.
#
# The `pca` argument of neighbor_embedding(), extended_knn() and
# locally_scaled_knn() is this one reduction (reduce_by_pca()); indexes and
# models keep its list(center, rotation) and project new rows through it
# (pca_new_rows()).

# The most columns pca_components() computes exactly. The exact way costs
# n d^2 multiply-adds for the covariance (in parallel, interruptible) and an
# eigendecomposition of the d x d covariance on one thread that cannot be
# interrupted, which grows steeply once the matrix no longer fits in the
# cache (bench/README.md, "PCA before the search"). Beyond this, irlba's
# Lanczos iterations cost less.
pca_exact_max_cols <- 1024L

# The first k principal components of the rows of X (a dense numeric
# matrix), exactly: list(center, rotation, scores, variance), where variance
# holds the components' variances (divisor n - 1). With center = FALSE the
# rows are not centred (center is then zeros): the truncated SVD of X.
# Identical for any n_threads.
pca_scores <- function(X, k, n_threads = 1L, verbose = FALSE, center = TRUE) {
  if (inherits(X, "sparseMatrix")) {
    stop_arg("'X' must be a dense matrix for the exact PCA (sparse data goes through irlba)")
  }
  data <- prepare_data(X, "euclidean", "X")
  if (data$kind != "dense") stop_arg("'X' must be a dense matrix for the exact PCA")
  k <- check_whole(k, "k", min = 1, max = data$d)
  n_threads <- check_n_threads(n_threads)
  verbose <- check_flag(verbose, "verbose")
  center <- check_flag(center, "center")
  .pca_scores(data$x, k, center, n_threads, verbose, simd_option())
}

# The first k principal components of the prepared data (prepare_data()),
# by irlba's truncated SVD of the implicitly centred data (irlba's `center`:
# sparse data stays sparse) or, with center = FALSE, of the data as they
# are; with the same signs as pca_scores(). The scores are the rows
# projected by pca_project(), as new rows will be (irlba's own u d agrees
# with them only to its tolerance).
pca_irlba <- function(data, k, name = "k", center = TRUE) {
  if (!requireNamespace("irlba", quietly = TRUE)) {
    stop_arg("the PCA of sparse data or of more than ", pca_exact_max_cols, " columns needs ",
             "the irlba package: install it, or reduce the data beforehand")
  }
  X <- pca_matrix(data)
  means <- if (center) Matrix::colMeans(X)
  s <- if (center) irlba::irlba(X, nv = k, nu = k, center = means) else
    irlba::irlba(X, nv = k, nu = k)
  pca_signed(means, s$v, X)
}

# The data of pca_irlba() and pca_small(): a dense matrix or a dgCMatrix.
pca_matrix <- function(data) {
  X <- dense_or_rows(data)
  if (data$kind == "sparse") X <- methods::as(X, "CsparseMatrix")
  X
}

# list(center, rotation, scores) of the axes `V` (d x k, orthonormal), each
# signed as pca_scores() signs them: its largest score in absolute value
# positive.
pca_signed <- function(means, V, X) {
  scores <- unname(pca_project(list(center = means, rotation = V), X))
  flip <- vapply(seq_len(ncol(V)), function(j) {
    if (scores[which.max(abs(scores[, j])), j] < 0) -1 else 1
  }, numeric(1))
  list(center = means, rotation = sweep(V, 2, flip, "*"), scores = sweep(scores, 2, flip, "*"))
}

# Whether the first k components of data that pca_scores() does not take
# (sparse, or dense of more than pca_exact_max_cols columns) are computed
# exactly by pca_small() rather than by irlba: when the data's smaller side
# is at most 2k, where a truncated SVD saves nothing (and irlba warns).
pca_is_small <- function(data, k) k >= 0.5 * min(data$n, data$d)

# The first k principal components exactly, for data whose smaller side s
# is at most 2k: from the eigendecomposition of the s x s matrix of that
# side, the covariance (d <= n) or the Gram matrix of the centred rows (n <
# d), neither of which is large; sparse data stays sparse. With the same
# signs as pca_scores().
pca_small <- function(data, k, center = TRUE) {
  X <- pca_matrix(data)
  n <- data$n
  means <- if (center) Matrix::colMeans(X)
  if (data$d <= n) {
    C <- as.matrix(Matrix::crossprod(X))
    if (center) C <- C - n * tcrossprod(means)
    V <- eigen(C, symmetric = TRUE)$vectors[, seq_len(k), drop = FALSE]
  } else {
    G <- as.matrix(Matrix::tcrossprod(X))
    if (center) {
      m <- as.vector(as.matrix(X %*% means))
      G <- G - outer(m, rep(1, n)) - outer(rep(1, n), m) + sum(means^2)
    }
    U <- eigen(G, symmetric = TRUE)$vectors[, seq_len(k), drop = FALSE]
    V <- as.matrix(Matrix::crossprod(X, U))
    if (center) V <- V - outer(means, colSums(U))
    # (the axes X'U are orthogonal with lengths the singular values; QR makes
    # them unit vectors, and orthonormal also where a variance vanishes)
    V <- qr.Q(qr(V))
  }
  pca_signed(means, V, X)
}

# The first k principal components of the prepared data: exactly in the core
# when it is dense with at most pca_exact_max_cols columns, exactly in R when
# its smaller side is at most 2k (pca_is_small()), else by irlba. `name`: the
# user's argument that set k, for errors. center = FALSE: of the rows as
# they are (center NULL).
pca_components <- function(data, k, n_threads, verbose, name = "k", center = TRUE) {
  scale <- pca_data_scale(data)
  if (scale != 1) {
    res <- pca_components(pca_scaled_data(data, 1 / scale), k, n_threads, verbose, name, center)
    res$scores <- res$scores * scale
    if (!is.null(res$center)) res$center <- res$center * scale
    if (!all_finite(res$scores)) {
      stop_arg("the principal component scores of 'X' overflow (its largest value in absolute ",
               "terms is ", show_value(scale), " or more): rescale 'X'")
    }
    return(res)
  }
  way <- pca_way(data, k)
  if (way == "exact") {
    res <- .pca_scores(data$x, k, center, n_threads, verbose, simd_option())
    if (!center) res["center"] <- list(NULL)
    return(res[c("center", "rotation", "scores")])
  }
  if (k >= min(data$n, data$d)) {
    stop_arg("'", name, "' must be less than ", min(data$n, data$d), ", the smaller dimension ",
             "of the data, for a PCA of sparse data or of more than ", pca_exact_max_cols,
             " columns (it is ", k, ")")
  }
  if (way == "small") pca_small(data, k, center) else pca_irlba(data, k, name, center)
}

# Data whose squares would overflow in the covariance (or lose their digits
# to underflow) is reduced after scaling by a power of two, which is exact:
# the axes are the same, the centre and scores scale back. pca_data_scale()
# is that power of two (about the data's largest absolute value), or 1 when
# the data's scale is safe.
pca_data_scale <- function(data) {
  values <- if (data$kind == "dense") data$x else data$rows@x
  if (length(values) == 0) return(1)
  m <- max(abs(range(values)))
  # (the covariance sums n squares of up to twice m, centred)
  if (m == 0 || (m >= 2^-400 && 4 * m^2 * data$n < .Machine$double.xmax / 16)) return(1)
  2^round(log2(m))
}

pca_scaled_data <- function(data, s) {
  if (data$kind == "dense") data$x <- data$x * s else data$rows <- data$rows * s
  data
}

# Which way pca_components() takes: "exact" (the core), "small" or "irlba".
pca_way <- function(data, k) {
  if (data$kind == "dense" && data$d <= pca_exact_max_cols) return("exact")
  if (pca_is_small(data, k)) "small" else "irlba"
}

# The `pca` argument: NULL (the caller's default), 0 (no reduction) or a
# whole number of components (checked against the data in reduce_by_pca()).
check_pca <- function(pca) {
  if (is.null(pca)) return(NULL)
  check_whole(pca, "pca", min = 0)
}

# The data a search or an embedding works on: the prepared rows (see
# prepare_data()) reduced to their first `pca` principal components by
# pca_components(), centred unless `center` is FALSE, or as they are when
# `pca` is NULL or 0. Returns list(data, pca): the prepared scores (in
# `metric`) and list(center, rotation), which projects new rows
# (pca_new_rows()), or NULL. `caller` starts the verbose message.
reduce_by_pca <- function(data, pca, center, metric, n_threads, verbose, caller) {
  if (is.null(pca) || pca == 0) return(list(data = data, pca = NULL))
  if (!metric %in% pca_metrics) {
    stop_arg("'pca' reduces the data for metric = \"euclidean\" or \"cosine\" (a rotation ",
             "keeps euclidean distances and dot products, not ", metric, " distances); ",
             "leave 'pca' NULL for metric = \"", metric, "\"")
  }
  if (pca >= data$d) {
    stop_arg("'pca' must be less than the number of columns of 'X', ", data$d, " (it is ",
             pca, "); NULL keeps the columns")
  }
  if (verbose) {
    message(caller, ": PCA to ", pca, " dimensions (",
            if (pca_way(data, pca) == "irlba") "irlba" else "exact",
            if (!center) ", not centred", ")")
  }
  res <- pca_components(data, pca, n_threads, verbose, name = "pca", center = center)
  list(data = prepare_data(res$scores, metric, "X"),
       pca = list(center = res$center, rotation = res$rotation))
}

pca_metrics <- c("euclidean", "cosine")

# resolve_inputs()'s points with their data reduced by reduce_by_pca() (the
# centre and rotation in inputs$pca); `pca` NULL takes `default(inputs$data)`
# when a method has a default (PaCMAP's pacmap_default_pca()). (Called on an
# unbound `inputs`, it leaves the unreduced data unreferenced once reduced.)
reduce_inputs <- function(inputs, pca, center, n_threads, verbose, caller, default = NULL,
                          metric = "euclidean") {
  if (is.null(pca) && !is.null(default)) pca <- default(inputs$data)
  if (is.null(pca) || pca == 0) return(inputs)
  if (is.null(inputs$data)) {
    stop_arg("'pca' reduces the rows of 'X': give 'X' as well as 'nn_method', or leave ",
             "'pca' NULL")
  }
  reduced <- reduce_by_pca(inputs$data, pca, center, metric, n_threads, verbose, caller)
  inputs$data <- reduced$data
  inputs$pca <- reduced$pca
  inputs
}

# Rows projected by a kept list(center, rotation): dense rows centred then
# rotated; sparse rows rotated, then the centre's image subtracted, so that
# they are never made dense. A dense matrix of one column per component.
pca_project <- function(pca, X) {
  if (inherits(X, "sparseMatrix")) {
    Z <- as.matrix(X %*% pca$rotation)
    if (!is.null(pca$center)) Z <- sweep(Z, 2, drop(pca$center %*% pca$rotation))
  } else {
    if (!is.null(pca$center)) X <- sweep(X, 2, pca$center)
    Z <- X %*% pca$rotation
  }
  dimnames(Z) <- list(rownames(X), NULL)
  Z
}

# New rows (the argument `name`) read as data of the columns a kept
# projection takes, projected, and prepared in `metric`. `fitted` says what
# had those columns ("the model was fitted on").
pca_new_rows <- function(pca, X, metric, name, fitted) {
  if (is.numeric(X) && is.null(dim(X))) X <- matrix(X, nrow = 1)
  data <- prepare_data(X, "euclidean", name, min_rows = 1)
  d <- nrow(pca$rotation)
  if (data$d != d) stop_arg("'", name, "' has ", data$d, " columns; ", fitted, " ", d)
  prepare_data(pca_project(pca, dense_or_rows(data)), metric, name, min_rows = 1)
}

# A kept projection, as indexes and models hold it, checked whole:
# list(center, rotation), rotation a finite d x k matrix (k at most d) of
# orthonormal columns, center NULL or a finite vector of d values, and k the
# columns of the data it produced (`k`; NULL: not known). `label` names it
# ("model$pca"); `damaged(...)` stops with the problem.
validate_pca <- function(pca, k, label, damaged) {
  el <- function(x) paste0("'", label, x, "'")
  rotation <- if (is.list(pca)) pca$rotation
  center <- if (is.list(pca)) pca$center
  if (!is.list(pca) || !is.matrix(rotation) || !is.numeric(rotation) ||
      nrow(rotation) < ncol(rotation) || ncol(rotation) < 1 ||
      !(is.null(center) || (is.numeric(center) && is.null(dim(center)) &&
                              length(center) == nrow(rotation)))) {
    damaged(el(""), " must be NULL or list(center, rotation): a d x k matrix of principal ",
            "axes (k at most d) and NULL or a vector of the d column means")
  }
  if (!all_finite(rotation)) damaged(el("$rotation"), " contains NA, NaN or infinite values")
  if (!is.null(center) && !all_finite(center)) {
    damaged(el("$center"), " contains NA, NaN or infinite values")
  }
  if (!is.null(k) && ncol(rotation) != k) {
    damaged(el("$rotation"), " has ", ncol(rotation), " columns but the reduced data has ", k)
  }
  # (a rotation whose axes are not orthonormal would silently distort every
  # distance between projected rows)
  if (max(abs(crossprod(rotation) - diag(ncol(rotation)))) > 1e-6) {
    damaged(el("$rotation"), " does not have orthonormal columns")
  }
  invisible(pca)
}
