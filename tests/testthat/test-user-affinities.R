# neighbor_embedding(P = ): the user's own affinities, in any matrix class,
# checked whole; and X as a dist object, whose neighbours are read exactly
# from its distances.

# neighbor_embedding() without the warning of runs shorter than the early
# exaggeration (these tests run few iterations).
quiet_ne <- function(...) {
  withCallingHandlers(neighbor_embedding(...), warning = function(w) {
    if (grepl("is below 'stop_lying_iter'", conditionMessage(w))) invokeRestart("muffleWarning")
  })
}

user_data <- function(n = 150, dim = 5) {
  set.seed(21)
  X <- far_clusters(n_per = n / 3, dim = dim)$X
  rownames(X) <- paste0("r", seq_len(nrow(X)))
  X
}

test_that("a t-SNE layout from P = perplexity_affinities(X) is the layout from X", {
  X <- user_data()
  P <- perplexity_affinities(X, perplexity = 15)
  for (gradient in c("exact", "approx")) {
    ref <- quiet_ne(X, perplexity = 15, max_iter = 300, gradient = gradient, seed = 7)
    expect_identical(unname(quiet_ne(P = P, max_iter = 300, gradient = gradient,
                                               seed = 7)),
                     unname(ref), info = gradient)
    # with the data too (its row names kept)
    expect_identical(quiet_ne(X, P = P, max_iter = 300, gradient = gradient,
                                        seed = 7), ref, info = gradient)
  }
  # LargeVis and a graph's affinities
  g <- extended_knn(X, n_neighbors = 40, n_extra = 0, nn_kind = "exact")
  ref <- quiet_ne(nn_method = g, method = "largevis", perplexity = 10,
                            max_iter = 200, seed = 3)
  P <- perplexity_affinities(nn_method = g, perplexity = 10)
  expect_identical(quiet_ne(P = P, method = "largevis", max_iter = 200, seed = 3), ref)
})

test_that("UMAP lays out the fuzzy graph it is given", {
  X <- user_data()
  V <- umap_affinities(X, n_neighbors = 12)
  for (method in c("umap", "tumap")) {
    ref <- quiet_ne(X, method, n_neighbors = 12, max_iter = 200, seed = 5)
    expect_identical(quiet_ne(X, method, P = V, max_iter = 200, seed = 5), ref)
  }
  ref <- quiet_ne(X, "umap", n_neighbors = 12, gradient = "sampled", max_iter = 50,
                            seed = 5, ret_extra = c("P"))
  got <- quiet_ne(P = V, method = "umap", gradient = "sampled", max_iter = 50,
                            seed = 5, ret_extra = c("P", "nn"))
  expect_identical(unname(got$embedding), unname(ref$embedding))
  expect_identical(got$P, V)
  expect_null(got$nn)
})

test_that("P in any matrix class gives the same layout", {
  X <- user_data(90)
  P <- perplexity_affinities(X, perplexity = 10)
  ref <- quiet_ne(P = P, max_iter = 100, seed = 1)
  forms <- list(
    dense = as.matrix(P),
    triplet = methods::as(P, "TsparseMatrix"),
    symmetric = Matrix::forceSymmetric(P),
    symmetric_lower = Matrix::forceSymmetric(P, uplo = "L"),
    dense_matrix = Matrix::Matrix(as.matrix(P), sparse = FALSE),
    data_frame = as.data.frame(as.matrix(P))
  )
  for (name in names(forms)) {
    expect_identical(quiet_ne(P = forms[[name]], max_iter = 100, seed = 1), ref,
                     info = name)
  }
  # a diagonal and a scale are taken out for t-SNE (a random start: the
  # spectral one of separate clusters is any basis of a repeated eigenvalue)
  Pd <- P * 3
  Matrix::diag(Pd) <- 1
  expect_equal(quiet_ne(P = Pd, max_iter = 100, seed = 1, init = "random"),
               quiet_ne(P = P, max_iter = 100, seed = 1, init = "random"),
               tolerance = 1e-6)
  # the row names of P name the layout's rows
  named <- P
  dimnames(named) <- list(rownames(X), rownames(X))
  expect_identical(rownames(quiet_ne(P = named, max_iter = 10)), rownames(X))
})

test_that("P is checked whole, and the errors name it", {
  X <- user_data(60)
  P <- perplexity_affinities(X, perplexity = 10)
  Pa <- as.matrix(P)
  expect_error(quiet_ne(P = Pa[, -1]), "^'P' must be a square matrix \\(it is 60 x 59\\)")
  expect_error(quiet_ne(X[-1, ], P = P), "^'P' is 60 x 60 but 'X' has 59 rows")
  bad <- Pa
  bad[3, 7] <- bad[3, 7] * 2
  expect_error(quiet_ne(P = bad), "^'P' must be symmetric: P\\[(3, 7|7, 3)\\] = .* but P\\[(7, 3|3, 7)\\] =")
  bad <- Pa
  bad[3, 7] <- bad[7, 3] <- NA
  expect_error(quiet_ne(P = bad), "^'P' must be finite \\(no NA, NaN or Inf\\): P\\[")
  bad[3, 7] <- bad[7, 3] <- Inf
  expect_error(quiet_ne(P = bad), "^'P' must be finite")
  bad[3, 7] <- bad[7, 3] <- -0.1
  expect_error(quiet_ne(P = bad), "^'P' must be non-negative: P\\[(3, 7|7, 3)\\] = -0.1")
  expect_error(quiet_ne(P = "P"), "^'P' must be a numeric matrix or a sparse Matrix")
  expect_error(quiet_ne(P = list(P)), "^'P' must be a numeric matrix")
  expect_error(quiet_ne(P = Pa * 0), "^'P' has no positive affinities")
  expect_error(quiet_ne(P = diag(60)), "^'P' has no positive affinities")
  expect_error(quiet_ne(P = P * 1000, method = "umap"),
               "^'P' must hold fuzzy memberships between 0 and 1 for method = \"umap\"")
  expect_error(quiet_ne(X, "pacmap", P = P), "^'P' is for t-SNE, LargeVis, UMAP")
  g <- extended_knn(X, n_neighbors = 10, n_extra = 0, nn_kind = "exact")
  expect_error(quiet_ne(nn_method = g, P = P), "'P' or a neighbour graph as 'nn_method', not both")
  expect_error(quiet_ne(P = P, init = "pca"), "^'init' = \"pca\" needs the data as 'X'")
  expect_error(quiet_ne(P = Pa[1:2, 1:2]), "at least 3 points")
  # a damaged dgCMatrix is refused, not read out of bounds
  broken <- P
  broken@i[5] <- 1000L
  expect_error(quiet_ne(P = broken), "^'P' is a damaged sparse matrix")
  broken <- P
  broken@p[3] <- broken@p[3] + 1000L
  expect_error(quiet_ne(P = broken), "^'P' is a damaged sparse matrix")
  # P alone: a spectral start, and a model that needs the new points' neighbours
  fit <- quiet_ne(P = P, max_iter = 50, ret_model = TRUE)
  expect_null(fit$model$index)
  expect_error(neighbor_embedding_transform(X[1:3, ], fit), "'nn_method'")
})

test_that("a dist object's neighbours are read from its distances", {
  set.seed(22)
  X <- matrix(rnorm(240 * 5), 240)
  rownames(X) <- paste0("r", seq_len(nrow(X)))
  D <- stats::dist(X)
  # the graph is the exact one, self first, with dist()'s distances
  g <- lsnn:::graph_of_inputs(lsnn:::resolve_inputs(D, NULL, "t", embedding = TRUE), 16, 1L,
                              FALSE, "t")
  ref <- exact_graph(X, 16)
  expect_identical(g$idx, ref$idx)
  expect_identical(g$dist, unname(ref$dist))
  expect_identical(lsnn:::.knn_of_distances(as.double(D), 240L, 16L, 2L, FALSE), g)
  # the same graph as the data's, and the same affinities and layouts up to
  # the rounding of the distances (shown from a random start: the spectral
  # one moves with the eigensolver's tolerance)
  for (case in list(list(method = "umap", neighbors = "knn"),
                    list(method = "umap", neighbors = "lsnn"),
                    list(method = "tsne", neighbors = "lsnn"),
                    list(method = "tsne", neighbors = "knn"))) {
    info <- paste(case$method, case$neighbors)
    run <- function(X) {
      # (the full gradient: negative sampling's schedule turns a rounding
      # difference of P into another sequence of samples)
      quiet_ne(X, case$method, neighbors = case$neighbors, perplexity = 10, max_iter = 40,
               init = "random", seed = 9, ret_extra = c("nn", "P"), gradient = "exact")
    }
    a <- run(X)
    b <- run(D)
    # (t-SNE of the data's at most 1,000 rows takes all pairs without a graph)
    if (!is.null(a$nn)) {
      expect_identical(b$nn$idx, a$nn$idx, info = info)
      expect_equal(b$nn$dist, a$nn$dist, tolerance = 1e-14, info = info)
    }
    expect_equal(b$P, a$P, tolerance = 1e-12, info = info)
    expect_equal(b$embedding, a$embedding, tolerance = 1e-6, info = info)
    expect_identical(rownames(b$embedding), rownames(X))
  }
  # a graph of the same distances lays out identically, by default too
  a <- quiet_ne(nn_method = exact_graph(X, 15), method = "umap", max_iter = 100, seed = 4)
  b <- quiet_ne(D, "umap", max_iter = 100, seed = 4)
  expect_identical(unname(b), unname(a))
  # t-SNE beyond the all-pairs size: the 3 * perplexity nearest
  X <- matrix(rnorm(1005 * 3), 1005)
  D <- stats::dist(X)
  a <- quiet_ne(nn_method = exact_graph(X, 16), perplexity = 5, max_iter = 60, seed = 9)
  b <- quiet_ne(D, perplexity = 5, max_iter = 60, seed = 9, ret_extra = "nn")
  expect_identical(b$embedding, a)
  expect_identical(b$nn$idx, extended_knn(X, 15, n_extra = 0, nn_kind = "exact")$idx)
  # any distances: as.dist() of a matrix, other metrics
  Dm <- stats::as.dist(as.matrix(stats::dist(X, "manhattan")))
  expect_identical(dim(quiet_ne(Dm, "umap", max_iter = 20)), c(1005L, 2L))
})

test_that("a bad dist object is refused naming 'X'", {
  X <- user_data(30)
  D <- stats::dist(X)
  bad <- D
  bad[5] <- NA
  expect_error(quiet_ne(bad, "umap"),
               "^'X' must hold finite, non-negative distances: the distance between points 6 and 1 is NA")
  bad <- D
  bad[30] <- -1
  expect_error(quiet_ne(bad, "umap"), "between points 3 and 2 is -1")
  bad <- D
  attr(bad, "Size") <- 31L
  expect_error(quiet_ne(bad, "umap"), "^'X' is a damaged dist object: 31 points need")
  expect_error(quiet_ne(D, "pacmap"), "not their distances")
  expect_error(quiet_ne(D, perplexity = 5, init = "pca"),
               "^'init' = \"pca\" needs the data")
  expect_error(quiet_ne(D, P = diag(30)), "not both")
  expect_error(extended_knn(D, nn_kind = "exact"), "^'X' is a dist object: give the data")
  expect_error(umap_affinities(D), "^'X' is a dist object")
})
