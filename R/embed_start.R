# The start of a layout: the user's coordinates, or spectral, PCA or random
# ones, scaled and spread.

# Initial coordinates, scaled to sd init_sdev (the first column's; the
# others keep their relative scale).
ne_init <- function(init, data, P, n, k, init_sdev, verbose) {
  if (is.matrix(init) || is.data.frame(init)) {
    Y <- as.matrix(init)
    if (!is.numeric(Y) || nrow(Y) != n || ncol(Y) != k) {
      stop_arg("'init' must be a numeric ", n, " x ", k, " matrix (n x n_components) ",
               "or one of \"spectral\", \"pca\", \"random\"")
    }
    if (!all_finite(Y)) stop_arg("'init' must be finite (no NA, NaN or Inf)")
    # beyond this the squared distances between points overflow
    if (max(abs(Y)) > 1e100) stop_arg("'init' has coordinates too large (above 1e100)")
    storage.mode(Y) <- "double"
    return(spread_collapsed(unname(Y), "'init'"))
  }
  if (!is.character(init) || length(init) != 1 ||
      !init %in% c("spectral", "pca", "random")) {
    stop_arg("'init' must be \"spectral\", \"pca\", \"random\" or a matrix")
  }
  if (init == "pca" && is.null(data)) {
    stop_arg("'init' = \"pca\" needs the data as 'X', not only a graph, distances or affinities")
  }
  ne_msg(verbose, "neighbor_embedding: ", init, " initialisation")
  Y <- switch(init,
    random = matrix(stats::rnorm(n * k), n, k),
    pca = ne_pca(dense_data(data), k),
    spectral = ne_spectral(P, k)
  )
  if (is.null(Y)) {
    fallback <- if (is.null(data)) "random" else "pca"
    warning(sprintf("spectral initialisation failed; using \"%s\"", fallback), call. = FALSE)
    Y <- if (is.null(data)) matrix(stats::rnorm(n * k), n, k) else ne_pca(dense_data(data), k)
  }
  Y <- sweep(Y, 2, colMeans(Y))
  s <- stats::sd(Y[, 1])
  if (!is.finite(s) || s <= 0) s <- 1
  Y <- Y * (init_sdev / s)
  if (!all_finite(Y) || max(abs(Y)) > 1e100) {
    stop_arg("'init_sdev' (", init_sdev, ") is too large: the initial coordinates would ",
             "exceed 1e100")
  }
  spread_collapsed(Y, paste0("the ", init, " start"))
}

# A start with more than half of its points on one spot: coincident points
# feel the same forces from every other point, so a start with all points
# on one spot never moves, and a large coincident group separates only
# slowly. Such points are moved by a tiny Gaussian jitter (from R's
# generator), with a warning.
spread_collapsed <- function(Y, what) {
  n <- nrow(Y)
  group <- largest_coincident_group(Y)
  if (length(group) <= n / 2) return(Y)
  others <- Y[-group, , drop = FALSE]
  scale <- if (nrow(others) > 0) max(abs(sweep(others, 2, Y[group[1], ]))) else 0
  sdev <- if (scale > 0) 1e-4 * scale else 1e-4 * max(1, max(abs(Y[group[1], ])))
  warning(what, " puts ", length(group), " of the ", n, " points on one spot; ",
          "they were spread by a random jitter of sd ", signif(sdev, 3),
          " (give distinct starting points to avoid it)", call. = FALSE)
  Y[group, ] <- Y[group, , drop = FALSE] +
    matrix(stats::rnorm(length(group) * ncol(Y), sd = sdev), length(group))
  Y
}

# The rows of the largest set of identical rows of Y, in O(n log n).
largest_coincident_group <- function(Y) {
  o <- do.call(order, unname(as.data.frame(Y)))
  Z <- Y[o, , drop = FALSE]
  same <- c(FALSE, rowSums(Z[-1, , drop = FALSE] != Z[-nrow(Z), , drop = FALSE]) == 0)
  run <- cumsum(!same)
  sizes <- tabulate(run)
  o[run == which.max(sizes)]
}

# Columns of eigenvectors get a definite sign: largest |entry| positive.
ne_fix_signs <- function(V) {
  for (j in seq_len(ncol(V))) {
    if (V[which.max(abs(V[, j])), j] < 0) V[, j] <- -V[, j]
  }
  V
}

# The first k principal component scores; when X has fewer than k columns
# the missing coordinates are small random numbers (a constant coordinate
# would never move).
ne_pca <- function(X, k) {
  kk <- min(k, ncol(X))
  if (requireNamespace("irlba", quietly = TRUE) && min(dim(X)) > 3 * kk + 10) {
    # irlba centres implicitly: a centred copy of 70,000 x 784 took 3.9 s,
    # the whole decomposition 1.2 s
    s <- irlba::irlba(X, nv = kk, center = colMeans(X))
    Y <- s$u %*% diag(s$d[seq_len(kk)], kk)
  } else {
    s <- svd(sweep(X, 2, colMeans(X)), nu = kk, nv = 0)
    Y <- s$u %*% diag(s$d[seq_len(kk)], kk)
  }
  Y <- ne_fix_signs(Y)
  if (kk < k) {
    s1 <- stats::sd(Y[, 1])
    if (!is.finite(s1) || s1 <= 0) s1 <- 1
    Y <- cbind(Y, matrix(stats::rnorm(nrow(Y) * (k - kk), sd = 1e-2 * s1), nrow(Y), k - kk))
  }
  Y
}

# The top k + 1 eigenvectors of D^-1/2 A D^-1/2 (the smallest of the
# normalised Laplacian) without the trivial one, D^1/2 1: it is projected out
# and the k remaining directions kept, which also works when the graph has
# several components (eigenvalue 1 repeated). NULL when no eigensolver
# succeeds.
ne_spectral <- function(A, k) {
  n <- nrow(A)
  if (k + 1 >= n) return(NULL)
  deg <- Matrix::rowSums(A)
  deg[deg <= 0] <- 1
  Dh <- Matrix::Diagonal(x = 1 / sqrt(deg))
  # (RSpectra's eigs_sym() takes a general sparse matrix, not a dsCMatrix)
  M <- methods::as(Matrix::forceSymmetric(Dh %*% A %*% Dh), "generalMatrix")
  V <- NULL
  if (n <= 200) {
    V <- eigen(as.matrix(M), symmetric = TRUE)$vectors[, seq_len(k + 1), drop = FALSE]
  } else {
    if (requireNamespace("RSpectra", quietly = TRUE)) {
      res <- value_or(
        suppressWarnings(RSpectra::eigs_sym(
          M, k + 1, which = "LA",
          opts = list(tol = 1e-4, maxitr = 2000, ncv = min(n, max(2 * (k + 1) + 1, 20)),
                      initvec = stats::rnorm(n)))),
        NULL)
      if (!is.null(res) && res$nconv >= k + 1) V <- res$vectors[, seq_len(k + 1)]
    }
    if (is.null(V) && requireNamespace("irlba", quietly = TRUE)) {
      # M + I is positive semi-definite: its top singular vectors are M's
      # top eigenvectors
      res <- value_or(
        suppressWarnings(irlba::partial_eigen(M + Matrix::Diagonal(n), n = k + 1,
                                              symmetric = TRUE)),
        NULL)
      if (!is.null(res)) V <- res$vectors[, seq_len(k + 1)]
    }
  }
  if (is.null(V) || anyNA(V)) return(NULL)
  v0 <- sqrt(deg) / sqrt(sum(deg))
  V <- V - v0 %*% crossprod(v0, V)
  V <- svd(V, nu = k, nv = 0)$u
  ne_fix_signs(V)
}
