test_that("far-apart clusters stay apart in every method's embedding", {
  set.seed(31)
  fc <- far_clusters(n_per = 25, dim = 5, sep = 40)
  g <- exact_graph(fc$X, 15)
  for (m in c("tsne", "largevis")) {
    Y <- embed(fc$X, m, perplexity = 8, max_iter = 500)
    expect_true(clusters_apart(Y, fc$label), label = m)
  }
  for (m in c("umap", "tumap")) {
    Y <- embed(fc$X, m, nn = g, max_iter = 500)
    expect_true(clusters_apart(Y, fc$label), label = m)
  }
  Y <- embed(g, "tsne", perplexity = 5, max_iter = 500)
  expect_true(clusters_apart(Y, fc$label), label = "tsne on a graph")
  # UMAP on the data matrix: its own exact kNN graph
  Y <- embed(fc$X, "umap", n_neighbors = 10, max_iter = 500)
  expect_true(clusters_apart(Y, fc$label), label = "umap on data")
})

test_that("embed is reproducible with set.seed and does not depend on n_threads", {
  set.seed(32)
  X <- matrix(rnorm(120 * 4), 120, 4)
  g <- exact_graph(X, 10)
  for (init in c("random", "spectral")) {
    set.seed(7)
    Y1 <- embed(X, "tsne", perplexity = 10, init = init, max_iter = 120)
    set.seed(7)
    Y2 <- embed(X, "tsne", perplexity = 10, init = init, max_iter = 120, n_threads = 2)
    expect_identical(Y1, Y2)
  }
  set.seed(8)
  U1 <- embed(X, "umap", nn = g, init = "random", max_iter = 100)
  set.seed(8)
  U2 <- embed(X, "umap", nn = g, init = "random", max_iter = 100, n_threads = 2)
  expect_identical(U1, U2)
})

test_that("embed returns the extras and honours init, tol and n_components", {
  set.seed(33)
  X <- matrix(rnorm(60 * 3), 60, 3)
  rownames(X) <- paste0("p", 1:60)
  res <- embed(X, "tsne", perplexity = 10, max_iter = 100, epoch = 25, ret_extra = TRUE,
               init = "pca", tol = 0)
  expect_equal(dim(res$embedding), c(60L, 2L))
  expect_equal(rownames(res$embedding), rownames(X))
  expect_equal(names(res$cost), c("0", "25", "50", "75", "100"))
  expect_equal(res$iterations, 100L)
  expect_false(res$converged)
  expect_s4_class(res$P, "dgCMatrix")
  expect_equal(sum(res$P), 1)
  expect_named(res$time, c("affinities", "init", "optimize", "total"))
  # the reported final cost is that of the embedding
  expect_equal(unname(tail(res$cost, 1)), cost_gradient(res$embedding, res$P)$cost)
  # a matrix init is used as it is: 0 iterations return it
  Y0 <- matrix(rnorm(120), 60, 2)
  expect_equal(embed(X, "tsne", perplexity = 10, init = Y0, max_iter = 0), Y0,
               ignore_attr = TRUE)
  # the tolerance stops the run early
  res <- embed(X, "tsne", perplexity = 10, max_iter = 1000, tol = 0.5, ret_extra = TRUE,
               exaggeration = 1)
  expect_true(res$converged)
  expect_lt(res$iterations, 1000L)
  # three dimensions, and a data frame input
  Y3 <- embed(as.data.frame(X), "largevis", perplexity = 10, n_components = 3,
              max_iter = 50)
  expect_equal(dim(Y3), c(60L, 3L))
  # more components than the data has columns, from PCA
  Y4 <- embed(X, "tsne", perplexity = 10, n_components = 4, init = "pca", max_iter = 20)
  expect_equal(dim(Y4), c(60L, 4L))
  # the cost decreases for each method
  g <- exact_graph(X, 10)
  for (m in c("tsne", "largevis", "umap", "tumap")) {
    r <- embed(g, m, perplexity = 5, max_iter = 200, ret_extra = TRUE, tol = 0,
               init = "random", exaggeration = 1)
    expect_lt(unname(tail(r$cost, 1)), unname(r$cost[1]), label = m)
  }
})

test_that("embed reports progress when verbose", {
  set.seed(34)
  X <- matrix(rnorm(40 * 3), 40, 3)
  expect_message(embed(X, perplexity = 5, max_iter = 20, epoch = 10, verbose = TRUE),
                 "optimization: 20 iterations")
})

test_that("embed rejects bad input", {
  set.seed(35)
  X <- matrix(rnorm(40 * 3), 40, 3)
  g <- exact_graph(X, 8)
  Xna <- X
  Xna[2, 2] <- NA
  expect_error(embed(Xna), "NA")
  expect_error(embed(X, "pacmap"), "should be one of")
  expect_error(embed(X, perplexity = 40), "perplexity")
  expect_error(embed(X, init = matrix(0, 3, 2)), "40 x 2")
  expect_error(embed(g, perplexity = 5, init = "pca"), "data matrix")
  expect_error(embed(X, nn = X), "neighbour graph")
  expect_error(embed(X, nn = exact_graph(X[1:20, ], 5)), "rows")
  expect_error(embed(X, eta = -1), "eta")
  expect_error(embed(X, n_components = 0), "n_components")
  expect_error(embed(list(idx = 1, dist = 2)), "numeric matrix")
})
