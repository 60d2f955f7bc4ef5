test_that("far-apart clusters stay apart in every method's embedding", {
  set.seed(31)
  fc <- far_clusters(n_per = 25, dim = 5, sep = 40)
  g <- exact_graph(fc$X, 15)
  for (m in c("tsne", "largevis")) {
    Y <- neighbor_embedding(fc$X, m, perplexity = 8, max_iter = 500,
                            gradient = if (m == "largevis") "exact" else "auto")
    expect_true(clusters_apart(Y, fc$label), label = m)
  }
  for (m in c("umap", "tumap")) {
    for (gradient in c("auto", "exact")) {
      Y <- neighbor_embedding(fc$X, m, nn_method = g, max_iter = 500, gradient = gradient)
      expect_true(clusters_apart(Y, fc$label), label = paste(m, gradient))
    }
  }
  Y <- neighbor_embedding(nn_method = g, method = "tsne", perplexity = 5, max_iter = 500)
  expect_true(clusters_apart(Y, fc$label), label = "tsne on a graph")
  # UMAP on the data matrix: its own exact kNN graph
  Y <- neighbor_embedding(fc$X, "umap", n_neighbors = 10, max_iter = 500)
  expect_true(clusters_apart(Y, fc$label), label = "umap on data")
})

test_that("neighbor_embedding is reproducible with set.seed and does not depend on n_threads", {
  set.seed(32)
  X <- matrix(rnorm(120 * 4), 120, 4)
  g <- exact_graph(X, 10)
  for (init in c("random", "spectral")) {
    set.seed(7)
    Y1 <- neighbor_embedding(X, "tsne", perplexity = 10, init = init, max_iter = 120,
                             stop_lying_iter = 50)
    set.seed(7)
    Y2 <- neighbor_embedding(X, "tsne", perplexity = 10, init = init, max_iter = 120, n_threads = 2,
                             stop_lying_iter = 50)
    expect_identical(Y1, Y2)
  }
  set.seed(8)
  U1 <- neighbor_embedding(X, "umap", nn_method = g, init = "random", max_iter = 100)
  set.seed(8)
  U2 <- neighbor_embedding(X, "umap", nn_method = g, init = "random", max_iter = 100, n_threads = 2)
  expect_identical(U1, U2)
})

test_that("neighbor_embedding returns the extras and honours init, tol and n_components", {
  set.seed(33)
  X <- matrix(rnorm(60 * 3), 60, 3)
  rownames(X) <- paste0("p", 1:60)
  res <- neighbor_embedding(X, "tsne", perplexity = 10, max_iter = 100, epoch = 25, ret_extra = TRUE,
               stop_lying_iter = 50,
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
  expect_equal(neighbor_embedding(X, "tsne", perplexity = 10, init = Y0, max_iter = 0), Y0,
               ignore_attr = TRUE)
  # the tolerance stops the run early
  res <- neighbor_embedding(X, "tsne", perplexity = 10, max_iter = 1000, tol = 0.5, ret_extra = TRUE,
               exaggeration = 1)
  expect_true(res$converged)
  expect_lt(res$iterations, 1000L)
  # three dimensions, and a data frame input
  Y3 <- neighbor_embedding(as.data.frame(X), "largevis", perplexity = 10, n_components = 3,
              max_iter = 50, stop_lying_iter = 25)
  expect_equal(dim(Y3), c(60L, 3L))
  # more components than the data has columns, from PCA
  Y4 <- neighbor_embedding(X, "tsne", perplexity = 10, n_components = 4, init = "pca", max_iter = 20,
                           stop_lying_iter = 10)
  expect_equal(dim(Y4), c(60L, 4L))
  # the cost decreases for each method
  g <- exact_graph(X, 10)
  for (m in c("tsne", "largevis", "umap", "tumap")) {
    r <- neighbor_embedding(nn_method = g, method = m, perplexity = 5, max_iter = 200, ret_extra = TRUE, tol = 0,
               init = "random", exaggeration = 1, gradient = "exact")
    expect_lt(unname(tail(r$cost, 1)), unname(r$cost[1]), label = m)
  }
})

test_that("neighbor_embedding reports progress when verbose", {
  set.seed(34)
  X <- matrix(rnorm(40 * 3), 40, 3)
  expect_message(neighbor_embedding(X, perplexity = 5, max_iter = 20, epoch = 10,
                                    stop_lying_iter = 10, verbose = TRUE),
                 "optimization: 20 iterations")
})

test_that("neighbor_embedding rejects bad input", {
  set.seed(35)
  X <- matrix(rnorm(40 * 3), 40, 3)
  g <- exact_graph(X, 8)
  Xna <- X
  Xna[2, 2] <- NA
  expect_error(neighbor_embedding(Xna), "NA")
  expect_error(neighbor_embedding(X, "pca"), "^'method' must be one of")
  expect_error(neighbor_embedding(X, perplexity = 40), "perplexity")
  expect_error(neighbor_embedding(X, init = matrix(0, 3, 2)), "40 x 2")
  expect_error(neighbor_embedding(nn_method = g, perplexity = 5, init = "pca"),
               "needs the data as 'X'")
  expect_error(neighbor_embedding(X, nn_method = X), "'nn_method' must be a neighbour graph")
  expect_error(neighbor_embedding(X, nn_method = exact_graph(X[1:20, ], 5)), "rows")
  expect_error(neighbor_embedding(X, eta = -1), "eta")
  expect_error(neighbor_embedding(X, n_components = 0), "n_components")
  expect_error(neighbor_embedding(nn_method = list(idx = 1, dist = 2)), "numeric matrix")
  expect_error(neighbor_embedding(g), "'X' is a neighbour graph: pass it as 'nn_method'")
  expect_error(neighbor_embedding(), "give the data")
})

test_that("the deprecated embed() forwards stats-style calls and warns otherwise", {
  # stats::embed() calls are unchanged
  expect_identical(embed(1:5, 2), stats::embed(1:5, 2))
  expect_identical(embed(1:5), stats::embed(1:5))
  m <- matrix(1:10, 5)
  expect_identical(embed(m, dimension = 2), stats::embed(m, 2))
  expect_identical(embed(ts(1:6), 3), stats::embed(ts(1:6), 3))
  # the former lsnn calls run neighbor_embedding() with a warning
  set.seed(36)
  X <- matrix(rnorm(40 * 3), 40, 3)
  g <- exact_graph(X, 8)
  set.seed(1)
  Y <- neighbor_embedding(X, "tsne", perplexity = 5, max_iter = 20, stop_lying_iter = 10)
  set.seed(1)
  expect_warning(Y1 <- embed(X, "tsne", perplexity = 5, max_iter = 20,
                                  stop_lying_iter = 10), "neighbor_embedding")
  expect_identical(Y1, Y)
  set.seed(1)
  U <- neighbor_embedding(X, "umap", nn_method = g, max_iter = 20)
  set.seed(1)
  expect_warning(U1 <- embed(X, method = "umap", nn = g, max_iter = 20), "deprecated")
  expect_identical(U1, U)
  set.seed(1)
  U <- neighbor_embedding(nn_method = g, method = "umap", max_iter = 20)
  set.seed(1)
  expect_warning(U1 <- embed(g, "umap", max_iter = 20), "deprecated")
  expect_identical(U1, U)
})

test_that("attaching lsnn reports no masking of stats::embed", {
  skip_if_quick()  # (a child R process)
  # a fresh R with this test's library paths, so that the lsnn under test is
  # the one attached
  rscript <- file.path(R.home("bin"), "Rscript")
  skip_if_not(file.exists(rscript))
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(rscript, c("-e", shQuote("library(lsnn); cat('attached')")),
                                  stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", shQuote(libs))))
  expect_true(any(grepl("attached", out)))
  expect_false(any(grepl("masked", out)), label = paste(out, collapse = "\n"))
})

test_that("UMAP and t-UMAP default to the measured step size and descend their cost", {
  set.seed(33)
  fc <- far_clusters(n_per = 40, dim = 5, sep = 10)
  g <- exact_graph(fc$X, 15)
  for (m in c("umap", "tumap")) {
    set.seed(9)
    r <- neighbor_embedding(method = m, nn_method = g, max_iter = 300, tol = 0,
                            ret_extra = TRUE, gradient = "exact")
    expect_identical(r$eta, 0.03)
    # the exact cost of the final layout: the reported one, far below the start's
    final <- cost_gradient(r$embedding, r$P, m, a = r$a, b = r$b, eps = r$eps)$cost
    expect_equal(unname(r$cost[length(r$cost)]), final, tolerance = 1e-10)
    expect_lt(final, 0.5 * r$cost[[1]])
    # a step size ten times smaller ends higher after as many iterations
    set.seed(9)
    s <- neighbor_embedding(method = m, nn_method = g, max_iter = 300, tol = 0, eta = 0.003,
                            ret_extra = TRUE, gradient = "exact")
    expect_lt(final, unname(s$cost[length(s$cost)]))
    # the same layout on two threads
    set.seed(9)
    Y2 <- neighbor_embedding(method = m, nn_method = g, max_iter = 300, tol = 0, n_threads = 2,
                             gradient = "exact")
    expect_identical(unname(r$embedding), unname(Y2))
  }
})

test_that("negative sampling separates clusters, reproducibly and for any n_threads", {
  set.seed(41)
  fc <- far_clusters(n_per = 60, dim = 5, sep = 40)
  g <- exact_graph(fc$X, 15)
  for (m in c("umap", "tumap", "largevis")) {
    set.seed(9)
    r1 <- neighbor_embedding(fc$X, m, nn_method = g, perplexity = 5, gradient = "sampled",
                             max_iter = 200, ret_extra = TRUE)
    # the share of each point's 10 nearest in the layout from its own cluster
    ge <- extended_knn(r1$embedding, n_neighbors = 10, n_extra = 0)
    expect_gt(mean(matrix(fc$label[ge$idx[, -1]], nrow(ge$idx)) == fc$label), 0.9, label = m)
    expect_identical(r1$gradient, "sampled")
    expect_identical(names(r1$cost), "200")
    expect_true(all(is.finite(r1$cost)))
    set.seed(9)
    Y2 <- neighbor_embedding(fc$X, m, nn_method = g, perplexity = 5, gradient = "sampled",
                             max_iter = 200, n_threads = 2)
    expect_identical(unname(r1$embedding), unname(Y2))
    set.seed(10)
    Y3 <- neighbor_embedding(fc$X, m, nn_method = g, perplexity = 5, gradient = "sampled",
                             max_iter = 200)
    expect_false(identical(unname(Y2), unname(Y3)))
  }
  # 1-D and 3-D layouts
  for (k in c(1, 3)) {
    Y <- neighbor_embedding(nn_method = g, method = "umap", gradient = "sampled", max_iter = 100,
                            n_components = k)
    expect_equal(dim(Y), c(nrow(fc$X), k))
    expect_true(all(is.finite(Y)))
  }
})

test_that("negative sampling keeps neighbours about as well as uwot does", {
  skip_if_not_installed("uwot")
  set.seed(42)
  fc <- far_clusters(n_per = 150, dim = 8, sep = 6)
  g <- exact_graph(fc$X, 15)
  set.seed(1)
  Y <- neighbor_embedding(nn_method = g, method = "umap", gradient = "sampled")
  set.seed(1)
  U <- uwot::umap(NULL, nn_method = g, n_epochs = 500, n_threads = 1)
  np <- neighbor_preservation(g, Y, k = 10)
  nu <- neighbor_preservation(g, U, k = 10)
  expect_gt(np, nu - 0.05)
})

test_that("auto takes negative sampling for LargeVis, UMAP and t-UMAP, the grid for large t-SNE", {
  kind <- lsnn:::ne_gradient_kind
  for (m in c("umap", "tumap", "largevis")) {
    for (n in c(50L, 1000L, 10001L)) expect_identical(kind("auto", m, n, 2L), "sampled")
    expect_identical(kind("auto", m, 500L, 3L), "sampled")
  }
  expect_identical(kind("auto", "tsne", 3000L, 2L), "exact")
  expect_identical(kind("auto", "tsne", 3001L, 2L), "approx")
  expect_identical(kind("auto", "tsne", 50000L, 3L), "exact")
  expect_identical(kind("exact", "umap", 50000L, 2L), "exact")
  # epochs of negative sampling: the work never falls as n grows
  epochs <- vapply(c(100, 10000, 10001, 15000, 25000, 1e6), lsnn:::ne_sampled_epochs, 0L)
  expect_identical(epochs, c(500L, 500L, 500L, 333L, 200L, 200L))
  work <- c(100, 10000, 10001, 15000, 25000, 1e6) * epochs
  expect_true(all(work[-1] >= 0.99 * work[-length(work)]))
})

test_that("negative sampling rejects what it cannot use", {
  X <- matrix(rnorm(200), 50)
  expect_error(neighbor_embedding(X, "tsne", perplexity = 5, gradient = "sampled"),
               "^'gradient'")
  expect_error(neighbor_embedding(X, "umap", gradient = "sampled", exaggeration = 4),
               "^'exaggeration'")
  expect_error(neighbor_embedding(X, "umap", gradient = "sampled", negative_sample_rate = 0),
               "'negative_sample_rate'")
  expect_error(neighbor_embedding(X, "umap", gradient = "sampled", negative_sample_rate = NA),
               "'negative_sample_rate'")
})

test_that("t-SNE's default step is n / exaggeration in each phase; a given eta is kept", {
  set.seed(4)
  X <- matrix(rnorm(120 * 4), 120)
  r <- neighbor_embedding(X, "tsne", perplexity = 10, max_iter = 300, ret_extra = TRUE)
  expect_equal(r$eta_exaggerated, 120 / 12)
  expect_equal(r$eta, 120)
  expect_equal(r$iterations, 300)
  r2 <- neighbor_embedding(X, "tsne", perplexity = 10, max_iter = 300, eta = 50,
                           ret_extra = TRUE)
  expect_equal(c(r2$eta, r2$eta_exaggerated), c(50, 50))
  # the default step follows the exaggeration, so even a huge one stays finite
  Y <- neighbor_embedding(X, "tsne", perplexity = 10, exaggeration = 1e6, max_iter = 300)
  expect_true(all(is.finite(Y)))
})
