# Calls that once returned something wrong without a word, or never ended.

hostile_iris <- function() as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])

test_that("a huge negative_sample_rate is refused, not run for ever", {
  X <- hostile_iris()
  expect_error(neighbor_embedding(X, "tumap", negative_sample_rate = 1e9, max_iter = 5),
               "^'negative_sample_rate' must be at most 1000")
})

test_that("an index whose metric or data was changed is refused", {
  X <- hostile_iris()
  ix <- extended_knn(X, 5, 5, nn_kind = "exact", ret_index = TRUE)$index
  expect_identical(dim(extended_knn_query(ix, X[1:10, ], 3)$idx), c(10L, 3L))
  bad <- ix
  bad$metric <- "cosine"
  expect_error(extended_knn_query(bad, X[1:10, ], 3), "'index\\$graph'.*cosine distances")
  bad <- ix
  bad$data <- bad$data * 2
  expect_error(extended_knn_query(bad, X[1:10, ], 3), "the metric, the data or the graph")
  for (metric in c("cosine", "manhattan", "correlation")) {
    ix <- extended_knn(X, 5, 5, nn_kind = "exact", ret_index = TRUE, metric = metric)$index
    expect_identical(dim(extended_knn_query(ix, X[1:4, ], 3)$idx), c(4L, 3L), info = metric)
  }
})

test_that("a model asking for more neighbours than it has points is refused", {
  X <- hostile_iris()
  m <- neighbor_embedding(X, "umap", max_iter = 50, seed = 1, ret_model = TRUE)$model
  m$n_neighbors <- 1e6L
  expect_error(neighbor_embedding_transform(X[1:5, ], m), "n_neighbors.*reference points")
})

test_that("sort_knn_graph() keeps column 1 only where it is the row itself", {
  X <- hostile_iris()
  g <- extended_knn(X, 5, 10, nn_kind = "exact")
  g2 <- g
  g2$idx[, 1:2] <- g$idx[, 2:1]
  g2$dist[, 1:2] <- g$dist[, 2:1]
  expect_error(sort_knn_graph(g2), "must be the row itself")
  s <- sort_knn_graph(g2, enforce_self_first = FALSE)
  expect_true(all(apply(s$dist, 1, function(d) all(diff(d) >= 0))))
})

test_that("truncate_graph() refuses an unsorted graph", {
  X <- hostile_iris()
  g <- extended_knn(X, 5, 10, nn_kind = "exact")
  g$dist[, 2:3] <- g$dist[, 3:2]
  expect_error(truncate_graph(g, 5), "must not decrease along a row")
  expect_identical(ncol(truncate_graph(sort_knn_graph(g), 5)$idx), 5L)
})
