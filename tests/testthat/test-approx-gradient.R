# The approximate (grid interpolation + FFT) t-SNE gradient against the
# exact one, on a few hundred points.

approx_data <- function() {
  set.seed(1)
  X <- rbind(matrix(stats::rnorm(150 * 5), 150), matrix(stats::rnorm(150 * 5, mean = 4), 150))
  list(X = X, P = perplexity_affinities(X, perplexity = 20))
}

rel_err <- function(Y, P, method = "tsne", ...) {
  e <- cost_gradient(Y, P, method, gradient = "exact", ...)
  a <- cost_gradient(Y, P, method, gradient = "approx", ...)
  c(gradient = sqrt(sum((a$gradient - e$gradient)^2) / sum(e$gradient^2)),
    cost = abs(a$cost / e$cost - 1))
}

test_that("approximate t-SNE gradient and cost agree with the exact ones", {
  dat <- approx_data()
  n <- nrow(dat$X)
  withr_grid <- function(g, code) {
    old <- options(lsnn.grid = g)
    on.exit(options(old))
    code
  }
  for (d in 1:2) {
    # default grid (3 nodes per unit box): compact layouts
    for (s in c(1e-3, 0.1, 1)) {
      Y <- matrix(stats::rnorm(n * d, sd = s), n, d)
      err <- rel_err(Y, dat$P)
      expect_lt(err[["gradient"]], 1e-3)
      expect_lt(err[["cost"]], 1e-3)
    }
    # wide layouts: the default grid is within a few per cent, a finer grid
    # (7 nodes per box half a unit wide) within 1e-3
    Y <- matrix(stats::rnorm(n * d, sd = 5), n, d)
    err <- rel_err(Y, dat$P)
    expect_lt(err[["gradient"]], 2e-2)
    expect_lt(err[["cost"]], 1e-3)
    err <- withr_grid(c(7, 0.5, 20), rel_err(Y, dat$P))
    expect_lt(err[["gradient"]], 1e-3)
    expect_lt(err[["cost"]], 1e-3)
  }
  # a converged layout (the gradient is small there, the test strict)
  Yc <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 300, gradient = "exact")
  err <- withr_grid(c(7, 0.5, 20), rel_err(Yc, dat$P))
  expect_lt(err[["gradient"]], 1e-3)
  expect_lt(err[["cost"]], 1e-3)
  expect_lt(rel_err(Yc, dat$P)[["cost"]], 1e-2)
})

test_that("approximate gradient does not depend on n_threads", {
  dat <- approx_data()
  n <- nrow(dat$X)
  for (d in 1:2) {
    Y <- matrix(stats::rnorm(n * d, sd = 3), n, d)
    a1 <- cost_gradient(Y, dat$P, "tsne", gradient = "approx", n_threads = 1)
    a2 <- cost_gradient(Y, dat$P, "tsne", gradient = "approx", n_threads = 2)
    expect_identical(a1, a2)
  }
  Y1 <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 100, init = "pca",
                           stop_lying_iter = 50, gradient = "approx", n_threads = 1)
  Y2 <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 100, init = "pca",
                           stop_lying_iter = 50, gradient = "approx", n_threads = 2)
  expect_identical(Y1, Y2)
})

test_that("other methods and dimensions take the exact sum", {
  dat <- approx_data()
  n <- nrow(dat$X)
  Y3 <- matrix(stats::rnorm(n * 3), n, 3)
  expect_identical(cost_gradient(Y3, dat$P, "tsne", gradient = "approx"),
                   cost_gradient(Y3, dat$P, "tsne", gradient = "exact"))
  Y2 <- matrix(stats::rnorm(n * 2), n, 2)
  for (m in c("largevis", "umap", "tumap")) {
    expect_identical(cost_gradient(Y2, dat$P, m, gradient = "approx"),
                     cost_gradient(Y2, dat$P, m, gradient = "exact"))
  }
  expect_error(cost_gradient(Y2, dat$P, "tsne", gradient = "fast"), "gradient")
})

test_that("an approximate run reaches the exact run's cost", {
  dat <- approx_data()
  set.seed(2)
  ra <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 400, tol = 0,
                           gradient = "approx", ret_extra = TRUE)
  set.seed(2)
  re <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 400, tol = 0,
                           gradient = "exact", ret_extra = TRUE)
  expect_identical(ra$gradient, "approx")
  expect_identical(re$gradient, "exact")
  ca <- cost_gradient(ra$embedding, dat$P)$cost
  ce <- cost_gradient(re$embedding, dat$P)$cost
  # at 300 points two exact runs from different starts differ by a few per
  # cent (different local minima): the bound is loose
  expect_lt(abs(ca / ce - 1), 0.05)
  # the reported cost is the approximate KL of the final layout
  expect_equal(unname(utils::tail(ra$cost, 1)), ca, tolerance = 1e-2)
  # "auto" keeps the exact sum on small data
  ra <- neighbor_embedding(dat$X, "tsne", perplexity = 20, max_iter = 5, stop_lying_iter = 2,
                           ret_extra = TRUE)
  expect_identical(ra$gradient, "exact")
})
