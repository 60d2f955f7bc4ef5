# nn_kind = "partition": the exact graph through a partition of the rows.

# The partitioned search on X with its counts (attribute "partition_stats").
partition_with_stats <- function(X, k, rows_per_partition, metric = "euclidean", n_threads = 1L,
                                 seed = 1L) {
  set.seed(seed)
  lsnn:::partition_knn(lsnn:::prepare_data(X, metric), as.integer(k), metric, n_threads, FALSE,
                       partition_control(rows_per_partition), lsnn:::draw_seed(), stats = TRUE)
}

without_stats <- function(g) {
  attr(g, "partition_stats") <- NULL
  g
}

test_that("the partitioned search gives the exact graph on clustered data, for 1 and 2 threads", {
  set.seed(11)
  X <- clustered(3000, 10, n_clusters = 12, spread = 0.5)
  exact <- extended_knn(X, 15, 5, nn_kind = "exact")
  for (rows in c(100, 500)) {
    for (threads in 1:2) {
      set.seed(rows + threads)
      g <- extended_knn(X, 15, 5, nn_kind = "partition", n_threads = threads,
                        nn_args = partition_control(rows_per_partition = rows))
      expect_identical(g, exact, info = paste(rows, threads))
    }
  }
  # the bound skips most of the work, and says so
  g <- partition_with_stats(X, 21, 100)
  s <- attr(g, "partition_stats")
  expect_identical(without_stats(g), exact)
  expect_true(s$partitioned)
  expect_equal(s$partitions, 30)
  expect_lt(s$pairs_scored, 0.5)
  expect_gt(s$rows_pruned, 2000)
  expect_equal(s$rows_pruned + s$rows_exhaustive, 3000)
  # the default settings (3 partitions), and 1,400 rows: one partition, the exact search
  expect_identical(extended_knn(X, 15, 5, nn_kind = "partition"), exact)
  expect_identical(extended_knn(X[1:1400, ], 15, 5, nn_kind = "partition"),
                   extended_knn(X[1:1400, ], 15, 5, nn_kind = "exact"))
})

test_that("clusters with uniform rows among them give the exact graph", {
  set.seed(18)
  X <- clustered(2400, 8, n_clusters = 10, spread = 0.3)
  noisy <- sample(2400, 120)
  X[noisy, ] <- matrix(runif(120 * 8, min(X), max(X)), 120)
  g <- partition_with_stats(X, 21, 80, n_threads = 2)
  s <- attr(g, "partition_stats")
  expect_identical(without_stats(g), extended_knn(X, 20, 0, nn_kind = "exact"))
  # (the uniform rows are partitioned apart, so the clusters' radii stay small)
  expect_lt(s$products, 0.3)
})

test_that("the partitioned search gives the exact graph on uniform data", {
  set.seed(12)
  X <- matrix(runif(2500 * 6), 2500)
  exact <- extended_knn(X, 20, 10, nn_kind = "exact")
  for (threads in 1:2) {
    g <- extended_knn(X, 20, 10, nn_kind = "partition", n_threads = threads,
                      nn_args = list(rows_per_partition = 150))
    expect_identical(g, exact, info = threads)
  }
  # wide uniform data: nothing can be skipped, and nothing is lost
  W <- matrix(runif(1200 * 60), 1200)
  g <- partition_with_stats(W, 16, 100)
  expect_identical(without_stats(g), extended_knn(W, 15, 0, nn_kind = "exact"))
  expect_gt(attr(g, "partition_stats")$pairs_scored, 0.9)
})

test_that("partitions of one row, empty partitions, duplicates and ties give the exact graph", {
  set.seed(13)
  # every row its own partition (many of them empty: rows repeat)
  base <- clustered(150, 4, n_clusters = 3)
  X <- rbind(base, base, base[1:50, ])
  exact <- extended_knn(X, 12, 3, nn_kind = "exact")
  for (threads in 1:2) {
    g <- partition_with_stats(X, 16, 1, n_threads = threads)
    s <- attr(g, "partition_stats")
    expect_identical(without_stats(g), exact, info = threads)
    expect_true(s$partitioned)
    expect_lt(s$partitions, 350)  # some of the 350 centres kept no row
  }
  # integer points on a grid: many rows at equal distances, ties by row number
  G <- as.matrix(expand.grid(1:12, 1:12, 1:6))[sample(864), ]
  G <- rbind(G, G[1:100, ])
  exact <- extended_knn(G, 20, 0, nn_kind = "exact")
  for (rows in c(1, 7, 60)) {
    g <- partition_with_stats(G, 21, rows)
    expect_true(attr(g, "partition_stats")$partitioned)
    expect_identical(without_stats(g), exact, info = rows)
  }
  # every row the same: one tie for all
  Z <- matrix(1, 300, 3)
  expect_identical(without_stats(partition_with_stats(Z, 11, 20)),
                   extended_knn(Z, 10, 0, nn_kind = "exact"))
})

test_that("the bound never drops a true neighbour (random shapes, sizes and seeds)", {
  set.seed(16)
  for (trial in 1:12) {
    n <- sample(300:900, 1)
    d <- sample(c(2, 3, 5, 17), 1)
    X <- clustered(n, d, n_clusters = sample(1:15, 1), spread = runif(1, 0.05, 1))
    if (trial %% 3 == 0) X <- round(X, 1)  # ties
    if (trial %% 4 == 0) X <- rbind(X, X[sample(n, 50), ])  # duplicates
    k <- sample(c(2, 5, 30), 1)
    metric <- if (trial %% 2 == 0) "cosine" else "euclidean"
    g <- partition_with_stats(X, k, sample(c(3, 20, 80), 1), metric = metric,
                              n_threads = 1 + trial %% 2, seed = trial)
    info <- paste(trial, n, d, k, metric)
    expect_true(attr(g, "partition_stats")$partitioned, info = info)
    # (the exact search's order; R's own distances can order rows whose
    # distances tie to the last bits differently, so those are compared by
    # value)
    expect_identical(without_stats(g), extended_knn(X, k - 1, 0, nn_kind = "exact", metric = metric),
                     info = info)
    expect_equal(g$dist, ref_knn(X, k, metric)$dist, tolerance = 1e-12, info = info)
  }
})

test_that("cosine is partitioned; other metrics and data run the exact search", {
  set.seed(14)
  X <- clustered(1500, 8, n_clusters = 6)
  g <- partition_with_stats(X, 16, 100, metric = "cosine")
  expect_true(attr(g, "partition_stats")$partitioned)
  expect_identical(without_stats(g), extended_knn(X, 15, 0, nn_kind = "exact", metric = "cosine"))
  for (metric in c("correlation", "manhattan")) {
    g <- partition_with_stats(X, 16, 100, metric = metric)
    expect_false(attr(g, "partition_stats")$partitioned)
    expect_identical(without_stats(g), extended_knn(X, 15, 0, nn_kind = "exact", metric = metric))
  }
  # a zero row under cosine has no direction: the exact search runs
  X0 <- X
  X0[5, ] <- 0
  g <- partition_with_stats(X0, 16, 100, metric = "cosine")
  expect_false(attr(g, "partition_stats")$partitioned)
  expect_identical(without_stats(g), extended_knn(X0, 15, 0, nn_kind = "exact", metric = "cosine"))
  # data far beyond the double range of squared distances
  expect_identical(extended_knn(X * 2^400, 10, 0, nn_kind = "partition",
                                nn_args = list(rows_per_partition = 100)),
                   extended_knn(X * 2^400, 10, 0, nn_kind = "exact"))
  # hamming, and sparse data (said under verbose)
  B <- matrix(rbinom(400 * 20, 1, 0.3), 400)
  expect_identical(extended_knn(B, 8, 0, nn_kind = "partition", metric = "hamming"),
                   extended_knn(B, 8, 0, nn_kind = "exact", metric = "hamming"))
  S <- Matrix::rsparsematrix(300, 40, 0.02)
  said <- capture_messages(g <- extended_knn(S, 8, 0, nn_kind = "partition", verbose = TRUE))
  expect_match(said, "partition kNN: sparse data: the exact search runs", all = FALSE)
  expect_identical(g, extended_knn(S, 8, 0, nn_kind = "exact"))
  # data far from the origin (float products cancel; the bound is in double)
  Y <- clustered(1200, 6, n_clusters = 5) / 3 + 1e6
  expect_identical(extended_knn(Y, 10, 0, nn_kind = "partition",
                                nn_args = list(rows_per_partition = 80)),
                   extended_knn(Y, 10, 0, nn_kind = "exact"))
})

test_that("the partitioned search runs through locally_scaled_knn() and reports under verbose", {
  set.seed(15)
  X <- clustered(1200, 5, n_clusters = 8)
  args <- partition_control(rows_per_partition = 100, n_iters = 0)
  expect_identical(locally_scaled_knn(X, 10, n_extra = 10, nn_kind = "partition", nn_args = args),
                   locally_scaled_knn(X, 10, n_extra = 10, nn_kind = "exact"))
  res <- extended_knn(X, 10, 0, nn_kind = "partition", nn_args = args, ret_index = TRUE)
  expect_identical(res$enn, extended_knn(X, 10, 0, nn_kind = "exact"))
  said <- capture_messages(extended_knn(X, 10, 0, nn_kind = "partition", nn_args = args,
                                        verbose = TRUE))
  expect_match(said, "partition kNN: 1200 rows.*rows proved", all = FALSE)
  # two rows, and one neighbour
  expect_identical(extended_knn(X[1:2, ], 5, 0, nn_kind = "partition",
                                nn_args = list(rows_per_partition = 1)),
                   extended_knn(X[1:2, ], 5, 0, nn_kind = "exact"))
  expect_identical(extended_knn(X, 1, 0, nn_kind = "partition", nn_args = args),
                   extended_knn(X, 1, 0, nn_kind = "exact"))
  # the seed changes the partition, never the graph
  g1 <- extended_knn(X, 10, 0, nn_kind = "partition", nn_args = args, seed = 1)
  expect_identical(g1, extended_knn(X, 10, 0, nn_kind = "partition", nn_args = args, seed = 2))
})

test_that("partition settings are checked", {
  expect_s3_class(partition_control(), "lsnn_partition_control")
  expect_output(print(partition_control()), "rows_per_partition 1024")
  expect_error(partition_control(rows_per_partition = 0), "rows_per_partition")
  expect_error(partition_control(n_iters = -1), "n_iters")
  X <- matrix(runif(200), 50)
  expect_error(extended_knn(X, 5, 0, nn_kind = "partition", nn_args = list(n_trees = 3)),
               "unknown settings for nn_kind = \"partition\": n_trees")
  expect_error(extended_knn(X, 5, 0, nn_kind = "partition", nn_args = 3), "partition_control")
  expect_error(extended_knn(X, 5, 0, nn_kind = "partitions"), "\"partition\"")
})

test_that("LsnnParam(nn_kind = \"partition\") searches and queries as the exact kind", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(17)
  X <- clustered(400, 5)
  part <- LsnnParam(kind = "knn", nn_kind = "partition")
  exact <- LsnnParam(kind = "knn", nn_kind = "exact")
  expect_identical(BiocNeighbors::findKNN(X, k = 8, BNPARAM = part),
                   BiocNeighbors::findKNN(X, k = 8, BNPARAM = exact))
  expect_identical(BiocNeighbors::queryKNN(X[1:300, ], X[301:400, ], k = 6, BNPARAM = part),
                   BiocNeighbors::queryKNN(X[1:300, ], X[301:400, ], k = 6, BNPARAM = exact))
  expect_error(LsnnParam(nn_kind = "nope"), "\"partition\"")
})

test_that("the forecast of the partitioned search's work follows the data, and draws no random numbers", {
  set.seed(23)
  X <- clustered(6000, 20, n_clusters = 30, spread = 0.3)
  U <- matrix(runif(6000 * 20), 6000)
  share <- function(X, k = 30) {
    data <- lsnn:::prepare_data(X, "euclidean")
    .partition_work_share <- get(".partition_work_share", asNamespace("lsnn"))
    .partition_work_share(data, k, "euclidean", 200L, 5L, c(0L, 0L), 2L, lsnn:::simd_option())
  }
  # clusters: little beyond the clusters themselves; uniform rows: every pair
  expect_lt(share(X), 0.25)
  expect_gt(share(U), 0.9)
  # the same forecast for any number of threads
  data <- lsnn:::prepare_data(X, "euclidean")
  f <- get(".partition_work_share", asNamespace("lsnn"))
  expect_identical(f(data, 30L, "euclidean", 200L, 5L, c(0L, 0L), 1L, lsnn:::simd_option()),
                   f(data, 30L, "euclidean", 200L, 5L, c(0L, 0L), 2L, lsnn:::simd_option()))
  # data the partitioned search does not serve forecast the whole work
  expect_identical(f(lsnn:::prepare_data(Matrix::rsparsematrix(300, 20, 0.2), "euclidean"), 10L,
                     "euclidean", 50L, 5L, c(0L, 0L), 2L, lsnn:::simd_option()), 1)
  # the choice of search: exact up to 20,000 rows; then the partitioned one
  # where the forecast is cheap, the approximate one where it is not
  search_kind <- lsnn:::search_kind
  expect_identical(search_kind(20000), "exact")
  expect_identical(search_kind(25000), "approx")
  big <- lsnn:::prepare_data(clustered(25000, 10, n_clusters = 30), "euclidean")
  seed_before <- .Random.seed
  expect_identical(search_kind(25000, big, 30, "euclidean", 2L), "partition")
  expect_identical(.Random.seed, seed_before)
  expect_identical(search_kind(25000, big, 30, "manhattan", 2L), "approx")
  wide <- list(kind = "dense", n = 25000, d = 101L)
  expect_identical(search_kind(25000, wide, 30, "euclidean", 2L), "approx")
  # rows without clusters but of high intrinsic dimension, where the descent
  # is slow: the partitioned search
  set.seed(8)
  flat <- lsnn:::prepare_data(matrix(runif(25000 * 30), ncol = 30), "euclidean")
  expect_gt(lsnn:::partition_forecast(flat, 30L, "euclidean", 2L), 0.25)
  expect_identical(search_kind(25000, flat, 30, "euclidean", 2L), "partition")
})

test_that("the intrinsic dimension estimate tells flat data from full", {
  id <- function(X, metric = "euclidean", n_threads = 2L) {
    lsnn:::intrinsic_dimension(lsnn:::prepare_data(X, metric), metric, n_threads)
  }
  set.seed(9)
  full <- matrix(rnorm(5000 * 12), ncol = 12)
  flat <- matrix(rnorm(5000 * 3), ncol = 3) %*% matrix(rnorm(3 * 40), 3)
  expect_gt(id(full), 8)
  expect_lt(id(full), 14)
  expect_gt(id(flat), 2)
  expect_lt(id(flat), 4)
  expect_identical(id(full, n_threads = 1L), id(full, n_threads = 2L))
  # duplicated rows and a zero row under cosine leave it finite
  dup <- rbind(flat, flat[1:2000, ])
  expect_true(is.finite(id(dup)))
  zero <- full
  zero[5, ] <- 0
  expect_true(is.finite(id(zero, "cosine")))
  expect_identical(id(matrix(1, 50, 3)), 0)
  expect_identical(lsnn:::intrinsic_dimension(list(kind = "sparse"), "euclidean", 1L), 0)
})
