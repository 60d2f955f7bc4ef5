# Cases of issue 51 that were silently wrong or told the user of internals:
# `seed` and the call's own arguments, options read without a check, other
# packages' warnings, messages about defaults the user did not give, empty
# Bioconductor queries, logical sparse matrices.

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
