# The exact principal components (pca_scores(), inst/include/lsnn/pca.h),
# the irlba way for sparse or wide data, and PaCMAP's reduction through them.

# Largest difference between the first `m` score columns of `res` and of
# prcomp(), each prcomp column signed as res's, relative to the largest score.
prcomp_gap <- function(res, X, m) {
  ref <- stats::prcomp(X)$x[, seq_len(m), drop = FALSE]
  got <- res$scores[, seq_len(m), drop = FALSE]
  ref <- sweep(ref, 2, ifelse(colSums(ref * got) < 0, -1, 1), "*")
  max(abs(got - ref)) / max(abs(ref))
}

test_that("scores equal prcomp()'s up to sign", {
  set.seed(1)
  X <- matrix(rnorm(60 * 8), 60, 8) %*% matrix(rnorm(64), 8, 8)
  res <- lsnn:::pca_scores(X, 3)
  expect_named(res, c("center", "rotation", "scores", "variance"))
  expect_equal(dim(res$rotation), c(8, 3))
  expect_equal(dim(res$scores), c(60, 3))
  expect_equal(res$center, colMeans(X))
  expect_lt(prcomp_gap(res, X, 3), 1e-8)
  expect_equal(res$variance, stats::prcomp(X)$sdev[1:3]^2, tolerance = 1e-10)

  # offset data: the centring happens before the products
  Xo <- X + 1e4
  expect_lt(prcomp_gap(lsnn:::pca_scores(Xo, 3), Xo, 3), 1e-8)

  # more columns than rows: 14 components carry the variance, the rest none
  Xw <- matrix(rnorm(15 * 40), 15, 40)
  expect_lt(prcomp_gap(lsnn:::pca_scores(Xw, 10), Xw, 10), 1e-8)
  all_w <- lsnn:::pca_scores(Xw, 40)
  expect_lt(prcomp_gap(all_w, Xw, 14), 1e-8)
  expect_lt(max(abs(all_w$scores[, 15:40])), 1e-8 * max(abs(all_w$scores)))
  expect_lt(max(all_w$variance[15:40]), 1e-12 * all_w$variance[1])
  expect_equal(crossprod(all_w$rotation), diag(40), tolerance = 1e-10)

  # constant columns, and as many components as columns
  Xc <- matrix(runif(50 * 6), 50, 6)
  Xc[, 2] <- 3
  Xc[, 5] <- 0
  res_c <- lsnn:::pca_scores(Xc, 6)
  expect_lt(prcomp_gap(res_c, Xc, 4), 1e-8)
  expect_lt(max(abs(res_c$scores[, 5:6])), 1e-12)
  expect_equal(res_c$variance[5:6], c(0, 0), tolerance = 1e-12)
  expect_equal(crossprod(res_c$rotation), diag(6), tolerance = 1e-10)
  expect_equal(abs(res_c$rotation[2, 1:4]), rep(0, 4), tolerance = 1e-12)
  expect_lt(prcomp_gap(lsnn:::pca_scores(Xc[, -c(2, 5)], 4), Xc[, -c(2, 5)], 4), 1e-8)
})

test_that("each component's largest score is positive", {
  set.seed(2)
  X <- matrix(rnorm(80 * 5), 80, 5)
  for (k in c(1, 5)) {
    s <- lsnn:::pca_scores(X, k)$scores
    expect_true(all(apply(s, 2, function(v) v[which.max(abs(v))] > 0)))
  }
})

test_that("results are identical for any number of threads", {
  set.seed(3)
  # several batches of rows and several panels of the covariance
  X <- matrix(rnorm(4500 * 70), 4500, 70) %*% matrix(rnorm(70 * 70), 70, 70)
  for (simd in c("auto", "generic")) {
    old <- options(lsnn.simd = simd)
    one <- lsnn:::pca_scores(X, 10, n_threads = 1)
    two <- lsnn:::pca_scores(X, 10, n_threads = 2)
    options(old)
    expect_identical(one, two)
  }
  expect_lt(prcomp_gap(one, X, 10), 1e-8)
})

test_that("the rotation projects the training rows onto their scores", {
  set.seed(4)
  X <- matrix(rnorm(300 * 25), 300, 25) + rep(runif(25, 0, 50), each = 300)
  res <- lsnn:::pca_scores(X, 7, n_threads = 2)
  projected <- sweep(X, 2, res$center) %*% res$rotation
  expect_lt(max(abs(projected - res$scores)), 1e-10 * max(abs(res$scores)))
  # new rows go through the same map
  X_new <- X[1:5, ] + 0.5
  expect_equal(sweep(X_new, 2, res$center) %*% res$rotation,
               res$scores[1:5, ] + matrix(0.5 * colSums(res$rotation), 5, 7, byrow = TRUE),
               tolerance = 1e-10)
})

test_that("bad arguments get errors that name them", {
  X <- matrix(runif(40), 10, 4)
  expect_error(lsnn:::pca_scores(X, 0), "'k' must be at least 1")
  expect_error(lsnn:::pca_scores(X, 5), "'k' must be at most 4")
  expect_error(lsnn:::pca_scores(X, 1.5), "'k' must be a single whole number")
  expect_error(lsnn:::pca_scores(X, NA), "'k' must be a single whole number")
  expect_error(lsnn:::pca_scores(X, "2"), "'k' must be a single whole number")
  expect_error(lsnn:::pca_scores(X, 2, n_threads = -1), "'n_threads'")
  expect_error(lsnn:::pca_scores(X, 2, verbose = NA), "'verbose'")
  X[3, 2] <- NaN
  expect_error(lsnn:::pca_scores(X, 2), "'X' contains 1 NA, NaN or infinite")
  expect_error(lsnn:::pca_scores(X[1, , drop = FALSE], 1), "'X' must have at least 2 rows")
  expect_error(lsnn:::pca_scores(Matrix::Matrix(diag(3), sparse = TRUE), 1), "'X' must be a dense matrix")
})

test_that("verbose runs report the share of the variance kept", {
  set.seed(5)
  X <- matrix(rnorm(200 * 10), 200, 10)
  expect_message(lsnn:::pca_scores(X, 10, verbose = TRUE), "10 components, 100% of the variance")
})

test_that("sparse data goes through irlba with the same conventions", {
  skip_if_not_installed("irlba")
  set.seed(6)
  # well separated leading variances, for irlba's tolerance
  X <- matrix(rnorm(300 * 40), 300, 40) %*% diag(c(10, 8, 6, 4, 2, rep(0.3, 35)))
  X[abs(X) < 0.5] <- 0
  sparse <- lsnn:::prepare_data(Matrix::Matrix(X, sparse = TRUE), "euclidean")
  expect_identical(sparse$kind, "sparse")
  by_irlba <- lsnn:::pca_components(sparse, 5, 1L, FALSE)
  exact <- lsnn:::pca_components(lsnn:::prepare_data(X, "euclidean"), 5, 1L, FALSE)
  expect_named(by_irlba, c("center", "rotation", "scores"))
  expect_named(exact, c("center", "rotation", "scores"))
  expect_equal(by_irlba$center, exact$center, tolerance = 1e-12)
  expect_equal(by_irlba$scores, exact$scores, tolerance = 1e-5)
  expect_equal(by_irlba$rotation, exact$rotation, tolerance = 1e-5)
  expect_error(lsnn:::pca_components(sparse, 40, 1L, FALSE, name = "pca"), "'pca' must be less than 40")
})

test_that("PaCMAP reduces wide data to principal components that project new rows", {
  set.seed(7)
  X <- matrix(rnorm(120 * 130), 120, 130)
  reduced <- lsnn:::reduce_by_pca(lsnn:::prepare_data(X, "euclidean"), 20, TRUE, "euclidean",
                                  2L, FALSE, "test")
  expect_equal(dim(reduced$pca$rotation), c(130, 20))
  Z <- lsnn:::dense_data(reduced$data)
  expect_lt(prcomp_gap(list(scores = Z), X, 20), 1e-8)
  expect_equal(lsnn:::pca_project(reduced$pca, X), Z, tolerance = 1e-10, ignore_attr = TRUE)

  res <- neighbor_embedding(X, method = "pacmap", phases = c(5, 5, 5), ret_model = TRUE,
                            n_threads = 2)
  expect_equal(dim(res$model$pca$rotation), c(130, 100))
  expect_equal(res$model$pca$center, colMeans(X))
})
