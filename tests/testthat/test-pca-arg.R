# The `pca` and `pca_center` arguments: the rows reduced to principal
# components before the search (extended_knn(), locally_scaled_knn(),
# neighbor_embedding()), the centre and rotation kept in indexes and models,
# and new rows projected through them.

# Rows near a 6-dimensional subspace of 30 columns, in three groups, far
# from the origin (so that centring matters).
pca_case <- function(n = 300, d = 30, seed = 1) {
  set.seed(seed)
  basis <- qr.Q(qr(matrix(rnorm(d * 6), d, 6)))
  latent <- matrix(rnorm(n * 6), n, 6) %*% diag(c(8, 6, 5, 4, 3, 2))
  latent[, 1] <- latent[, 1] + rep(c(-40, 0, 40), length.out = n)
  X <- latent %*% t(basis) + matrix(rnorm(n * d, sd = 0.3), n, d)
  sweep(X, 2, runif(d, 20, 30), "+")
}

# The rows projected by hand through a kept list(center, rotation).
by_hand <- function(pca, X) {
  if (!is.null(pca$center)) X <- sweep(X, 2, pca$center)
  X %*% pca$rotation
}

expect_same_graph <- function(g1, g2) {
  expect_identical(g1$idx, g2$idx)
  expect_equal(g1$dist, g2$dist, tolerance = 1e-10)
}

test_that("a graph with pca = k is the graph of the rows projected by hand", {
  X <- pca_case()
  res <- extended_knn(X, 10, 5, nn_kind = "exact", pca = 6, ret_index = TRUE)
  pca <- res$index$pca
  expect_named(pca, c("center", "rotation"))
  expect_equal(pca$center, colMeans(X), tolerance = 1e-12)
  expect_identical(dim(pca$rotation), c(30L, 6L))
  # the principal axes, as prcomp() finds them (up to sign)
  ref <- prcomp(X, rank. = 6)$rotation
  expect_equal(abs(crossprod(pca$rotation, ref)), diag(6), tolerance = 1e-8,
               ignore_attr = TRUE)
  Z <- by_hand(pca, X)
  expect_equal(res$index$data, Z, tolerance = 1e-12, ignore_attr = TRUE)
  expect_same_graph(res$enn, extended_knn(Z, 10, 5, nn_kind = "exact"))
  expect_same_graph(extended_knn(X, 10, 5, nn_kind = "exact", pca = 6), res$enn)
  # the locally scaled graph and the cosine metric
  expect_same_graph(locally_scaled_knn(X, 12, nn_kind = "exact", pca = 6),
                    locally_scaled_knn(Z, 12, nn_kind = "exact"))
  expect_same_graph(extended_knn(X, 10, 0, nn_kind = "exact", metric = "cosine", pca = 6),
                    extended_knn(Z, 10, 0, nn_kind = "exact", metric = "cosine"))
  # pca = 0 and NULL keep the columns
  expect_identical(extended_knn(X, 10, 0, nn_kind = "exact", pca = 0),
                   extended_knn(X, 10, 0, nn_kind = "exact"))
})

test_that("pca_center = FALSE reduces the rows as they are (a truncated SVD)", {
  X <- pca_case(seed = 2)
  res <- extended_knn(X, 10, 5, nn_kind = "exact", pca = 4, pca_center = FALSE,
                      ret_index = TRUE)
  pca <- res$index$pca
  expect_true("center" %in% names(pca))
  expect_null(pca$center)
  v <- svd(X, nu = 0, nv = 4)$v
  expect_equal(abs(crossprod(pca$rotation, v)), diag(4), tolerance = 1e-8)
  Z <- X %*% pca$rotation
  expect_equal(res$index$data, Z, tolerance = 1e-12, ignore_attr = TRUE)
  expect_same_graph(res$enn, extended_knn(Z, 10, 5, nn_kind = "exact"))
  # uncentred, the first axis follows the mean, unlike the centred one
  centred <- extended_knn(X, 10, 5, nn_kind = "exact", pca = 4, ret_index = TRUE)$index$pca
  mean_dir <- colMeans(X) / sqrt(sum(colMeans(X)^2))
  expect_gt(abs(sum(pca$rotation[, 1] * mean_dir)), 0.99)
  expect_lt(abs(sum(centred$rotation[, 1] * mean_dir)), 0.5)
  # the exact way and irlba's agree
  skip_if_not_installed("irlba")
  data <- lsnn:::prepare_data(X, "euclidean")
  exact <- lsnn:::pca_components(data, 4, 1L, FALSE, center = FALSE)
  by_irlba <- lsnn:::pca_irlba(data, 4, center = FALSE)
  expect_null(by_irlba$center)
  expect_equal(by_irlba$rotation, exact$rotation, tolerance = 1e-5)
  expect_equal(by_irlba$scores, exact$scores, tolerance = 1e-5)
})

test_that("sparse data is reduced by irlba and queried through the same projection", {
  skip_if_not_installed("irlba")
  X <- pca_case(n = 200, d = 40, seed = 3)
  X[X < 25] <- 0
  Xs <- Matrix::Matrix(X, sparse = TRUE)
  for (center in c(TRUE, FALSE)) {
    set.seed(1)
    res <- extended_knn(Xs, 8, 4, nn_kind = "exact", pca = 5, pca_center = center,
                        ret_index = TRUE)
    pca <- res$index$pca
    if (center) expect_equal(pca$center, colMeans(X)) else expect_null(pca$center)
    Z <- by_hand(pca, X)
    expect_equal(res$index$data, Z, tolerance = 1e-10, ignore_attr = TRUE)
    expect_same_graph(res$enn, extended_knn(Z, 8, 4, nn_kind = "exact"))
    # sparse or dense query rows land on the same projection
    q_sparse <- extended_knn_query(res$index, Xs[1:20, ], 5, nn_kind = "exact")
    q_dense <- extended_knn_query(res$index, X[1:20, ], 5, nn_kind = "exact")
    expect_identical(q_sparse$idx, q_dense$idx)
    expect_equal(q_sparse$dist, q_dense$dist, tolerance = 1e-10)
    # a reference row queried finds itself at distance 0
    expect_identical(q_dense$idx[, 1], 1:20)
    expect_lt(max(q_dense$dist[, 1]), 1e-6)
  }
  # the same seed, the same reduction
  a <- extended_knn(Xs, 8, 4, pca = 5, seed = 4, ret_index = TRUE)
  b <- extended_knn(Xs, 8, 4, pca = 5, seed = 4, ret_index = TRUE)
  expect_identical(a, b)
})

test_that("index queries project the new rows through the kept rotation", {
  X <- pca_case(seed = 5)
  train <- 1:240
  X_new <- X[-train, ]
  res <- locally_scaled_knn(X[train, ], 10, nn_kind = "exact", pca = 6, ret_index = TRUE)
  index <- res$index
  # an index of the stored scores, without the rotation, queried by hand
  plain <- extended_knn(index$data, 10, 50, nn_kind = "exact", ret_index = TRUE)$index
  Z_new <- by_hand(index$pca, X_new)
  expect_same_graph(extended_knn_query(index, X_new, 7, nn_kind = "exact"),
                    extended_knn_query(plain, Z_new, 7, nn_kind = "exact"))
  expect_same_graph(locally_scaled_knn_query(index, X_new, 7, nn_kind = "exact"),
                    locally_scaled_knn_query(plain, Z_new, 7, nn_kind = "exact"))
  # the approximate query draws the same numbers
  expect_same_graph(extended_knn_query(index, X_new, 7, seed = 2),
                    extended_knn_query(plain, Z_new, 7, seed = 2))
  # one row as a vector, a data frame
  expect_same_graph(extended_knn_query(index, X_new[3, ], 7, nn_kind = "exact"),
                    extended_knn_query(plain, Z_new[3, , drop = FALSE], 7, nn_kind = "exact"))
  expect_same_graph(extended_knn_query(index, as.data.frame(X_new), 7, nn_kind = "exact"),
                    extended_knn_query(plain, Z_new, 7, nn_kind = "exact"))
  expect_output(print(index), "principal components of 30 columns")
  # saved and read back
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file))
  saveRDS(index, file)
  expect_identical(extended_knn_query(readRDS(file), X_new, 7, seed = 3),
                   extended_knn_query(index, X_new, 7, seed = 3))
})

test_that("neighbor_embedding() with pca works on the projected rows", {
  X <- pca_case(seed = 6)
  set.seed(1)
  fit <- neighbor_embedding(X, "umap", pca = 6, max_iter = 0, ret_model = TRUE,
                            ret_extra = c("nn", "P"))
  pca <- fit$model$pca
  expect_identical(dim(pca$rotation), c(30L, 6L))
  Z <- by_hand(pca, X)
  expect_same_graph(fit$nn, extended_knn(Z, 14, 0, nn_kind = "exact"))
  expect_equal(fit$model$index$data, Z, tolerance = 1e-12, ignore_attr = TRUE)
  # the same affinities as from the projected rows by hand (the spectral
  # start and the layout are too sensitive to compare after rounding)
  ref <- neighbor_embedding(Z, "umap", max_iter = 0, ret_extra = c("nn", "P"))
  expect_equal(fit$P, ref$P, tolerance = 1e-8)
  # t-SNE's affinities over all pairs of small data, and the pca start
  set.seed(2)
  ts <- neighbor_embedding(X, "tsne", pca = 6, init = "pca", max_iter = 10,
                           stop_lying_iter = 5, ret_extra = "P")
  set.seed(2)
  ts_ref <- neighbor_embedding(Z, "tsne", init = "pca", max_iter = 10, stop_lying_iter = 5,
                               ret_extra = "P")
  expect_equal(ts$P, ts_ref$P, tolerance = 1e-8)
  expect_equal(ts$embedding, ts_ref$embedding, tolerance = 1e-6, ignore_attr = TRUE)
  # locally scaled neighbours, and pca = 0 as no reduction
  set.seed(3)
  ls <- neighbor_embedding(X, "umap", pca = 6, neighbors = "lsnn", max_iter = 0,
                           ret_extra = "nn")
  expect_same_graph(ls$nn, locally_scaled_knn(Z, 15, nn_kind = "exact"))
  set.seed(4)
  a <- neighbor_embedding(X, "umap", pca = 0, max_iter = 20)
  set.seed(4)
  expect_identical(a, neighbor_embedding(X, "umap", max_iter = 20))
})

test_that("transform places new rows through the model's rotation", {
  X <- pca_case(seed = 7)
  train <- 1:240
  X_new <- X[-train, ]
  for (method in c("umap", "tsne", "pacmap")) {
    set.seed(5)
    # (PaCMAP warns of arguments it does not use, even NULL ones)
    settings <- switch(method, pacmap = list(), tsne = list(max_iter = 100, stop_lying_iter = 50),
                       list(max_iter = 100))
    fit <- do.call(neighbor_embedding, c(list(X[train, ], method, pca = 5, ret_model = TRUE),
                                         settings))
    model <- fit$model
    expect_identical(dim(model$pca$rotation), c(30L, 5L))
    Z_new <- by_hand(model$pca, X_new)
    expect_equal(lsnn:::prepare_new_rows(model, X_new)$x, Z_new, tolerance = 1e-12,
                 ignore_attr = TRUE)
    # the same neighbours found by hand, with the same random numbers
    k <- if (method == "pacmap") model$n_neighbors else
      lsnn:::ne_query_k(method, length(train), model$perplexity, model$n_neighbors)
    set.seed(6)
    Y <- neighbor_embedding_transform(X_new, model)
    set.seed(6)
    nn <- if (model$neighbors == "lsnn") {
      locally_scaled_knn_query(model$index, Z_new, k, n_extra = 50, epsilon = 0.02)
    } else {
      extended_knn_query(model$index, Z_new, k, epsilon = 0.02)
    }
    # (the placement's own random numbers: the same call seed)
    set.seed(6)
    Y_hand <- neighbor_embedding_transform(model = model, nn_method = nn)
    expect_equal(Y, Y_hand, tolerance = 1e-10, ignore_attr = TRUE)
    # the new rows land among their own group
    group <- rep(1:3, length.out = nrow(X))
    near <- extended_knn_query(extended_knn(fit$embedding, 5, 0, nn_kind = "exact",
                                            ret_index = TRUE)$index, Y, 5,
                               nn_kind = "exact")$idx
    expect_gt(mean(matrix(group[train][near], ncol = 5) == group[-train]), 0.9)
  }
})

test_that("models with pca survive saveRDS() and their seeds", {
  X <- pca_case(seed = 8)
  train <- 1:240
  fit1 <- neighbor_embedding(X[train, ], "umap", pca = 5, pca_center = FALSE,
                             ret_model = TRUE, max_iter = 30, seed = 9)
  fit2 <- neighbor_embedding(X[train, ], "umap", pca = 5, pca_center = FALSE,
                             ret_model = TRUE, max_iter = 30, seed = 9, n_threads = 2)
  expect_identical(fit1, fit2)
  expect_null(fit1$model$pca$center)
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file))
  saveRDS(fit1$model, file)
  model <- readRDS(file)
  expect_identical(neighbor_embedding_transform(X[-train, ], model, seed = 1),
                   neighbor_embedding_transform(X[-train, ], fit1$model, seed = 1))
  # a model without the rotation (as before pca) still places new rows
  set.seed(2)
  plain <- neighbor_embedding(X[train, ], "umap", ret_model = TRUE, max_iter = 30)$model
  expect_null(plain$pca)
  expect_identical(dim(neighbor_embedding_transform(X[-train, ], plain)), c(60L, 2L))
})

test_that("bad pca arguments get errors that name them", {
  X <- pca_case(n = 60, seed = 9)
  for (bad in list(1.5, -1, "3", NA, c(2, 3), Inf)) {
    expect_error(extended_knn(X, 5, 0, pca = bad), "^'pca' must be")
    expect_error(neighbor_embedding(X, "umap", pca = bad), "^'pca' must be")
  }
  expect_error(extended_knn(X, 5, 0, pca = 30),
               "^'pca' must be less than the number of columns of 'X', 30 \\(it is 30\\)")
  expect_error(locally_scaled_knn(X, 5, pca = 31), "^'pca' must be less than")
  expect_error(neighbor_embedding(X, "tsne", pca = 40), "^'pca' must be less than")
  expect_error(neighbor_embedding(X, "pacmap", pca = 30), "^'pca' must be less than")
  for (bad in list(NA, "yes", c(TRUE, FALSE))) {
    expect_error(extended_knn(X, 5, 0, pca = 3, pca_center = bad), "^'pca_center'")
    expect_error(neighbor_embedding(X, "umap", pca = 3, pca_center = bad), "^'pca_center'")
  }
  for (metric in c("manhattan", "correlation")) {
    expect_error(extended_knn(X, 5, 0, metric = metric, pca = 3),
                 "^'pca' reduces the data for metric = \"euclidean\" or \"cosine\"")
    expect_error(locally_scaled_knn(X, 5, metric = metric, pca = 3), "^'pca'")
  }
  g <- extended_knn(X, 14, 0, nn_kind = "exact")
  expect_error(neighbor_embedding(nn_method = g, method = "umap", pca = 3),
               "^'pca' reduces the rows of 'X'")
  # new rows with other columns
  res <- extended_knn(X, 10, 5, nn_kind = "exact", pca = 4, ret_index = TRUE)
  expect_error(extended_knn_query(res$index, X[, 1:4], 3),
               "^'query' has 4 columns; the index was built on data of 30")
  expect_error(locally_scaled_knn_query(res$index, X[1:3, -1], 3), "^'query' has 29 columns")
  fit <- neighbor_embedding(X, "umap", pca = 4, ret_model = TRUE, max_iter = 5)
  expect_error(neighbor_embedding_transform(X[, 1:4], fit$model),
               "^'X_new' has 4 columns; the model was fitted on 30")
  with_na <- X[1:3, ]
  with_na[2, 5] <- NA
  expect_error(neighbor_embedding_transform(with_na, fit$model), "^'X_new' contains 1 NA")
})

test_that("a damaged rotation in an index or a model is refused, named", {
  X <- pca_case(n = 80, seed = 10)
  index <- extended_knn(X, 10, 5, nn_kind = "exact", pca = 4, ret_index = TRUE)$index
  damaged_index <- "^'index' is damaged or not an lsnn index: "
  bad <- index
  bad$pca$rotation <- bad$pca$rotation[, 1:3]
  expect_error(extended_knn_query(bad, X, 3),
               paste0(damaged_index, "'index\\$pca\\$rotation' has 3 columns but the reduced ",
                      "data has 4"))
  bad <- index
  bad$pca$center <- bad$pca$center[-1]
  expect_error(extended_knn_query(bad, X, 3),
               paste0(damaged_index, "'index\\$pca' must be NULL or list\\(center, rotation\\)"))
  bad <- index
  bad$pca$rotation[2, 2] <- NaN
  expect_error(extended_knn_query(bad, X, 3), "'index\\$pca\\$rotation' contains NA")
  bad <- index
  bad$pca$center[3] <- Inf
  expect_error(extended_knn_query(bad, X, 3), "'index\\$pca\\$center' contains NA")
  bad <- index
  bad$pca$rotation <- 2 * bad$pca$rotation
  expect_error(extended_knn_query(bad, X, 3), "'index\\$pca\\$rotation' does not have orthonormal")
  bad <- index
  bad$pca <- "rotation"
  expect_error(extended_knn_query(bad, X, 3), "'index\\$pca' must be NULL or list")
  bad <- index
  bad$metric <- "manhattan"
  expect_error(extended_knn_query(bad, X, 3), "'index\\$metric' must be \"euclidean\" or \"cosine\"")

  fit <- neighbor_embedding(X, "umap", pca = 4, ret_model = TRUE, max_iter = 5)
  damaged_model <- "^'model' is damaged or not an lsnn model: "
  bad <- fit$model
  bad$pca$rotation <- bad$pca$rotation[, 1:3]
  expect_error(neighbor_embedding_transform(X, bad),
               paste0(damaged_model, "'model\\$pca\\$rotation' has 3 columns but the index's"))
  bad <- fit$model
  bad$pca$rotation <- bad$pca$rotation[-1, ]
  expect_error(neighbor_embedding_transform(X, bad), "'model\\$pca' must be NULL or list")
  bad <- fit$model
  bad$pca$rotation[1, 1] <- 5
  expect_error(neighbor_embedding_transform(X, bad), "'model\\$pca\\$rotation' does not have")
})

test_that("PaCMAP from shards reduces its data as the in-memory call does", {
  set.seed(11)
  X <- pca_case(n = 300, d = 110, seed = 11)
  case <- sharded_lsnn_case(X, 150)
  on.exit(unlink(case$dirs, recursive = TRUE))
  shards <- case$shards
  g <- case$graph
  run <- function(data, graph, ...) {
    neighbor_embedding(data, "pacmap", nn_method = graph, max_iter = 30, phases = c(10, 10, 10),
                       seed = 5, ...)
  }
  # PaCMAP's default (100 components of the 110 columns), a given pca, uncentred
  from_shards <- run(shards, g)
  expect_identical(from_shards, run(X, read_graph_shards(g)))
  expect_false(identical(from_shards, run(shards, g, pca = 0)))
  expect_identical(run(shards, g, pca = 4, pca_center = FALSE),
                   run(X, read_graph_shards(g), pca = 4, pca_center = FALSE))
  expect_error(run(shards, g, pca = 110), "^'pca' must be less than")
})
