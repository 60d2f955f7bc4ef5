# The input forms every function reads the same way (issue 22): graphs in
# the forms of uwot, BiocNeighbors and uwot's sparse distance matrices, data
# in any sparse Matrix class, one rule for the search, one seed convention.

inputs_data <- function() {
  set.seed(22)
  matrix(rnorm(60 * 4), 60)
}

test_that("uwot's nested nn is read by every graph consumer", {
  X <- inputs_data()
  g <- extended_knn(X, 9, 0, nn_kind = "exact")
  nested <- list(euclidean = g)
  expect_equal(perplexity_affinities(nn_method = nested, perplexity = 3),
               perplexity_affinities(nn_method = g, perplexity = 3))
  expect_equal(truncate_graph(nested, 4), truncate_graph(g, 4))
  expect_equal(neighbor_overlap(nested, g), 1)
  Y <- X[, 1:2]
  expect_equal(neighbor_preservation(nested, Y, k = 5), neighbor_preservation(g, Y, k = 5))
})

test_that("BiocNeighbors' index and distance get the row itself in front", {
  X <- inputs_data()
  g <- extended_knn(X, 9, 0, nn_kind = "exact")
  bioc <- list(index = g$idx[, -1], distance = g$dist[, -1])
  expect_identical(lsnn:::check_graph(bioc, "nn_method"), g)
  expect_equal(umap_affinities(nn_method = bioc), umap_affinities(nn_method = g))
  expect_equal(enn_to_lsnn(bioc, 5), enn_to_lsnn(g, 5))
  expect_equal(neighbor_overlap(bioc, g), 1)
  # a graph whose rows list themselves is taken as it is
  expect_identical(lsnn:::check_graph(list(index = g$idx, distance = g$dist), "g"), g)
  expect_error(neighbor_embedding(bioc), "'X' is a neighbour graph")
})

test_that("uwot's sparse distance matrix is read as list(idx, dist)", {
  X <- inputs_data()
  n <- nrow(X)
  g <- extended_knn(X, 9, 0, nn_kind = "exact")
  # column j holds the distances from j to its neighbours, as uwot takes it
  M <- Matrix::sparseMatrix(i = as.vector(g$idx[, -1]), j = rep(seq_len(n), 9),
                            x = as.vector(g$dist[, -1]), dims = c(n, n))
  expect_identical(lsnn:::check_graph(M, "nn_method"), g)
  expect_equal(umap_affinities(nn_method = M), umap_affinities(nn_method = g))
  expect_equal(umap_affinities(nn_method = methods::as(M, "TsparseMatrix")),
               umap_affinities(nn_method = g))
  expect_equal(perplexity_affinities(nn_method = M, perplexity = 3),
               perplexity_affinities(nn_method = g, perplexity = 3))
  set.seed(1)
  a <- neighbor_embedding(method = "umap", nn_method = M, max_iter = 20, init = "random")
  set.seed(1)
  b <- neighbor_embedding(method = "umap", nn_method = g, max_iter = 20, init = "random")
  expect_equal(a, b)
  if (requireNamespace("uwot", quietly = TRUE)) {
    # the same memberships as uwot computes from the same matrix
    ref <- uwot::umap(X, nn_method = M, n_epochs = 0, init = "random", ret_extra = "fgraph")
    expect_equal(as.matrix(umap_affinities(nn_method = M)), as.matrix(ref$fgraph),
                 tolerance = 1e-5, ignore_attr = TRUE)
  }
  # the diagonal is ignored; columns of unequal length are refused
  expect_identical(lsnn:::check_graph(M + Matrix::Diagonal(n, 0.5), "g"), g)
  uneven <- M
  uneven[g$idx[1, 2], 1] <- 0
  uneven <- Matrix::drop0(uneven)
  expect_error(umap_affinities(nn_method = uneven),
               "'nn_method' must hold the same number of neighbours")
  expect_error(umap_affinities(nn_method = M[, -1]), "square")
  # a sparse matrix given as X is data, not a graph
  expect_equal(dim(extended_knn(M, 3, 0, nn_kind = "exact")$idx), c(n, 4L))
})

test_that("sparse data in any Matrix class is converted, not refused", {
  set.seed(3)
  S <- Matrix::rsparsematrix(80, 12, density = 0.3)
  ref <- extended_knn(as.matrix(S), 6, 0, nn_kind = "exact")
  for (form in list(S, methods::as(S, "TsparseMatrix"), methods::as(S, "RsparseMatrix"))) {
    expect_equal(extended_knn(form, 6, 0, nn_kind = "exact"), ref)
    set.seed(4)
    a <- extended_knn(form, 6, 0)
    set.seed(4)
    expect_identical(a, extended_knn(S, 6, 0))
  }
  expect_equal(dim(extended_knn(Matrix::Diagonal(5), 2, 0, nn_kind = "exact")$idx), c(5L, 3L))
  expect_equal(umap_affinities(methods::as(S, "TsparseMatrix"), n_neighbors = 7),
               umap_affinities(as.matrix(S), n_neighbors = 7))
  expect_equal(perplexity_affinities(methods::as(S, "RsparseMatrix"), perplexity = 5),
               perplexity_affinities(as.matrix(S), perplexity = 5))
  set.seed(2)
  a <- neighbor_embedding(methods::as(S, "TsparseMatrix"), "umap", n_neighbors = 7,
                          max_iter = 20, init = "pca")
  set.seed(2)
  b <- neighbor_embedding(as.matrix(S), "umap", n_neighbors = 7, max_iter = 20, init = "pca")
  expect_equal(a, b)
})

test_that("one rule chooses the search wherever lsnn searches by itself", {
  expect_identical(lsnn:::search_kind(20000), "exact")
  expect_identical(lsnn:::search_kind(20001), "approx")
  X <- inputs_data()
  expect_message(umap_affinities(X, n_neighbors = 8, verbose = TRUE),
                 "umap_affinities: exact 7-nearest neighbours")
  expect_message(neighbor_embedding(X, "umap", n_neighbors = 8, max_iter = 5, verbose = TRUE),
                 "neighbor_embedding: exact 7-nearest neighbours")
  # the graph searched is the one extended_knn() finds, n_neighbors counting the point
  expect_equal(umap_affinities(X, n_neighbors = 8),
               umap_affinities(nn_method = extended_knn(X, 7, 0, nn_kind = "exact")))
})

test_that("seeds come from R's generator as two 31-bit integers", {
  set.seed(5)
  s <- lsnn:::draw_seed()
  expect_type(s, "integer")
  expect_length(s, 2)
  expect_true(all(s >= 0))
  set.seed(5)
  expect_identical(lsnn:::draw_seed(), s)
})
