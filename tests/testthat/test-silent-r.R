# Cases of issue 51 that were silently wrong or told the user of internals:
# `seed` and the call's own arguments, options read without a check, other
# packages' warnings, messages about defaults the user did not give, logical
# sparse matrices (empty Bioconductor queries: test-bioconductor.R).

test_that("seed leaves the call's own arguments to the caller's generator", {
  set.seed(100)
  X <- matrix(rnorm(1200), 200)
  # the rows the two calls draw differ, as they would without seed
  set.seed(5)
  rows_a <- sample(200, replace = TRUE)
  rows_b <- sample(200, replace = TRUE)
  state <- .Random.seed
  set.seed(5)
  a <- extended_knn(X[sample(200, replace = TRUE), ], 5, 0, nn_kind = "exact", seed = 1)
  b <- extended_knn(X[sample(200, replace = TRUE), ], 5, 0, nn_kind = "exact", seed = 1)
  expect_false(identical(a, b))
  expect_identical(a, extended_knn(X[rows_a, ], 5, 0, nn_kind = "exact"))
  expect_identical(b, extended_knn(X[rows_b, ], 5, 0, nn_kind = "exact"))
  # the caller's stream moved by the caller's draws alone
  expect_identical(.Random.seed, state)

  # each argument is evaluated once, in the caller's frame
  count <- 0
  data_of <- function() {
    count <<- count + 1
    X[1:50, ]
  }
  g <- extended_knn(data_of(), 5, 0, nn_kind = "approx", seed = 2)
  expect_identical(count, 1)
  expect_identical(g, extended_knn(X[1:50, ], 5, 0, nn_kind = "approx", seed = 2))

  # a random start drawn by the caller is the caller's; lsnn's own draws
  # still follow the seed alone
  Y0 <- matrix(rnorm(100), 50)
  s1 <- neighbor_embedding(X[1:50, ], "umap", init = Y0 + 0, max_iter = 20, seed = 4)
  set.seed(77)
  expect_identical(neighbor_embedding(X[1:50, ], "umap", init = Y0, max_iter = 20, seed = 4), s1)
  u1 <- neighbor_embedding(X[1:50, ], "umap", init = matrix(rnorm(100), 50), max_iter = 20,
                           seed = 4)
  u2 <- neighbor_embedding(X[1:50, ], "umap", init = matrix(rnorm(100), 50), max_iter = 20,
                           seed = 4)
  expect_false(identical(u1, u2))
})

test_that("seed keeps missing arguments missing and errors free of the data", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  idx <- extended_knn(X, 5, 0, nn_kind = "exact", ret_index = TRUE)$index
  expect_error(extended_knn_query(idx, X[1:3, ], seed = 1), "'n_neighbors' is missing")
  # a wrapper's own missing argument is missing here too
  wrap <- function(k) extended_knn_query(idx, X[1:3, ], k, seed = 1)
  expect_error(wrap(), "'n_neighbors' is missing")
  wrap_default <- function(k = 3) extended_knn_query(idx, X[1:3, ], k, nn_kind = "exact",
                                                     seed = 1)
  expect_identical(ncol(wrap_default()$idx), 3L)
  expect_error(neighbor_embedding_transform(X[1:3, ], seed = 1), "'model' is missing")
  # the call that runs holds the arguments' names, not their values
  err <- tryCatch(extended_knn(X, 5, 0, nn_kind = "exact", n_threads = "a", seed = 1),
                  error = function(e) e)
  expect_match(conditionMessage(err), "n_threads")
  expect_lt(nchar(paste(deparse(conditionCall(err)), collapse = "")), 300)
  # called by another name or through do.call()
  knn <- lsnn::extended_knn
  expect_identical(knn(X, 5, 0, seed = 3), extended_knn(X, 5, 0, seed = 3))
  expect_identical(do.call(extended_knn, list(X, 5, 0, seed = 3)), extended_knn(X, 5, 0, seed = 3))
  expect_identical(do.call("locally_scaled_knn", list(X = X, n_neighbors = 5, seed = 3)),
                   locally_scaled_knn(X, 5, seed = 3))
})

test_that("options are checked where they are read, by name", {
  skip_if_not_installed("Matrix")
  set.seed(2)
  S <- Matrix::rsparsematrix(60, 20, 0.3)
  for (bad in list(NA, "a", -1, c(1, 2), NA_real_)) {
    withr::local_options(lsnn.max_dense_bytes = bad)
    expect_error(extended_knn(S, 5, 0, nn_kind = "exact"), "option 'lsnn.max_dense_bytes'")
  }
  withr::local_options(lsnn.max_dense_bytes = 0)
  expect_identical(dim(extended_knn(S, 5, 0, nn_kind = "exact")$idx), c(60L, 6L))
  withr::local_options(lsnn.max_dense_bytes = Inf)
  expect_identical(dim(extended_knn(S, 5, 0, nn_kind = "exact")$idx), c(60L, 6L))

  Y <- matrix(rnorm(40), 20)
  P <- as.matrix(umap_affinities(Y, 5))
  P <- P / sum(P)
  for (name in c("lsnn.in_place_bytes", "lsnn.accurate_grid_points")) {
    for (bad in list("a", c(1, 2), NA, -5)) {
      local({
        withr::local_options(stats::setNames(list(bad), name))
        expect_error(cost_gradient(Y, P, gradient = "approx"), paste0("option '", name, "'"))
      })
    }
  }
  withr::local_options(lsnn.in_place_bytes = 0, lsnn.accurate_grid_points = 10)
  expect_true(is.finite(cost_gradient(Y, P, gradient = "approx")$cost))
  withr::local_options(lsnn.fashion_mnist = 3)
  expect_error(has_fashion_mnist(), "option 'lsnn.fashion_mnist'")
})

test_that("cost_gradient() without P names P", {
  Y <- matrix(rnorm(20), 10)
  expect_error(cost_gradient(Y), "'P' is missing")
  expect_error(cost_gradient(Y, method = "pacmap"), "'P' is missing")
})

test_that("other packages' warnings and messages do not reach the user", {
  skip_if_not_installed("irlba")
  skip_if_not_installed("Matrix")
  withr::local_options(warn = 2)
  set.seed(3)
  S <- Matrix::rsparsematrix(200, 150, 0.1)
  expect_no_warning(emb <- neighbor_embedding(S, "pacmap", max_iter = 20, seed = 1))
  expect_identical(dim(emb), c(200L, 2L))
  X <- matrix(rnorm(20 * 1100), 20)
  expect_no_warning(g <- extended_knn(X, 5, 0, pca = 10, nn_kind = "exact", ret_index = TRUE))
  # the components are those of the exact PCA: the same distances as base R's
  pc <- stats::prcomp(X, rank. = 10)$x
  expect_equal(g$enn$dist, extended_knn(pc, 5, 0, nn_kind = "exact")$dist, tolerance = 1e-8)
  expect_equal(crossprod(g$index$pca$rotation), diag(10), tolerance = 1e-10)
  # and for sparse data wider than it is long, not centred too
  W <- Matrix::rsparsematrix(30, 2000, 0.05)
  expect_no_warning(gw <- extended_knn(W, 4, 0, pca = 20, nn_kind = "exact"))
  expect_equal(gw$dist, extended_knn(stats::prcomp(as.matrix(W), rank. = 20)$x, 4, 0,
                                     nn_kind = "exact")$dist, tolerance = 1e-8)
  expect_no_warning(extended_knn(W, 4, 0, pca = 20, pca_center = FALSE, nn_kind = "exact"))
  # Matrix's "dimnames(.) <- NULL translated" message
  S2 <- Matrix::rsparsematrix(200, 150, 0.01)
  expect_no_message(res <- extended_knn(S2, 5, 0, nn_kind = "exact", ret_index = TRUE))
  expect_s3_class(res$index, "lsnn_index")
})

test_that("messages about defaults say what the user can change", {
  skip_if_not_installed("irlba")
  set.seed(4)
  # PaCMAP's default reduction fits data of few rows
  X <- matrix(rnorm(5 * 10000), 5)
  expect_identical(dim(neighbor_embedding(X, "pacmap", n_neighbors = 2, max_iter = 20,
                                          seed = 1)), c(5L, 2L))
  X <- matrix(rnorm(60 * 1100), 60)
  expect_identical(lsnn:::pacmap_default_pca(lsnn:::prepare_data(X, "euclidean")), 59L)
  # a user's own pca too large is still named
  expect_error(neighbor_embedding(X, "pacmap", pca = 100, seed = 1), "'pca'.*it is 100")
  # data whose squares overflow: rescaled exactly by a power of two
  Z <- matrix(rnorm(600), 100)
  ref <- extended_knn(Z, 5, 0, pca = 3, nn_kind = "exact")
  big <- extended_knn(Z * 2^1000, 5, 0, pca = 3, nn_kind = "exact")
  expect_identical(big$idx, ref$idx)
  expect_identical(big$dist, ref$dist * 2^1000)
  expect_identical(extended_knn(Z * 1e300, 5, 0, pca = 3, nn_kind = "exact")$idx, ref$idx)
  expect_identical(extended_knn(Z * 1e-300, 5, 0, pca = 3, nn_kind = "exact")$idx, ref$idx)
  # too few rows for the local scales: said in rows, the default named
  expect_error(locally_scaled_knn(Z[1:6, ], 3), "'X' has 6 rows.*'scale_to' \\(7 by default\\)")
  expect_error(locally_scaled_knn(Z[1:6, ], 3, scale_from = 2, scale_to = 8),
               "'X' has 6 rows.*'scale_to' \\(8\\)")
  expect_error(locally_scaled_knn(Z, 3, n_extra = 0), "raise 'n_extra'")
  expect_identical(dim(locally_scaled_knn(Z[1:6, ], 3, scale_from = 2, scale_to = 4)$idx),
                   c(6L, 3L))
})

test_that("logical sparse matrices are treated as dense logical ones", {
  skip_if_not_installed("Matrix")
  set.seed(5)
  B <- matrix(runif(40 * 12) < 0.3, 40)
  L <- methods::as(B, "lMatrix")
  L <- methods::as(methods::as(L, "generalMatrix"), "CsparseMatrix")
  expect_true(methods::is(L, "lsparseMatrix"))
  expect_error(extended_knn(B, 5, 0, nn_kind = "exact"), "logical")
  expect_error(extended_knn(L, 5, 0, nn_kind = "exact"), "logical.*dMatrix")
  expect_error(neighbor_embedding(L, "umap", max_iter = 10, seed = 1), "logical")
  expect_identical(extended_knn(L, 5, 0, nn_kind = "exact", metric = "hamming"),
                   extended_knn(B, 5, 0, nn_kind = "exact", metric = "hamming"))
  # numbers are still numbers
  D <- methods::as(L, "dMatrix")
  expect_identical(extended_knn(D, 5, 0, nn_kind = "exact"),
                   extended_knn(B + 0, 5, 0, nn_kind = "exact"))
})
