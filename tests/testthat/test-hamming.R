# metric = "hamming": 0/1 data packed into bits, the fraction of columns that
# differ, exact search equal to brute force (ties by row number).

# Random 0/1 rows drawn around a few prototypes: each bit of a prototype
# flipped with probability `flip`. Few columns give many equal distances and
# repeated rows.
binary_rows <- function(n, d, n_protos = 4, flip = 0.1) {
  protos <- matrix(runif(n_protos * d) < 0.5, n_protos)
  lab <- sample.int(n_protos, n, replace = TRUE)
  X <- xor(protos[lab, , drop = FALSE], matrix(runif(n * d) < flip, n))
  dim(X) <- c(n, d)
  X
}

ref_hamming_dist <- function(X) ref_dist(X, "hamming")

# Brute force: the row itself, then the others by (distance, row number).
ref_hamming_knn <- function(X, k) ref_knn(X, k, "hamming")

# Brute force for query rows Q among reference rows R (no self column).
ref_hamming_query <- function(R, Q, k) {
  D <- ref_hamming_dist(rbind(R + 0, Q + 0))[nrow(R) + seq_len(nrow(Q)), seq_len(nrow(R)),
                                               drop = FALSE]
  idx <- t(apply(D, 1, function(d) order(d, seq_along(d))[seq_len(k)]))
  dim(idx) <- c(nrow(Q), k)
  storage.mode(idx) <- "integer"
  list(idx = idx, dist = matrix(D[cbind(rep(seq_len(nrow(Q)), k), c(idx))], nrow(Q)))
}

test_that("the distance is the fraction of differing columns", {
  X <- rbind(c(TRUE, FALSE, TRUE, TRUE), c(FALSE, FALSE, TRUE, FALSE), c(TRUE, FALSE, TRUE, TRUE))
  g <- extended_knn(X, 2, 0, nn_kind = "exact", metric = "hamming")
  expect_identical(g$idx, rbind(c(1L, 3L, 2L), c(2L, 1L, 3L), c(3L, 1L, 2L)))
  expect_identical(g$dist, rbind(c(0, 0, 0.5), c(0, 0.5, 0.5), c(0, 0, 0.5)))
})

test_that("the exact search equals brute force, ties included, for every width and kernel build", {
  set.seed(11)
  for (simd in c("auto", "generic")) {
    old <- options(lsnn.simd = simd)
    on.exit(options(old), add = TRUE)
    for (d in c(1, 3, 10, 63, 64, 65, 130, 300)) {
      n <- if (d <= 10) 250 else 400
      X <- binary_rows(n, d, flip = if (d <= 10) 0.3 else 0.1)
      k <- min(n, 25)
      ref <- ref_hamming_knn(X, k)
      g <- extended_knn(X, k - 1, 0, nn_kind = "exact", metric = "hamming", n_threads = 2)
      expect_graph_format(g, n, k)
      expect_identical(g$idx, ref$idx, info = paste(simd, d))
      expect_identical(g$dist, ref$dist, info = paste(simd, d))
    }
    options(old)
  }
})

test_that("wide rows: the vector counts are flushed before a byte can overflow", {
  # 8,200 columns: 129 words, more than the 124 words (31 vectors) a byte
  # count holds; rows far apart so that counts run into the thousands
  set.seed(20)
  X <- matrix(runif(60 * 8200) < 0.5, 60)
  X[2, ] <- !X[1, ]
  ref <- ref_hamming_knn(X, 60)
  for (simd in c("auto", "generic")) {
    old <- options(lsnn.simd = simd)
    g <- extended_knn(X, 59, 0, nn_kind = "exact", metric = "hamming", n_threads = 2)
    options(old)
    expect_identical(g$idx, ref$idx, info = simd)
    expect_identical(g$dist, ref$dist, info = simd)
  }
  expect_identical(g$dist[1, 60], 1)
})

test_that("data with ties everywhere: duplicates, constant rows, every row", {
  set.seed(12)
  X <- binary_rows(300, 4, n_protos = 2, flip = 0.2)   # at most 16 distinct rows
  expect_lt(nrow(unique(X)), 17)
  ref <- ref_hamming_knn(X, 300)
  g <- extended_knn(X, 299, 0, nn_kind = "exact", metric = "hamming", n_threads = 2)
  expect_identical(g$idx, ref$idx)
  expect_identical(g$dist, ref$dist)
  expect_identical(extended_knn(X, 299, 0, nn_kind = "exact", metric = "hamming", n_threads = 1), g)
  Z <- matrix(TRUE, 7, 5)
  gz <- extended_knn(Z, 6, 0, nn_kind = "exact", metric = "hamming")
  expect_identical(gz$idx[4, ], c(4L, 1L, 2L, 3L, 5L, 6L, 7L))
  expect_true(all(gz$dist == 0))
})

test_that("tiles of every size give the brute-force graph", {
  set.seed(13)
  X <- binary_rows(500, 40, flip = 0.25)
  ref <- ref_hamming_knn(X, 16)
  data <- lsnn:::prepare_data(X, "hamming")
  for (bs in c(1L, 3L, 64L, 500L, 1000L)) {
    g <- lsnn:::exact_knn(data, 16, "hamming", 2L, FALSE, block_rows = bs)
    expect_identical(g$idx, ref$idx, info = bs)
    expect_identical(g$dist, ref$dist, info = bs)
  }
  # no row needs the second pass: the popcounts are exact
  g <- lsnn:::.exact_knn(data, 16L, "hamming", 2L, FALSE, "auto", 0L)
  expect_equal(attr(g, "lsnn_refined_rows"), 0)
})

test_that("logical, integer and double 0/1 data and data frames give the same graph", {
  set.seed(14)
  X <- binary_rows(300, 70)
  g <- extended_knn(X, 10, 5, nn_kind = "exact", metric = "hamming")
  Xd <- X + 0
  Xi <- X + 0L
  expect_identical(extended_knn(Xd, 10, 5, nn_kind = "exact", metric = "hamming"), g)
  expect_identical(extended_knn(Xi, 10, 5, nn_kind = "exact", metric = "hamming"), g)
  df <- as.data.frame(X)
  df$label <- letters[seq_len(nrow(X)) %% 26 + 1]
  expect_message(gd <- extended_knn(df, 10, 5, nn_kind = "exact", metric = "hamming"),
                 "dropped: label")
  expect_identical(gd, g)
  set.seed(1)
  a1 <- extended_knn(X, 10, 5, metric = "hamming")
  set.seed(1)
  a2 <- extended_knn(Xd, 10, 5, metric = "hamming")
  expect_identical(a1, a2)
})

test_that("the approximate search finds the exact neighbours, reproducibly for any threads", {
  set.seed(15)
  X <- binary_rows(4000, 200, n_protos = 12, flip = 0.15)
  exact <- extended_knn(X, 15, 0, nn_kind = "exact", metric = "hamming", n_threads = 2)
  set.seed(3)
  a1 <- extended_knn(X, 15, 0, metric = "hamming", n_threads = 1)
  set.seed(3)
  a2 <- extended_knn(X, 15, 0, metric = "hamming", n_threads = 2)
  expect_identical(a1, a2)
  expect_graph_format(a1, 4000, 16)
  # recall by distance (ties make the sets ambiguous): a row's found k-th
  # distance is its true k-th distance
  expect_gt(mean(a1$dist[, 16] == exact$dist[, 16]), 0.95)
  recall <- mean(vapply(seq_len(4000), function(i) {
    length(intersect(a1$idx[i, -1], exact$idx[i, -1]))
  }, numeric(1))) / 15
  expect_gt(recall, 0.9)
  # every distance reported is the exact one
  for (i in 1:50) {
    expect_identical(a1$dist[i, ], colSums(t(X[a1$idx[i, ], ]) != X[i, ]) / 200)
  }
  # the generic build ranks by the same exact counts
  old <- options(lsnn.simd = "generic")
  on.exit(options(old))
  set.seed(3)
  expect_identical(extended_knn(X, 15, 0, metric = "hamming", n_threads = 2), a1)
})

test_that("queries against a hamming index: exact equals brute force, approximate finds most", {
  set.seed(16)
  X <- binary_rows(1500, 90, n_protos = 6, flip = 0.2)
  R <- X[1:1200, ]
  Q <- X[1201:1500, ]
  res <- extended_knn(R, 20, 0, nn_kind = "exact", metric = "hamming", ret_index = TRUE)
  expect_identical(res$index$metric, "hamming")
  expect_true(is.logical(res$index$data))
  ref <- ref_hamming_query(R, Q, 10)
  qe <- extended_knn_query(res$index, Q, 10, nn_kind = "exact", n_threads = 2)
  expect_identical(qe$idx, ref$idx)
  expect_identical(qe$dist, ref$dist)
  # 0/1 numbers against the logical reference, and a logical vector as one row
  expect_identical(extended_knn_query(res$index, Q + 0, 10, nn_kind = "exact"), qe)
  one <- extended_knn_query(res$index, Q[5, ], 10, nn_kind = "exact")
  expect_identical(one$idx, qe$idx[5, , drop = FALSE])
  set.seed(4)
  qa <- extended_knn_query(res$index, Q, 10, n_threads = 1)
  set.seed(4)
  expect_identical(extended_knn_query(res$index, Q, 10, n_threads = 2), qa)
  expect_gt(mean(qa$dist[, 10] == qe$dist[, 10]), 0.9)
  # the index survives saveRDS() and serves the locally scaled query
  file <- tempfile(fileext = ".rds")
  saveRDS(res$index, file)
  index <- readRDS(file)
  expect_identical(extended_knn_query(index, Q, 10, nn_kind = "exact"), qe)
  ls <- locally_scaled_knn_query(index, Q, 5, nn_kind = "exact")
  expect_equal(dim(ls$idx), c(300L, 5L))
  unlink(file)
})

test_that("locally scaled neighbours and quality measures take the hamming metric", {
  set.seed(17)
  X <- binary_rows(400, 50, flip = 0.2)
  enn <- extended_knn(X, 15, 50, nn_kind = "exact", metric = "hamming")
  ls <- locally_scaled_knn(X, 15, nn_kind = "exact", metric = "hamming")
  expect_identical(ls, enn_to_lsnn(enn, 15, n_extra = 51))
  Y <- matrix(rnorm(800), 400)
  np <- neighbor_preservation(X, Y, k = 10, metric = "hamming")
  expect_equal(np, neighbor_preservation(enn, Y, k = 10))
  tr <- trustworthiness(X, Y, k = 10, metric = "hamming")
  expect_true(tr >= 0 && tr <= 1)
  # an embedding that is the data itself (a few columns) ranks rows as the
  # data do: every triplet agrees
  X3 <- X[, 1:3]
  expect_equal(random_triplet_accuracy(X3, X3 + 0, n_triplets = 2000, metric = "hamming"), 1,
               tolerance = 0)
})

test_that("sharded searches take 0/1 shards", {
  skip_on_cran()
  set.seed(18)
  X <- binary_rows(600, 40, flip = 0.2)
  dir <- file.path(tempdir(), "hamming-shards")
  on.exit(unlink(dir, recursive = TRUE))
  shards <- write_shards(X, dir, rows_per_shard = 250, overwrite = TRUE)
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  g <- extended_knn_sharded(shards, 12, 0, nn_kind = "exact", metric = "hamming")
  expect_identical(g, extended_knn(X, 12, 0, nn_kind = "exact", metric = "hamming"))
  Y <- X + 0
  Y[7, 3] <- 0.5
  bad <- write_shards(Y, file.path(dir, "bad"), rows_per_shard = 250)
  expect_error(extended_knn_sharded(bad, 12, 0, nn_kind = "exact", metric = "hamming"),
               "shard-00001.rds' holds 0.5 in row 7, column 3")
})

test_that("anything but 0/1 data is an error naming the argument", {
  X <- matrix(c(0, 1, 1, 0, 0.5, 1), 3)
  expect_error(extended_knn(X, 1, 0, metric = "hamming"),
               "'X' must be a logical matrix or a numeric matrix of 0 and 1 .*row 2, column 2 holds 0.5")
  L <- matrix(c(TRUE, FALSE, NA, TRUE, TRUE, FALSE), 3)
  expect_error(extended_knn(L, 1, 0, metric = "hamming"), "'X' .*row 3, column 1 holds NA")
  N <- matrix(c(0, 1, NaN, 1), 2)
  expect_error(extended_knn(N, 1, 0, metric = "hamming"), "row 1, column 2 holds NaN")
  expect_error(extended_knn(matrix(c(0, 2, 1, 1), 2), 1, 0, metric = "hamming"),
               "row 2, column 1 holds 2")
  expect_error(extended_knn(matrix(letters[1:4], 2), 1, 0, metric = "hamming"),
               "'X' must be a logical matrix .*\\(it is a character matrix\\)")
  expect_error(extended_knn(c(TRUE, FALSE), 1, 0, metric = "hamming"),
               "'X' must be a logical matrix")
  expect_error(extended_knn(Matrix::Matrix(c(0, 1, 1, 0), 2, sparse = TRUE), 1, 0,
                            metric = "hamming"),
               "use as.matrix\\(\\) for metric = \"hamming\"")
  # logical data with another metric, and where no metric is taken
  expect_error(extended_knn(L[1:2, ], 1, 0), "'X' is logical: metric = \"hamming\"")
  expect_error(neighbor_embedding(matrix(TRUE, 5, 3), "umap"),
               "'X' is logical: neighbor_embedding\\(\\) measures euclidean")
  # queries and indexes
  set.seed(19)
  B <- binary_rows(100, 20)
  index <- extended_knn(B, 10, 0, metric = "hamming", ret_index = TRUE)$index
  Q <- B[1:3, ] + 0
  Q[2, 4] <- 3
  expect_error(extended_knn_query(index, Q, 5), "'query' must be a logical matrix .*row 2, column 4 holds 3")
  expect_error(extended_knn_query(index, B[, 1:5], 5), "'query' has 5 columns")
  damaged <- index
  damaged$data[1, 1] <- NA
  expect_error(extended_knn_query(damaged, B[1:3, ], 5), "'index' is damaged")
  damaged <- index
  damaged$data <- damaged$data + 0
  damaged$data[4, 2] <- 2
  expect_error(extended_knn_query(damaged, B[1:3, ], 5),
               "'index\\$data' must hold only 0 and 1 .*row 4, column 2")
  damaged <- index
  damaged$metric <- "euclidean"
  expect_error(extended_knn_query(damaged, B[1:3, ], 5), "'index\\$data' is logical")
})
