# The `seed` argument: the result depends on the seed alone, for any number
# of threads and in a new R process, and R's generator is left as it was.

test_that("seed makes results reproducible without touching R's generator", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  set.seed(11)
  before <- .Random.seed
  a <- neighbor_embedding(X, "umap", max_iter = 50, seed = 3)
  expect_identical(.Random.seed, before)
  b <- neighbor_embedding(X, "umap", max_iter = 50, seed = 3, n_threads = 2)
  expect_identical(a, b)
  expect_false(identical(neighbor_embedding(X, "umap", max_iter = 50, init = "random", seed = 3),
                         neighbor_embedding(X, "umap", max_iter = 50, init = "random", seed = 4)))
  expect_identical(.Random.seed, before)
  # with seed = NULL, set.seed() still decides
  set.seed(5)
  c1 <- neighbor_embedding(X, "pacmap", max_iter = 30)
  set.seed(5)
  c2 <- neighbor_embedding(X, "pacmap", max_iter = 30)
  expect_identical(c1, c2)
  before <- .Random.seed
  expect_identical(neighbor_embedding(X, "pacmap", max_iter = 30, seed = 9),
                   neighbor_embedding(X, "pacmap", max_iter = 30, seed = 9, n_threads = 2))
  g1 <- extended_knn(X, 10, 5, nn_kind = "approx", seed = 2)
  expect_identical(g1, extended_knn(X, 10, 5, nn_kind = "approx", seed = 2, n_threads = 2))
  expect_identical(locally_scaled_knn(X, 10, nn_kind = "approx", seed = 2),
                   locally_scaled_knn(X, 10, nn_kind = "approx", seed = 2))
  fit <- neighbor_embedding(X[1:100, ], "umap", ret_model = TRUE, max_iter = 50, seed = 1)
  expect_identical(neighbor_embedding_transform(X[101:120, ], fit$model, seed = 7),
                   neighbor_embedding_transform(X[101:120, ], fit$model, seed = 7))
  expect_identical(.Random.seed, before)
  expect_error(neighbor_embedding(X, seed = 1.5), "'seed' must be a single whole number")
  expect_error(extended_knn(X, 5, seed = "a"), "'seed'")
})

test_that("the same seed gives the same layout in a new R process", {
  skip_if_quick()
  skip_on_cran()
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  here <- neighbor_embedding(X, "tsne", perplexity = 10, max_iter = 100, stop_lying_iter = 50,
                             seed = 21)
  out <- tempfile(fileext = ".rds")
  code <- sprintf(paste0(
    "X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4]); set.seed(99); ",
    "saveRDS(lsnn::neighbor_embedding(X, 'tsne', perplexity = 10, max_iter = 100, stop_lying_iter = 50, ",
    "seed = 21, n_threads = 2), '%s')"), out)
  status <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)),
                    env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")),
                    stdout = FALSE, stderr = FALSE)
  expect_identical(status, 0L)
  expect_identical(readRDS(out), here)
})
