test_that("exact neighbours match brute force for every metric and kernel build", {
  set.seed(42)
  X <- clustered(600, 12)
  for (simd in c("auto", "generic")) {
    withr_options <- options(lsnn.simd = simd)
    on.exit(options(withr_options), add = TRUE)
    for (metric in c("euclidean", "cosine", "correlation", "manhattan")) {
      g <- extended_knn(X, 20, 5, nn_kind = "exact", metric = metric, n_threads = 2)
      ref <- ref_knn(X, 26, metric)
      expect_graph_format(g, 600, 26)
      expect_identical(g$idx, ref$idx, info = paste(simd, metric))
      expect_equal(g$dist, ref$dist, tolerance = 1e-12, info = paste(simd, metric))
    }
    options(withr_options)
  }
})

test_that("tiles of every size give the same exact graph", {
  set.seed(3)
  X <- clustered(700, 30)
  ref <- ref_knn(X, 16)
  data <- lsnn:::prepare_data(X, "euclidean")
  for (bs in c(1L, 7L, 64L, 700L, 1000L)) {
    g <- lsnn:::exact_knn(data, 16, "euclidean", 2L, FALSE, block_rows = bs)
    expect_identical(g$idx, ref$idx, info = bs)
  }
})

test_that("data that float cannot hold exactly keeps exact distances", {
  set.seed(5)
  X <- clustered(400, 8) / 3 + 1e6    # large offset: the expansion cancels badly
  g <- extended_knn(X, 10, 0, nn_kind = "exact")
  ref <- ref_knn(X, 11)
  expect_identical(g$idx, ref$idx)
  expect_equal(g$dist, ref$dist, tolerance = 1e-9)
})

test_that("ties are ordered by row number and self stays first with duplicates", {
  X <- rbind(diag(3), diag(3), diag(3), c(0, 0, 0))
  g <- extended_knn(X, 9, 0, nn_kind = "exact")
  expect_graph_format(g, 10, 10)
  expect_equal(g$idx[1, 1:3], c(1L, 4L, 7L))
  expect_equal(g$idx[4, 1:3], c(4L, 1L, 7L))
  expect_equal(g$idx[7, 1:3], c(7L, 1L, 4L))
  # all rows identical: every distance is 0, neighbours by row number
  Z <- matrix(1, 6, 4)
  gz <- extended_knn(Z, 5, 0, nn_kind = "exact")
  expect_equal(gz$idx[3, ], c(3L, 1L, 2L, 4L, 5L, 6L))
  expect_true(all(gz$dist == 0))
})

test_that("results are identical for any number of threads", {
  set.seed(7)
  X <- clustered(1500, 10)
  g1 <- extended_knn(X, 30, 10, nn_kind = "exact", n_threads = 1)
  g2 <- extended_knn(X, 30, 10, nn_kind = "exact", n_threads = 2)
  expect_identical(g1, g2)
})

test_that("k is capped at n - 1 others and tiny data work", {
  X <- matrix(c(0, 1, 3), 3)
  g <- extended_knn(X, 150, 50, nn_kind = "exact")
  expect_graph_format(g, 3, 3)
  expect_equal(g$idx, matrix(c(1L, 2L, 3L, 2L, 1L, 2L, 3L, 3L, 1L), 3))
  g2 <- extended_knn(matrix(c(0, 2), 2), 1, 0, nn_kind = "exact")
  expect_equal(g2$idx, matrix(c(1L, 2L, 2L, 1L), 2))
  expect_equal(g2$dist, matrix(c(0, 0, 2, 2), 2))
})

test_that("data frames, integer matrices and sparse matrices are accepted", {
  set.seed(11)
  X <- clustered(200, 6)
  df <- data.frame(X, label = sample(letters, 200, replace = TRUE))
  expect_message(g_df <- extended_knn(df, 10, 0, nn_kind = "exact"), "dropped: label")
  expect_identical(g_df, extended_knn(X, 10, 0, nn_kind = "exact"))
  Xi <- matrix(sample(0:9, 200 * 5, replace = TRUE), 200)
  expect_identical(extended_knn(Xi, 10, 0, nn_kind = "exact")$idx, ref_knn(Xi, 11)$idx)
  S <- Matrix::rsparsematrix(300, 40, 0.15)
  S[5, ] <- 0
  for (max_dense_bytes in c(4e9, 0)) {  # the dense copy and the sparse kernels
    op <- options(lsnn.max_dense_bytes = max_dense_bytes)
    on.exit(options(op), add = TRUE)
    for (metric in c("euclidean", "cosine")) {
      g <- extended_knn(S, 12, 0, nn_kind = "exact", metric = metric)
      ref <- ref_knn(as.matrix(S), 13, metric)
      expect_identical(g$idx, ref$idx, info = metric)
      expect_equal(g$dist, ref$dist, tolerance = 1e-12, info = metric)
    }
  }
  expect_error(extended_knn(S, 5, 0, nn_kind = "exact", metric = "manhattan"), "sparse data")
})

test_that("cosine treats zero rows consistently", {
  X <- rbind(c(1, 0), c(0, 0), c(0, 1), c(0, 0), c(1, 1))
  g <- extended_knn(X, 4, 0, nn_kind = "exact", metric = "cosine")
  expect_equal(g$idx[2, 1:2], c(2L, 4L))
  expect_equal(g$dist[2, ], c(0, 0, 1, 1, 1))
  expect_equal(g$dist[1, 2], 1 - cos(pi / 4))
})

test_that("bad input gives clear errors", {
  X <- matrix(rnorm(40), 10)
  expect_error(extended_knn(X[1, , drop = FALSE], nn_kind = "exact"), "at least 2 rows")
  Xna <- X
  Xna[3, 2] <- NA
  expect_error(extended_knn(Xna, nn_kind = "exact"), "NA, NaN or infinite values \\(first in row 3\\)")
  Xinf <- X
  Xinf[2, 1] <- Inf
  expect_error(extended_knn(Xinf, nn_kind = "exact"), "infinite")
  expect_error(extended_knn(matrix(letters[1:20], 10), nn_kind = "exact"), "must be numeric")
  expect_error(extended_knn(1:10, nn_kind = "exact"), "numeric matrix")
  expect_error(extended_knn(X, n_neighbors = 0, nn_kind = "exact"), "at least 1")
  expect_error(extended_knn(X, n_neighbors = 2.5, nn_kind = "exact"), "whole number")
  expect_error(extended_knn(X, n_neighbors = NA, nn_kind = "exact"), "whole number")
  expect_error(extended_knn(X, n_extra = -1, nn_kind = "exact"), "at least 0")
  expect_error(extended_knn(X, n_threads = -1, nn_kind = "exact"), "n_threads")
  expect_error(extended_knn(X, nn_kind = "fast"), "nn_kind")
  expect_error(extended_knn(X, nn_kind = "exact", metric = "hamming"), "metric")
  expect_error(extended_knn(data.frame(a = letters), nn_kind = "exact"), "no numeric columns")
})

test_that("rows that float cannot rank are settled by the second pass", {
  set.seed(17)
  # 30 near-copies of each point, apart by far less than float resolution
  X <- matrix(rep(rnorm(20), each = 30), ncol = 2) + rnorm(600, sd = 1e-9)
  data <- lsnn:::prepare_data(X, "euclidean")
  g <- lsnn:::.exact_knn(data, 12, "euclidean", 2L, FALSE, "auto", 0L)
  expect_gt(attr(g, "lsnn_refined_rows"), 0)
  ref <- ref_knn(X, 12)
  expect_identical(g$idx, ref$idx)
  expect_equal(g$dist, ref$dist, tolerance = 1e-12, ignore_attr = TRUE)
})
