# The quality measures against plain-R brute force over full distance
# matrices: ranks by (distance, row number), every triplet and pair.

bf_dist <- ref_dist  # helper-reference.R

# R[i, j]: rank of j among the points other than i (1 = nearest), 0 for j = i.
bf_ranks <- function(D) {
  n <- nrow(D)
  R <- matrix(0L, n, n)
  for (i in seq_len(n)) {
    others <- seq_len(n)[-i]
    R[i, others[order(D[i, others], others)]] <- seq_len(n - 1)
  }
  R
}

bf_quality <- function(X, Y, k, rows = seq_len(nrow(X)), metric = "euclidean") {
  n <- nrow(X)
  RX <- bf_ranks(bf_dist(X, metric))
  RY <- bf_ranks(bf_dist(Y))
  near <- function(R, i) which(R[i, ] >= 1 & R[i, ] <= k)
  np <- mean(vapply(seq_len(n), function(i) length(intersect(near(RX, i), near(RY, i))) / k, 0))
  norm <- 2 / (length(rows) * k * (2 * n - 3 * k - 1))
  tp <- sum(vapply(rows, function(i) sum(RX[i, setdiff(near(RY, i), near(RX, i))] - k), 0))
  cp <- sum(vapply(rows, function(i) sum(RY[i, setdiff(near(RX, i), near(RY, i))] - k), 0))
  c(np = np, trust = 1 - norm * tp, cont = 1 - norm * cp)
}

bf_triplets <- function(X, Y, metric = "euclidean") {
  DX <- bf_dist(X, metric)
  DY <- bf_dist(Y)
  n <- nrow(DX)
  kept <- 0
  total <- 0
  for (i in seq_len(n)) {
    p <- combn(seq_len(n)[-i], 2)
    kept <- kept + sum(sign(DX[i, p[1, ]] - DX[i, p[2, ]]) == sign(DY[i, p[1, ]] - DY[i, p[2, ]]))
    total <- total + ncol(p)
  }
  kept / total
}

bf_spearman <- function(X, Y, metric = "euclidean") {
  DX <- bf_dist(X, metric)
  DY <- bf_dist(Y)
  lt <- lower.tri(DX)
  cor(DX[lt], DY[lt], method = "spearman")
}

quality_fixture <- function(n = 70, d = 6, seed = 1) {
  set.seed(seed)
  X <- matrix(rnorm(n * d), n)
  Y <- X[, 1:2] + matrix(rnorm(n * 2, sd = 0.4), n)
  list(X = X, Y = Y)
}

test_that("neighbour preservation, trustworthiness and continuity equal brute force", {
  f <- quality_fixture()
  n <- nrow(f$X)
  for (k in c(1, 5, 15, 34)) {
    ref <- bf_quality(f$X, f$Y, k)
    expect_equal(neighbor_preservation(f$X, f$Y, k), ref[["np"]], tolerance = 1e-12)
    expect_equal(trustworthiness(f$X, f$Y, k), ref[["trust"]], tolerance = 1e-12)
    expect_equal(continuity(f$X, f$Y, k), ref[["cont"]], tolerance = 1e-12)
  }
  expect_equal(neighbor_preservation(f$X, f$Y, n - 1), 1)
  expect_equal(trustworthiness(f$X, f$X[, 6:1] * 3, 10), 1)
  expect_equal(continuity(f$X, f$X, 10), 1)
})

test_that("ranks with many ties follow the row numbers, as the brute force", {
  set.seed(2)
  X <- matrix(sample(0:2, 80 * 3, replace = TRUE), 80)   # duplicates and equal distances
  Y <- matrix(sample(0:4, 80 * 2, replace = TRUE), 80)
  for (k in c(3, 10)) {
    ref <- bf_quality(X, Y, k)
    expect_equal(neighbor_preservation(X, Y, k), ref[["np"]], tolerance = 1e-12)
    expect_equal(trustworthiness(X, Y, k), ref[["trust"]], tolerance = 1e-12)
    expect_equal(continuity(X, Y, k), ref[["cont"]], tolerance = 1e-12)
  }
  expect_equal(random_triplet_accuracy(X, Y), bf_triplets(X, Y), tolerance = 1e-12)
  expect_equal(distance_correlation(X, Y), bf_spearman(X, Y), tolerance = 1e-12)
})

test_that("the embedding's neighbours (k-d tree in 2-D and 3-D) are those of the exact search", {
  set.seed(6)
  for (d in c(1, 2, 3, 4)) {
    Z <- matrix(round(runif(1500 * d) * 12), ncol = d)   # a grid: duplicates and ties
    g <- extended_knn(Z, 9, 0, nn_kind = "exact")
    expect_identical(neighbor_preservation(g, Z, k = 9), 1)
  }
  Z <- matrix(0, 40, 2)                                   # all points equal
  expect_identical(neighbor_preservation(extended_knn(Z, 5, 0, nn_kind = "exact"), Z, k = 5), 1)
})

test_that("other metrics in X, and zero rows under cosine", {
  f <- quality_fixture(n = 50)
  X <- f$X
  X[c(3, 17), ] <- 0
  for (metric in c("manhattan", "cosine")) {
    ref <- bf_quality(X, f$Y, 6, metric = metric)
    expect_equal(neighbor_preservation(X, f$Y, 6, metric = metric), ref[["np"]], tolerance = 1e-12)
    expect_equal(trustworthiness(X, f$Y, 6, metric = metric), ref[["trust"]], tolerance = 1e-12)
    expect_equal(continuity(X, f$Y, 6, metric = metric), ref[["cont"]], tolerance = 1e-12)
    expect_equal(random_triplet_accuracy(X, f$Y, metric = metric), bf_triplets(X, f$Y, metric),
                 tolerance = 1e-12)
    expect_equal(distance_correlation(X, f$Y, metric = metric), bf_spearman(X, f$Y, metric),
                 tolerance = 1e-12)
  }
})

test_that("data frames and sparse matrices give the same values as matrices", {
  f <- quality_fixture(n = 40)
  X <- f$X
  X[abs(X) < 0.8] <- 0
  ref <- embedding_quality(X, f$Y, k = 5)
  expect_equal(embedding_quality(as.data.frame(X), as.data.frame(f$Y), k = 5), ref)
  expect_equal(embedding_quality(Matrix::Matrix(X, sparse = TRUE), f$Y, k = 5), ref,
               tolerance = 1e-12)
})

test_that("a graph stands for the data in neighbour preservation", {
  f <- quality_fixture()
  enn <- extended_knn(f$X, n_neighbors = 20, n_extra = 5, nn_kind = "exact")
  expect_equal(neighbor_preservation(enn, f$Y, 10), neighbor_preservation(f$X, f$Y, 10))
  # An LSNN graph: its columns 2 to k + 1 are the input neighbours.
  ls <- enn_to_lsnn(enn, 11)
  RY <- bf_ranks(bf_dist(f$Y))
  ref <- mean(vapply(seq_len(nrow(f$X)), function(i)
    length(intersect(ls$idx[i, -1], which(RY[i, ] >= 1 & RY[i, ] <= 10))) / 10, 0))
  expect_equal(neighbor_preservation(ls, f$Y, 10), ref, tolerance = 1e-12)
  expect_equal(embedding_quality(f$X, f$Y, k = 10, nn = enn)$neighbor_preservation,
               neighbor_preservation(f$X, f$Y, 10))
  # uwot's ret_nn output: a list of graphs named by metric.
  expect_equal(neighbor_preservation(list(euclidean = enn), f$Y, 10),
               neighbor_preservation(f$X, f$Y, 10))
})

test_that("trustworthiness and continuity on a sample use all points for the ranks", {
  f <- quality_fixture(n = 90)
  set.seed(5)
  rows <- sort(sample.int(90, 25))
  ref <- bf_quality(f$X, f$Y, 8, rows = rows)
  set.seed(5)
  expect_equal(trustworthiness(f$X, f$Y, 8, n_points = 25), ref[["trust"]], tolerance = 1e-12)
  set.seed(5)
  expect_equal(continuity(f$X, f$Y, 8, n_points = 25), ref[["cont"]], tolerance = 1e-12)
  # n_points >= n evaluates every point without touching the generator.
  set.seed(9)
  before <- .Random.seed
  expect_equal(trustworthiness(f$X, f$Y, 8, n_points = 90), bf_quality(f$X, f$Y, 8)[["trust"]],
               tolerance = 1e-12)
  expect_identical(.Random.seed, before)
})

test_that("triplets and pairs: all of them exactly, a sample reproducibly and near the exact value", {
  f <- quality_fixture(n = 60)
  exact_t <- bf_triplets(f$X, f$Y)
  exact_s <- bf_spearman(f$X, f$Y)
  set.seed(3)
  before <- .Random.seed
  expect_equal(random_triplet_accuracy(f$X, f$Y), exact_t, tolerance = 1e-12)
  expect_equal(random_triplet_accuracy(f$X, f$Y, n_triplets = 60 * 59 * 58 / 2), exact_t,
               tolerance = 1e-12)
  expect_equal(distance_correlation(f$X, f$Y), exact_s, tolerance = 1e-12)
  expect_identical(.Random.seed, before)

  set.seed(4)
  a <- random_triplet_accuracy(f$X, f$Y, n_triplets = 40000)
  set.seed(4)
  expect_identical(random_triplet_accuracy(f$X, f$Y, n_triplets = 40000), a)
  expect_lt(abs(a - exact_t), 5 * 0.5 / sqrt(40000))
  set.seed(5)
  expect_false(identical(random_triplet_accuracy(f$X, f$Y, n_triplets = 40000), a))

  set.seed(4)
  r <- distance_correlation(f$X, f$Y, n_pairs = 1500)
  set.seed(4)
  expect_identical(distance_correlation(f$X, f$Y, n_pairs = 1500), r)
  expect_lt(abs(r - exact_s), 0.05)
})

test_that("results do not depend on the number of threads", {
  f <- quality_fixture(n = 300, d = 10)
  set.seed(1)
  one <- embedding_quality(f$X, f$Y, k = 10, n_points = 100, n_triplets = 1e5, n_pairs = 1e4)
  set.seed(1)
  two <- embedding_quality(f$X, f$Y, k = 10, n_points = 100, n_triplets = 1e5, n_pairs = 1e4,
                           n_threads = 2)
  expect_identical(one, two)
})

test_that("embedding_quality() is one row of the separate measures, ready for rbind", {
  f <- quality_fixture()
  q <- embedding_quality(f$X, f$Y, k = 7)
  expect_s3_class(q, "data.frame")
  expect_identical(names(q), c("n", "k", "neighbor_preservation", "trustworthiness",
                               "continuity", "random_triplet_accuracy", "distance_correlation"))
  expect_equal(nrow(q), 1)
  expect_identical(q$neighbor_preservation, neighbor_preservation(f$X, f$Y, 7))
  expect_identical(q$trustworthiness, trustworthiness(f$X, f$Y, 7))
  expect_identical(q$continuity, continuity(f$X, f$Y, 7))
  expect_identical(q$random_triplet_accuracy, random_triplet_accuracy(f$X, f$Y))
  expect_identical(q$distance_correlation, distance_correlation(f$X, f$Y))
  tab <- do.call(rbind, list(q, embedding_quality(f$X, f$X[, 1:2], k = 7)))
  expect_equal(nrow(tab), 2)
})

test_that("bad input stops with a message naming the argument", {
  f <- quality_fixture(n = 30)
  X <- f$X
  Y <- f$Y
  expect_error(neighbor_preservation(X, Y[-1, ]), "'Y' must have one row per row of 'X' \\(30\\)")
  expect_error(neighbor_preservation(X, Y, k = 30), "'k' must be at most 29")
  expect_error(neighbor_preservation(X, Y, k = 0), "'k' must be at least 1")
  expect_error(trustworthiness(X, Y, k = 15), "'k' must be at most 14")
  expect_error(continuity(X, Y, k = 2.5), "'k' must be a single whole number")
  expect_error(trustworthiness(X, Y, k = 5, n_points = 0), "'n_points' must be at least 1")
  expect_error(random_triplet_accuracy(X, Y, n_triplets = -1), "'n_triplets' must be a whole")
  expect_error(distance_correlation(X, Y, n_pairs = 1e9), "'n_pairs' must be at most")
  expect_error(distance_correlation(X, Y, n_pairs = NA), "'n_pairs'")
  Y2 <- Y
  Y2[4, 1] <- NA
  expect_error(trustworthiness(X, Y2, k = 5), "'Y' contains 1 NA")
  expect_error(neighbor_preservation(X, "a"), "'Y' must be a numeric matrix")
  expect_error(neighbor_preservation(X, Matrix::Matrix(Y, sparse = TRUE)), "'Y' must be a dense")
  expect_error(neighbor_preservation(X, Y, metric = "cheb"), "'metric' must be one of")
  expect_error(neighbor_preservation(letters, Y), "'X' must be a numeric matrix")
  g <- extended_knn(X, 5, 0, nn_kind = "exact")
  expect_error(neighbor_preservation(g, Y, k = 6), "'X' has 6 columns; k = 6 needs k \\+ 1 = 7")
  expect_error(trustworthiness(g, Y), "'X' must be the data, not a graph")
  expect_error(embedding_quality(g, Y), "takes one as 'nn'")
  expect_error(embedding_quality(X, Y, k = 6, nn = g), "'nn' has 6 columns")
  expect_error(embedding_quality(X, Y, k = 5, nn = extended_knn(X[-1, ], 5, 0, nn_kind = "exact")),
               "'nn' has 29 rows but 'X' has 30")
  expect_error(random_triplet_accuracy(X[1:2, ], Y[1:2, ]), "at least 3 rows")
  expect_warning(r <- distance_correlation(X, matrix(1, 30, 2)), "undefined")
  expect_true(is.na(r))
})
