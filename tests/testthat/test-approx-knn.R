# The approximate kNN search (nn_kind = "approx"): recall against the exact
# search, the graph format, reproducibility and edge cases.

clustered_gaussians <- function(n, d, n_clusters = 20, spread = 4) {
  centres <- matrix(rnorm(n_clusters * d, sd = spread), n_clusters)
  cluster <- sample.int(n_clusters, n, replace = TRUE)
  centres[cluster, , drop = FALSE] + matrix(rnorm(n * d), n)
}

# Mean fraction of each row's true neighbours (self excluded) found.
recall <- function(approx, exact) {
  k <- ncol(exact$idx)
  hits <- vapply(seq_len(nrow(exact$idx)), function(i) {
    length(intersect(approx$idx[i, -1], exact$idx[i, -1]))
  }, numeric(1))
  mean(hits) / (k - 1)
}

expect_valid_graph <- function(g, n, k) {
  expect_named(g, c("idx", "dist"))
  expect_true(is.integer(g$idx) && is.matrix(g$idx))
  expect_true(is.double(g$dist) && is.matrix(g$dist))
  expect_identical(dim(g$idx), c(as.integer(n), as.integer(k)))
  expect_identical(dim(g$dist), dim(g$idx))
  expect_identical(g$idx[, 1], seq_len(n))
  expect_true(all(g$dist[, 1] == 0))
  expect_true(all(g$idx >= 1L & g$idx <= n))
  expect_true(all(is.finite(g$dist) & g$dist >= 0))
  expect_false(any(apply(g$dist, 1, is.unsorted)))
  expect_false(any(apply(g$idx, 1, anyDuplicated) > 0))
}

# Distances of the pairs the two graphs share must agree exactly: both kinds
# report exact double-precision distances.
expect_same_distances <- function(approx, exact) {
  ka <- paste(row(approx$idx), approx$idx)
  ke <- paste(row(exact$idx), exact$idx)
  common <- intersect(ka, ke)
  expect_gt(length(common), 0)
  expect_identical(approx$dist[match(common, ka)], exact$dist[match(common, ke)])
}

test_that("recall is at least 0.99 on clustered Gaussians in 20 and 100 dimensions", {
  for (d in c(20, 100)) {
    set.seed(100 + d)
    X <- clustered_gaussians(5000, d)
    exact <- extended_knn(X, 66, 0, nn_kind = "exact")
    approx <- extended_knn(X, 66, 0, n_threads = 2)
    expect_valid_graph(approx, 5000, 67)
    expect_gte(recall(approx, exact), 0.99)
    expect_same_distances(approx, exact)
    # The descent itself, from a deliberately poor forest.
    approx <- extended_knn(X, 66, 0, n_threads = 2,
                           nn_args = approx_control(n_trees = 2, leaf_size = 100))
    expect_gte(recall(approx, exact), 0.99)
  }
})

test_that("one seed gives identical graphs for any number of threads", {
  set.seed(7)
  X <- clustered_gaussians(3000, 15)
  set.seed(42)
  g1 <- extended_knn(X, 30, 10, n_threads = 1)
  set.seed(42)
  g2 <- extended_knn(X, 30, 10, n_threads = 2)
  expect_identical(g1, g2)
  # The seed comes from R's generator.
  set.seed(43)
  g4 <- extended_knn(X, 30, 10, n_threads = 2,
                     nn_args = approx_control(n_trees = 2, n_iters = 1))
  set.seed(43)
  g5 <- extended_knn(X, 30, 10, n_threads = 1,
                     nn_args = approx_control(n_trees = 2, n_iters = 1))
  expect_identical(g4, g5)
})

test_that("approximate graphs are in uwot's format and uwot accepts them", {
  skip_if_not_installed("uwot")
  set.seed(3)
  X <- clustered_gaussians(1200, 5, n_clusters = 4)
  g <- extended_knn(X, 14, 0)
  expect_valid_graph(g, 1200, 15)
  emb <- uwot::umap(X, nn_method = g, n_epochs = 5, n_threads = 1)
  expect_identical(dim(emb), c(1200L, 2L))
  emb <- uwot::umap(NULL, nn_method = g, n_epochs = 5, n_threads = 1)
  expect_identical(dim(emb), c(1200L, 2L))
  res <- locally_scaled_knn(X, n_neighbors = 10, n_extra = 20, ret_knn = TRUE)
  expect_valid_graph(res$lsnn, 1200, 10)
  expect_valid_graph(res$knn, 1200, 10)
  emb <- uwot::umap(X, nn_method = res$lsnn, n_epochs = 5, n_threads = 1)
  expect_identical(dim(emb), c(1200L, 2L))
})

test_that("every metric, dense and sparse, reaches the exact neighbours", {
  set.seed(5)
  X <- clustered_gaussians(2000, 12) + 3
  for (metric in c("euclidean", "cosine", "correlation", "manhattan")) {
    exact <- extended_knn(X, 20, 10, nn_kind = "exact", metric = metric)
    approx <- extended_knn(X, 20, 10, metric = metric)
    expect_valid_graph(approx, 2000, 31)
    expect_gte(recall(approx, exact), 0.99)
    expect_same_distances(approx, exact)
  }
  S <- Matrix::rsparsematrix(1500, 60, density = 0.1)
  S <- S + Matrix::sparseMatrix(i = seq_len(1500), j = sample.int(5, 1500, replace = TRUE),
                                x = 5, dims = dim(S))
  # both the dense copy (the default at this density) and the sparse kernels
  for (max_dense_bytes in c(4e9, 0)) {
    op <- options(lsnn.max_dense_bytes = max_dense_bytes)
    on.exit(options(op), add = TRUE)
    for (metric in c("euclidean", "cosine")) {
      exact <- extended_knn(S, 15, 0, nn_kind = "exact", metric = metric)
      approx <- extended_knn(S, 15, 0, metric = metric)
      expect_valid_graph(approx, 1500, 16)
      expect_gte(recall(approx, exact), 0.97)
      expect_same_distances(approx, exact)
    }
  }
})

test_that("sparse data takes the faster path and says which", {
  set.seed(6)
  dense <- Matrix::rsparsematrix(400, 50, density = 0.3)
  sparse <- Matrix::rsparsematrix(400, 50, density = 0.01) + Matrix::Diagonal(400, 1)[, 1:50]
  expect_message(extended_knn(dense, 5, 0, verbose = TRUE), "approx search on a dense copy")
  expect_message(extended_knn(sparse, 5, 0, verbose = TRUE, nn_kind = "exact"),
                 "sparse exact search")
  op <- options(lsnn.max_dense_bytes = 0)
  on.exit(options(op), add = TRUE)
  expect_message(extended_knn(dense, 5, 0, verbose = TRUE), "sparse approx search")
  # the two paths give the same exact graph
  g_sparse <- extended_knn(dense, 8, 0, nn_kind = "exact")
  options(op)
  g_dense <- extended_knn(dense, 8, 0, nn_kind = "exact")
  expect_identical(g_sparse$idx, g_dense$idx)
  expect_equal(g_sparse$dist, g_dense$dist, tolerance = 1e-12)
})

test_that("few rows, large k, duplicates and constant columns work", {
  set.seed(9)
  # Fewer rows than a leaf, and lists covering most of the data: any k.
  X <- matrix(rnorm(40 * 3), 40)
  for (nn in c(1, 5, 20, 38, 39, 100)) {
    g <- extended_knn(X, nn, 0)
    k <- min(nn, 39) + 1
    expect_valid_graph(g, 40, k)
    expect_identical(g, extended_knn(X, nn, 0, nn_kind = "exact"))
  }
  # The descent itself on tiny data, with leaves smaller than the lists.
  X <- matrix(rnorm(60 * 3), 60)
  g <- extended_knn(X, 6, 0, nn_args = approx_control(leaf_size = 4, n_trees = 2))
  expect_valid_graph(g, 60, 7)
  expect_gte(recall(g, extended_knn(X, 6, 0, nn_kind = "exact")), 0.8)
  # Exact duplicates: every row has copies at distance 0.
  base <- matrix(rnorm(50 * 4), 50)
  X <- base[sample(rep(1:50, 40)), ]
  g <- extended_knn(X, 30, 0)
  expect_valid_graph(g, 2000, 31)
  expect_identical(g$dist, extended_knn(X, 30, 0, nn_kind = "exact")$dist)
  # All rows identical.
  g <- extended_knn(matrix(2, 600, 3), 20, 5)
  expect_valid_graph(g, 600, 26)
  expect_true(all(g$dist == 0))
  # Constant columns.
  X <- cbind(clustered_gaussians(2000, 6), 7, 0)
  g <- extended_knn(X, 25, 0)
  expect_valid_graph(g, 2000, 26)
  expect_gte(recall(g, extended_knn(X, 25, 0, nn_kind = "exact")), 0.99)
  # Zero rows under cosine: at distance 0 from each other, 1 from the rest.
  X <- clustered_gaussians(1500, 5)
  X[1:8, ] <- 0
  g <- extended_knn(X, 20, 0, metric = "cosine")
  ge <- extended_knn(X, 20, 0, metric = "cosine", nn_kind = "exact")
  expect_identical(g$idx[1:8, ], ge$idx[1:8, ])
  expect_identical(g$dist[1:8, ], ge$dist[1:8, ])
})

test_that("approx_control() checks its settings and nn_args takes a list", {
  expect_s3_class(approx_control(), "lsnn_approx_control")
  expect_output(print(approx_control(n_trees = 3)), "n_trees +3")
  expect_error(approx_control(n_trees = 0), "'n_trees' must be at least 1")
  expect_error(approx_control(leaf_size = 2.5), "'leaf_size' must be a single whole number")
  expect_error(approx_control(max_candidates = NA), "'max_candidates'")
  expect_error(approx_control(n_iters = -1), "'n_iters' must be at least 0")
  expect_error(approx_control(delta = -0.1), "'delta' must be between 0 and 1 \\(it is -0.1\\)")
  expect_error(approx_control(target_recall = 2), "'target_recall' must be between 0 and 1")
  X <- matrix(rnorm(300 * 3), 300)
  expect_error(extended_knn(X, 10, nn_args = list(trees = 3)), "unknown settings: trees")
  expect_error(extended_knn(X, 10, nn_args = 3), "'nn_args' must be")
  set.seed(1)
  g1 <- extended_knn(X, 10, 0, nn_args = list(n_trees = 3, n_iters = 2))
  set.seed(1)
  g2 <- extended_knn(X, 10, 0, nn_args = approx_control(n_trees = 3, n_iters = 2))
  expect_identical(g1, g2)
  # The exact search ignores nn_args.
  expect_identical(extended_knn(X, 10, 0, nn_kind = "exact", nn_args = list(trees = 1)),
                   extended_knn(X, 10, 0, nn_kind = "exact"))
  # Trees only (no descent) still gives a valid graph, and says that its
  # recall estimate is far short of the target
  expect_warning(g <- extended_knn(X, 10, 0, nn_args = approx_control(n_iters = 0, n_trees = 1,
                                                                      leaf_size = 20)),
                 "stopped at an estimated recall of 0\\.[0-9]{3}, short of target_recall = 0\\.99")
  expect_valid_graph(g, 300, 11)
  # no warning where the target is met, or turned off
  expect_no_warning(extended_knn(X, 10, 0, nn_kind = "approx"))
  expect_no_warning(extended_knn(X, 10, 0, nn_args = approx_control(n_iters = 0, n_trees = 1,
                                                                     leaf_size = 20,
                                                                     target_recall = 1)))
})
