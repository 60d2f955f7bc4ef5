# Placing new points in an existing embedding: the placement objective's
# gradient, where new points land, reproducibility and argument errors.

placement_case <- function(d = 2, n_ref = 200, m = 6, seed = 1) {
  set.seed(seed)
  Yref <- matrix(rnorm(n_ref * d, sd = 3), n_ref, d)
  Ynew <- matrix(rnorm(m * d, sd = 3), m, d)
  rows <- lapply(seq_len(m), function(i) sort(sample(n_ref, 8)))
  list(Yref = Yref, Ynew = Ynew, p = c(0L, cumsum(lengths(rows))),
       i = unlist(rows) - 1L, x = runif(8 * m))
}

placement_fd_error <- function(case, method, gradient) {
  cs <- lsnn:::ne_cost_settings(method, gamma = if (method == "largevis") 0.01 else 1, eps = 0)
  cost <- lsnn:::ne_cost_list(cs, gradient)
  f <- function(Yn) lsnn:::.placement_cost_gradient(case$Yref, Yn, case$p, case$i, case$x,
                                                    cost, 1L, "auto")
  g <- f(case$Ynew)$gradient
  h <- 1e-5
  fd <- case$Ynew * 0
  for (a in seq_len(nrow(fd))) for (b in seq_len(ncol(fd))) {
    up <- case$Ynew
    up[a, b] <- up[a, b] + h
    down <- case$Ynew
    down[a, b] <- down[a, b] - h
    fd[a, b] <- (f(up)$cost - f(down)$cost) / (2 * h)
  }
  sqrt(sum((fd - g)^2) / sum(fd^2))
}

test_that("the placement gradient is the derivative of the placement cost", {
  for (method in c("tsne", "largevis", "umap", "tumap")) {
    expect_lt(placement_fd_error(placement_case(2), method, "exact"), 1e-6)
    expect_lt(placement_fd_error(placement_case(1, seed = 2), method, "exact"), 1e-6)
  }
  # beyond 2 dimensions the reference is summed exactly
  expect_lt(placement_fd_error(placement_case(3, seed = 3), "tsne", "exact"), 1e-6)
  expect_lt(placement_fd_error(placement_case(3, seed = 3), "umap", "approx"), 1e-6)
})

test_that("the grid's field of the reference is as accurate as the embedding's", {
  case <- placement_case(2, n_ref = 3000)
  for (method in c("tsne", "umap")) {
    cost <- function(kind) {
      lsnn:::ne_cost_list(lsnn:::ne_cost_settings(method), kind)
    }
    run <- function(kind) {
      lsnn:::.placement_cost_gradient(case$Yref, case$Ynew, case$p, case$i, case$x,
                                      cost(kind), 1L, "auto")
    }
    ex <- run("exact")
    ap <- run("approx")
    expect_lt(sqrt(sum((ex$gradient - ap$gradient)^2) / sum(ex$gradient^2)),
              if (method == "tsne") 1e-3 else 1e-2)
    expect_lt(abs(ex$cost - ap$cost) / abs(ex$cost), 1e-3)
  }
})

transform_fit <- function(method, seed = 1, ...) {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  set.seed(seed)
  keep <- sort(sample(nrow(X), 110))
  list(X = X, keep = keep,
       fit = neighbor_embedding(X[keep, ], method, perplexity = 10, ret_model = TRUE,
                                max_iter = 300, ...))
}

test_that("new points land among their neighbours, the reference does not move", {
  for (method in c("tsne", "umap")) {
    tf <- transform_fit(method)
    new <- tf$X[-tf$keep, ]
    set.seed(2)
    Y <- neighbor_embedding_transform(new, tf$fit$model)
    expect_equal(dim(Y), c(nrow(new), 2))
    expect_true(all(is.finite(Y)))
    expect_identical(tf$fit$model$embedding, unname(tf$fit$embedding))
    # each new point's nearest reference point in the embedding is among its
    # five nearest reference rows in the data, for most points
    D <- as.matrix(dist(rbind(tf$X[tf$keep, ], new)))[-seq_along(tf$keep), seq_along(tf$keep)]
    E <- as.matrix(dist(rbind(tf$fit$embedding, Y)))[-seq_along(tf$keep), seq_along(tf$keep)]
    near <- vapply(seq_len(nrow(new)), function(i) {
      which.min(E[i, ]) %in% order(D[i, ])[1:5]
    }, logical(1))
    expect_gt(mean(near), 0.6)
  }
})

test_that("placing new points is reproducible and thread-independent", {
  for (method in c("tsne", "umap", "sampled")) {
    tf <- if (method == "sampled") transform_fit("umap", gradient = "sampled") else transform_fit(method)
    new <- tf$X[-tf$keep, ]
    set.seed(3)
    a <- neighbor_embedding_transform(new, tf$fit$model, n_threads = 1)
    set.seed(3)
    b <- neighbor_embedding_transform(new, tf$fit$model, n_threads = 2)
    expect_identical(a, b)
    set.seed(4)
    expect_false(identical(a, neighbor_embedding_transform(new, tf$fit$model)) &&
                 method == "sampled")
  }
})

test_that("the model survives saveRDS() in a new R process", {
  tf <- transform_fit("umap")
  new <- tf$X[-tf$keep, ]
  set.seed(4)
  here <- neighbor_embedding_transform(new, tf$fit$model)
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  saveRDS(list(model = tf$fit$model, new = new), file.path(dir, "in.rds"))
  skip_if_quick()  # (a child R process)
  script <- file.path(dir, "run.R")
  writeLines(c(
    "library(lsnn)",
    sprintf("x <- readRDS('%s')", file.path(dir, "in.rds")),
    "set.seed(4)",
    "Y <- neighbor_embedding_transform(x$new, x$model)",
    sprintf("saveRDS(Y, '%s')", file.path(dir, "out.rds"))
  ), script)
  status <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = FALSE,
                    stderr = FALSE)
  expect_equal(status, 0)
  expect_identical(readRDS(file.path(dir, "out.rds")), here)
})

test_that("a graph model places points given their neighbours", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  g <- extended_knn(X[1:100, ], n_neighbors = 14, n_extra = 0, nn_kind = "exact")
  set.seed(5)
  fit <- neighbor_embedding(nn_method = g, method = "umap", ret_model = TRUE, max_iter = 200)
  expect_null(fit$model$index)
  expect_output(print(fit$model), "umap, 100 points")
  q <- extended_knn_query(extended_knn(X[1:100, ], 14, 0, nn_kind = "exact",
                                       ret_index = TRUE)$index,
                          X[101:120, ], n_neighbors = 15, nn_kind = "exact")
  Y <- neighbor_embedding_transform(model = fit$model, nn_method = q)
  expect_equal(dim(Y), c(20, 2))
  expect_error(neighbor_embedding_transform(X[101:120, ], fit$model), "'nn_method'")
})

test_that("bad arguments to neighbor_embedding_transform() name themselves", {
  tf <- transform_fit("tsne")
  model <- tf$fit$model
  new <- tf$X[-tf$keep, ]
  expect_error(neighbor_embedding_transform(new, list()), "'model'")
  old <- model
  old$format_version <- 0L
  expect_error(neighbor_embedding_transform(new, old), "'model'")
  expect_error(neighbor_embedding_transform(model = model), "'X_new'")
  bad <- list(idx = matrix(1:3, nrow(new) + 1, 3, byrow = TRUE),
              dist = matrix(0:2, nrow(new) + 1, 3, byrow = TRUE))
  expect_error(neighbor_embedding_transform(new, model, nn_method = bad), "'nn_method'")
  bad <- list(idx = matrix(500L, nrow(new), 3), dist = matrix(0, nrow(new), 3))
  expect_error(neighbor_embedding_transform(new, model, nn_method = bad), "'nn_method\\$idx'")
  bad <- list(idx = matrix(1L, nrow(new), 3), dist = matrix(c(2, 1, 3), nrow(new), 3, byrow = TRUE))
  expect_error(neighbor_embedding_transform(new, model, nn_method = bad), "'nn_method\\$dist'")
  expect_error(neighbor_embedding_transform(new, model, max_iter = -1), "'max_iter'")
  expect_error(neighbor_embedding_transform(new, model, eta = 0), "'eta'")
  expect_error(neighbor_embedding_transform(new[, 1:3], model), "'X_new'|'query'")
})

test_that("the whole result of neighbor_embedding(ret_model = TRUE) is a model", {
  tf <- transform_fit("umap")
  new <- tf$X[-tf$keep, ]
  set.seed(3)
  ref <- neighbor_embedding_transform(new, tf$fit$model)
  set.seed(3)
  expect_identical(neighbor_embedding_transform(new, tf$fit), ref)
  # with ret_extra, in either form
  # (the same random stream as transform_fit()'s)
  fit <- transform_fit("umap", ret_extra = TRUE)$fit
  expect_identical(fit$embedding, tf$fit$embedding)
  set.seed(3)
  expect_identical(neighbor_embedding_transform(new, fit), ref)
  fit <- transform_fit("umap", ret_extra = c("nn", "P"))$fit
  set.seed(3)
  expect_identical(neighbor_embedding_transform(new, fit), ref)
  expect_identical(attr(ref, "iterations"), as.integer(tail(names(attr(ref, "cost")), 1)))
})

test_that("every error about a model says what to pass instead", {
  tf <- transform_fit("tsne")
  new <- tf$X[-tf$keep, ]
  remedy <- "pass what neighbor_embedding\\(\\.\\.\\., ret_model = TRUE\\) returns"
  expect_error(neighbor_embedding_transform(new), paste0("^'model' is missing: ", remedy))
  expect_error(neighbor_embedding_transform(new, list()), remedy)
  expect_error(neighbor_embedding_transform(new, "model"), remedy)
  expect_error(neighbor_embedding_transform(new, tf$fit$embedding),
               "^'model' is a matrix \\(an embedding holds no model\\): call neighbor_embedding")
  no_model <- neighbor_embedding(tf$X[tf$keep, ], "umap", max_iter = 10, ret_extra = TRUE)
  expect_error(neighbor_embedding_transform(new, no_model),
               "without ret_model = TRUE\\): call it again with ret_model = TRUE")
  index <- extended_knn(tf$X, 5, nn_kind = "exact", ret_index = TRUE)$index
  expect_error(neighbor_embedding_transform(new, index), paste0("an lsnn index .*", remedy))
  damaged <- tf$fit
  damaged$model$method <- "pca"
  expect_error(neighbor_embedding_transform(new, damaged),
               paste0("^'model' is damaged or not an lsnn model: 'model\\$method' must be one ",
                      "of .*; fit it again with neighbor_embedding\\(\\.\\.\\., ret_model = TRUE\\)"))
  old <- tf$fit$model
  old$format_version <- 0L
  expect_error(neighbor_embedding_transform(new, old), "fit it again with neighbor_embedding")
})
