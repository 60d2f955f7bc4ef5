# Plain-R reference implementations used as test oracles. They follow the
# definitions of the seed article step by step (rowMeans for the local scale,
# the division by sigma_i before sigma_j, R's stable order() for every sort),
# written independently, without any of the package's code.

# All pairwise distances, n x n, for the metrics lsnn supports.
ref_dist <- function(X, metric = "euclidean") {
  X <- as.matrix(X)
  switch(metric,
    euclidean = as.matrix(dist(X)),
    manhattan = as.matrix(dist(X, "manhattan")),
    # the fraction of differing columns, by products of 0/1 matrices (exact)
    hamming = {
      X <- X + 0
      (tcrossprod(X, 1 - X) + tcrossprod(1 - X, X)) / ncol(X)
    },
    cosine = {
      nrm <- sqrt(rowSums(X^2))
      S <- tcrossprod(X) / outer(nrm, nrm)
      S[nrm == 0, ] <- 0
      S[, nrm == 0] <- 0
      D <- 1 - S
      D[nrm == 0, nrm == 0] <- 0
      D
    },
    correlation = 1 - cor(t(X))
  )
}

ref_knn <- function(X, k, metric = "euclidean") {
  n <- nrow(X)
  D <- ref_dist(X, metric)
  idx <- matrix(0L, n, k)
  dd <- matrix(0, n, k)
  for (i in seq_len(n)) {
    others <- seq_len(n)[-i]
    o <- others[order(D[i, others], others)][seq_len(k - 1)]
    idx[i, ] <- c(i, o)
    dd[i, ] <- c(0, D[i, o])
  }
  list(idx = idx, dist = dd)
}

ref_scaled <- function(idx, dist, scale_from = 5, scale_to = 7) {
  sigma <- rowMeans(dist[, scale_from:scale_to, drop = FALSE])
  sigma[sigma < 1e-10] <- 1e-10
  d2 <- dist * dist
  per_row <- d2 / sigma          # recycled down the columns: divides row i by sigma_i
  per_row / matrix(sigma[idx], nrow(idx))
}

ref_sort <- function(graph, values = graph$dist, decreasing = FALSE, self_first = TRUE,
                     by_row = FALSE) {
  n <- nrow(graph$idx)
  k <- ncol(graph$idx)
  cols <- if (self_first) seq_len(k)[-1] else seq_len(k)
  idx <- graph$idx
  dist <- graph$dist
  for (i in seq_len(n)) {
    o <- if (by_row) {
      cols[order(values[i, cols], idx[i, cols], decreasing = decreasing)]
    } else {
      cols[order(values[i, cols], decreasing = decreasing)]
    }
    idx[i, cols] <- graph$idx[i, o]
    dist[i, cols] <- graph$dist[i, o]
  }
  list(idx = idx, dist = dist)
}

ref_lsnn <- function(enn, n_neighbors, scale_from = 5, scale_to = 7, n_extra = 51) {
  keep <- seq_len(min(ncol(enn$idx), n_neighbors + n_extra))
  enn <- list(idx = enn$idx[, keep, drop = FALSE], dist = enn$dist[, keep, drop = FALSE])
  n_neighbors <- min(n_neighbors, nrow(enn$idx) - 1)
  scaled <- ref_scaled(enn$idx, enn$dist, scale_from, scale_to)
  by_scaled <- ref_sort(enn, scaled)
  first <- seq_len(n_neighbors)
  chosen <- list(idx = by_scaled$idx[, first, drop = FALSE],
                 dist = by_scaled$dist[, first, drop = FALSE])
  # listed by distance, equal distances by row number, the row itself first
  ref_sort(chosen, by_row = TRUE)
}

clustered <- function(n, d, n_clusters = 5, spread = 0.3) {
  centres <- matrix(rnorm(n_clusters * d, sd = 3), n_clusters)
  lab <- sample.int(n_clusters, n, replace = TRUE)
  centres[lab, , drop = FALSE] + matrix(rnorm(n * d, sd = spread), n)
}

expect_graph_format <- function(g, n, k) {
  expect_named(g, c("idx", "dist"))
  expect_true(is.integer(g$idx))
  expect_true(is.double(g$dist))
  expect_equal(dim(g$idx), c(n, k))
  expect_equal(dim(g$dist), c(n, k))
  expect_equal(g$idx[, 1], seq_len(n))
  expect_true(all(g$dist[, 1] == 0))
  if (k > 1) expect_true(all(g$dist[, -1, drop = FALSE] - g$dist[, -k, drop = FALSE] >= 0))
}
