# PaCMAP and LocalMAP: the pair cost against the official implementation's
# numbers and finite differences, the pairs, the layout and new points.

# Five points with one pair of each kind per row (0-based in the official
# source, 1-based here).
pacmap_reference_case <- function() {
  Y <- matrix(c(0, 1, -0.5, 3, 0.2, 0, 0.5, 2, -1, -0.7), 5)
  pairs <- list(near = matrix(c(2L, 1L, 5L, 2L, 1L)),
                mid_near = matrix(c(4L, 3L, 4L, 5L, 3L)),
                further = matrix(c(3L, 4L, 2L, 1L, 4L)))
  list(Y = Y, pairs = pairs)
}

test_that("the PaCMAP gradient and loss match the official implementation", {
  case <- pacmap_reference_case()
  # pacmap_grad(Y, near, mn, fp, w_neighbors = 2, w_MN = 30, w_FP = 1) of
  # the official source (0.9.1), in single precision
  expected <- matrix(c(-0.59518212, 0.26101387, -0.01687387, 0.16725992, 0.18378222,
                       0.03856223, 0.48613259, 0.17589527, -0.16329119, -0.53729892), 5)
  res <- cost_gradient(case$Y, case$pairs, method = "pacmap",
                       weights = c(near = 2, mid_near = 30, further = 1))
  expect_equal(res$gradient, expected, tolerance = 1e-6)
  expect_equal(res$cost, 3.5639415, tolerance = 1e-6)
  expect_equal(sum(res$pcost), res$cost)
  # the weights may be given unnamed, in the order near, mid_near, further
  expect_identical(cost_gradient(case$Y, case$pairs, "pacmap", weights = c(2, 30, 1)), res)
})

test_that("LocalMAP's near attraction matches the official implementation", {
  case <- pacmap_reference_case()
  # pacmap_grad_nearby_recip_sqrt(..., w_neighbors = 1, w_MN = 0, w_FP = 1,
  # NN_coef_recip = low_dist_thres / 2 = 5)
  expected <- matrix(c(-0.99407774, 0.62666029, 0.02962369, 0.09239347, 0.24540034,
                       0.06994202, 0.65840459, 0.08495411, -0.12316556, -0.69013518), 5)
  res <- cost_gradient(case$Y, case$pairs, method = "localmap",
                       weights = c(near = 1, mid_near = 0, further = 1), low_dist_thres = 10)
  expect_equal(res$gradient, expected, tolerance = 1e-6)
})

test_that("the PaCMAP and LocalMAP gradients are the derivatives of their costs", {
  set.seed(3)
  n <- 30
  X <- matrix(rnorm(n * 4), n)
  pairs <- neighbor_embedding(X, "pacmap", n_neighbors = 5, max_iter = 0,
                              ret_extra = "pairs")$pairs
  Y <- matrix(rnorm(n * 2, sd = 2), n)
  for (method in c("pacmap", "localmap")) {
    w <- c(near = 2, mid_near = 40, further = 1)
    g <- cost_gradient(Y, pairs, method, weights = w, low_dist_thres = 6)$gradient
    h <- 1e-5
    num <- Y * 0
    for (i in seq_len(n)) for (j in 1:2) {
      Yp <- Y; Yp[i, j] <- Yp[i, j] + h
      Ym <- Y; Ym[i, j] <- Ym[i, j] - h
      num[i, j] <- (cost_gradient(Yp, pairs, method, weights = w, low_dist_thres = 6)$cost -
                      cost_gradient(Ym, pairs, method, weights = w, low_dist_thres = 6)$cost) /
        (2 * h)
    }
    expect_lt(max(abs(num - g)) / max(abs(g)), 1e-7)
  }
})

test_that("PaCMAP's pairs follow its rules", {
  expect_identical(vapply(c(5000, 1e4, 7e4, 1e6), lsnn:::pacmap_n_neighbors, 1L),
                   c(10L, 10L, 23L, 40L))
  set.seed(1)
  X <- scurvehole(n = 600)$X
  n <- nrow(X)
  res <- neighbor_embedding(X, "pacmap", max_iter = 10, ret_extra = c("nn", "pairs"))
  p <- res$pairs
  expect_identical(dim(p$near), c(n, 10L))
  expect_identical(dim(p$mid_near), c(n, 5L))
  expect_identical(dim(p$further), c(n, 20L))
  # near pairs are the locally scaled neighbours
  g <- locally_scaled_knn(X, n_neighbors = 11, n_extra = 50, nn_kind = "exact")
  expect_identical(p$near, g$idx[, -1])
  rows <- seq_len(n)
  for (kind in names(p)) expect_false(any(p[[kind]] == rows))
  expect_false(any(vapply(rows, function(i) any(p$further[i, ] %in% p$near[i, ]), TRUE)))
  expect_false(any(vapply(rows, function(i) anyDuplicated(p$further[i, ]) > 0, TRUE)))
  expect_false(any(vapply(rows, function(i) anyDuplicated(p$mid_near[i, ]) > 0, TRUE)))
  # a mid-near partner is nearer than a random row, farther than a near one
  d <- function(m) mean(sqrt(rowSums((X[rep(rows, ncol(m)), ] - X[as.vector(m), ])^2)))
  expect_lt(d(p$near), d(p$mid_near))
  expect_lt(d(p$mid_near), d(p$further))
  # the ratios and a given n_neighbors
  p2 <- neighbor_embedding(X, "pacmap", n_neighbors = 6, mn_ratio = 1, fp_ratio = 3,
                           max_iter = 0, ret_extra = "pairs")$pairs
  expect_identical(vapply(p2, ncol, 1L), c(near = 6L, mid_near = 6L, further = 18L))
})

test_that("PaCMAP and LocalMAP separate clusters, reproducibly and for any thread count", {
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  lab <- iris$Species[!duplicated(iris[, 1:4])]
  for (method in c("pacmap", "localmap")) {
    set.seed(4)
    Y1 <- neighbor_embedding(X, method, n_threads = 1)
    set.seed(4)
    Y2 <- neighbor_embedding(X, method, n_threads = 2)
    expect_identical(Y1, Y2)
    expect_identical(dim(Y1), c(nrow(X), 2L))
    nn <- extended_knn(Y1, 10, 0, nn_kind = "exact")$idx[, -1]
    expect_gt(mean(matrix(lab[nn], ncol = 10) == lab), 0.9)
  }
  set.seed(4)
  r <- neighbor_embedding(X, "localmap", ret_extra = TRUE)
  set.seed(4)
  p <- neighbor_embedding(X, "pacmap", ret_extra = TRUE)
  # the same pairs to begin with; LocalMAP redraws its further pairs
  expect_identical(r$pairs$near, p$pairs$near)
  expect_false(identical(r$pairs$further, p$pairs$further))
  expect_identical(names(r$cost), as.character(seq(0, 450, by = 50)))
  expect_identical(r$iterations, 450L)
})

test_that("PaCMAP starts from the principal components and reduces wide data", {
  set.seed(5)
  X <- matrix(rnorm(300 * 120), 300)
  X[1:150, 1:3] <- X[1:150, 1:3] + 6
  r <- neighbor_embedding(X, "pacmap", max_iter = 0, ret_extra = TRUE, ret_model = TRUE)
  expect_identical(dim(r$model$pca$rotation), c(120L, 100L))
  pc <- prcomp(X)$x[, 1:2]
  expect_equal(abs(cor(r$embedding[, 1], pc[, 1])), 1, tolerance = 1e-6)
  expect_equal(sd(r$embedding[, 1]), 0.01 * sd(pc[, 1]), tolerance = 1e-6)
  # pca = 0 keeps all the columns
  r0 <- neighbor_embedding(X, "pacmap", max_iter = 0, pca = 0, ret_model = TRUE)
  expect_null(r0$model$pca)
})

test_that("new points land with their counterparts in a PaCMAP model", {
  set.seed(6)
  X <- as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])
  lab <- iris$Species[!duplicated(iris[, 1:4])]
  train <- seq(1, nrow(X), by = 2)
  for (method in c("pacmap", "localmap")) {
    fit <- neighbor_embedding(X[train, ], method, ret_model = TRUE)
    Yn <- neighbor_embedding_transform(X[-train, ], fit$model)
    expect_identical(dim(Yn), c(nrow(X) - length(train), 2L))
    nn <- extended_knn_query(extended_knn(fit$embedding, 10, 0, nn_kind = "exact",
                                          ret_index = TRUE)$index, Yn, n_neighbors = 10)
    acc <- mean(matrix(lab[train][nn$idx], ncol = 10) == lab[-train])
    expect_gt(acc, 0.85)
    expect_identical(names(attr(Yn, "cost")), "100")
  }
})

test_that("PaCMAP takes a given graph and checks its arguments", {
  set.seed(7)
  X <- scurvehole(n = 300)$X
  g <- locally_scaled_knn(X, n_neighbors = 11, nn_kind = "exact")
  set.seed(1)
  a <- neighbor_embedding(X, "pacmap", nn_method = g, max_iter = 20, ret_extra = "pairs")
  expect_identical(a$pairs$near, g$idx[, -1])
  expect_error(neighbor_embedding(nn_method = g, method = "pacmap"), "give 'X'")
  expect_error(neighbor_embedding(X, "pacmap", nn_method = g, n_neighbors = 20),
               "'nn_method' has 10 neighbours")
  expect_error(neighbor_embedding(X, "pacmap", phases = c(100, 100)), "'phases'")
  expect_error(neighbor_embedding(X, "pacmap", phases = c(1, -1, 2)), "'phases'")
  expect_error(neighbor_embedding(X, "pacmap", init = "spectral"), "not available for PaCMAP")
  expect_error(neighbor_embedding(X, "pacmap", mn_ratio = -1), "'mn_ratio'")
  expect_error(neighbor_embedding(X, "pacmap", low_dist_thres = 0), "'low_dist_thres'")
  expect_error(neighbor_embedding(X, "pca"), "'method' must be one of")
  expect_error(cost_gradient(X[, 1:2], list(near = g$idx[, -1]), "pacmap"),
               "'P' must be a list of pair sets")
  bad <- list(near = g$idx[, -1], mid_near = g$idx[, 1:2], further = g$idx[, 2:3])
  expect_error(cost_gradient(X[, 1:2], bad, "pacmap"), "'P\\$mid_near' pairs a point with itself")
  expect_error(cost_gradient(X[, 1:2], a$pairs, "pacmap", weights = c(1, 2)), "'weights'")
})

test_that("a start on one spot is spread with a warning, and a shrinking layout is rescaled", {
  set.seed(8)
  X <- matrix(rnorm(100 * 5), 100)
  expect_warning(Y <- neighbor_embedding(X, "tsne", perplexity = 10, init = matrix(0, 100, 2)),
                 "puts 100 of the 100 points on one spot")
  expect_gt(min(apply(Y, 2, sd)), 1)
  expect_warning(Y <- neighbor_embedding(X, "umap", init = matrix(1, 100, 2), max_iter = 50),
                 "puts 100 of the 100 points on one spot")
  expect_gt(min(apply(Y, 2, sd)), 0.1)
  # early exaggeration shrinks unstructured data; the layout stays resolvable
  for (n in c(100, 200, 300)) {
    set.seed(n)
    X <- matrix(runif(n * 10), n)
    r <- neighbor_embedding(X, "tsne", max_iter = 260, ret_model = TRUE)
    expect_gt(min(apply(r$embedding, 2, sd)), 1e-6)
    # new points land at the layout's scale
    Yn <- neighbor_embedding_transform(X[1:20, ] + 1e-6, r$model)
    expect_true(all(is.finite(Yn)))
    expect_lt(max(abs(Yn)), 3 * max(abs(r$embedding)))
  }
})

# The pair sums of PaCMAP and LocalMAP (pacmap.h's PairTiles) are taken in
# an order fixed by the points' blocks, never by the threads: 3000 points
# make 12 blocks of 256 (in 2-D and 3-D), so the rounds share their tiles
# among threads.
test_that("PaCMAP's pair sums are the same for 1 and 2 threads", {
  set.seed(71)
  n <- 3000
  pair_matrix <- function(k) {
    m <- matrix(sample.int(n - 1L, n * k, TRUE), n)
    m + (m >= seq_len(n))
  }
  pairs <- list(near = pair_matrix(6), mid_near = pair_matrix(3), further = pair_matrix(9))
  for (d in 2:3) {
    Y <- matrix(rnorm(n * d, sd = 5), n)
    for (method in c("pacmap", "localmap")) {
      one <- cost_gradient(Y, pairs, method = method, weights = c(2, 30, 1), n_threads = 1)
      two <- cost_gradient(Y, pairs, method = method, weights = c(2, 30, 1), n_threads = 2)
      expect_identical(one, two)
    }
  }
  # a LocalMAP layout through its redraws of the further pairs (after steps
  # 11 and 21), and new points placed against fixed ones
  layout <- lsnn:::ne_layout_settings("adam", 25L, 5L, 1, phases = c(5L, 5L, 15L),
                                      local = TRUE, constant = FALSE)
  Y0 <- matrix(rnorm(n * 2, sd = 5), n)
  run <- function(threads) {
    lsnn:::.pacmap_layout(Y0, 0L, pairs, layout, c(3L, 4L), threads, FALSE, TRUE)
  }
  one <- run(1)
  expect_identical(one, run(2))
  expect_false(identical(one$further, pairs$further))
  m <- 200L
  new_pairs <- list(near = matrix(sample.int(n, m * 6, TRUE), m),
                    mid_near = matrix(0L, m, 0),
                    further = matrix(sample.int(n, m * 9, TRUE), m))
  placing <- lsnn:::ne_layout_settings("adam", 20L, 0L, 0.1)
  Y1 <- rbind(one$Y, matrix(rnorm(m * 2), m))
  place <- function(threads) {
    lsnn:::.pacmap_layout(Y1, n, new_pairs, placing, c(5L, 6L), threads, FALSE, FALSE)
  }
  placed <- place(1)
  expect_identical(placed, place(2))
  expect_identical(placed$Y[seq_len(n), ], one$Y)
})

test_that("PaCMAP runs from sharded data and its sharded graph as from memory", {
  set.seed(3)
  X <- rbind(matrix(rnorm(300 * 5), 300), matrix(rnorm(300 * 5, mean = 4), 300))
  case <- sharded_lsnn_case(X, 250)
  on.exit(unlink(case$dirs, recursive = TRUE))
  shards <- case$shards
  g <- case$graph
  for (method in c("pacmap", "localmap")) {
    from_shards <- neighbor_embedding(shards, method, nn_method = g, max_iter = 60,
                                      phases = c(20, 20, 20), seed = 7, n_threads = 2)
    in_memory <- neighbor_embedding(X, method, nn_method = read_graph_shards(g), max_iter = 60,
                                    phases = c(20, 20, 20), seed = 7)
    expect_identical(from_shards, in_memory)
  }
  # the graph's out_dir names it as well as the object
  expect_identical(neighbor_embedding(shards, "pacmap", nn_method = case$dirs[2], max_iter = 10,
                                      seed = 7),
                   neighbor_embedding(shards, "pacmap", nn_method = g, max_iter = 10, seed = 7))
  expect_error(neighbor_embedding(shards, "pacmap", nn_method = "approx"), "'nn_method'")
  expect_error(neighbor_embedding(shards, "pacmap", nn_method = case$dirs[1]),
               "'nn_method'.*no finished sharded graph")
  res <- neighbor_embedding(shards, "pacmap", nn_method = g, max_iter = 5, seed = 1,
                            ret_extra = "pairs")
  far <- res$pairs$further
  expect_equal(dim(far), c(600L, 20L))
  expect_false(any(far == seq_len(600)))
  near <- res$pairs$near
  expect_false(any(vapply(seq_len(600), function(i) any(far[i, ] %in% near[i, ]), TRUE)))

  expect_error(neighbor_embedding(shards, "umap", nn_method = g), "shard set.*pacmap")
  expect_error(neighbor_embedding(shards, "pacmap"), "'nn_method'")
  expect_error(neighbor_embedding(shards, "pacmap", nn_method = g, ret_model = TRUE),
               "'ret_model'")
  other <- write_shards(X[1:500, ], tempfile("pm-other"), rows_per_shard = 250)
  on.exit(unlink(dirname(other$files[1]), recursive = TRUE), add = TRUE)
  expect_error(neighbor_embedding(other, "pacmap", nn_method = g), "graph of other shards")
})

test_that("the Adam stepper is layout.h's, for objectives with a phase hook alone", {
  # one layout entry chooses every stepper from the layout list: PaCMAP's
  # objective runs under Adam only (the other steppers would not call its
  # phase hook), and the cost evaluator, which has no hook, not under Adam
  set.seed(8)
  n <- 30L
  X <- matrix(rnorm(n * 3), n)
  Y0 <- matrix(rnorm(n * 2), n)
  P <- perplexity_affinities(X, 5)
  cost <- lsnn:::ne_cost_list(lsnn:::ne_cost_settings("umap"), "exact")
  adam <- lsnn:::ne_layout_settings("adam", 5L, 0L, 1)
  expect_error(lsnn:::.optimize_layout(Y0, P, cost, adam, 1L, FALSE, "generic", "read"),
               "the Adam stepper needs an objective with a phase hook")
  pairs <- list(near = matrix(c(2:n, 1L), n), mid_near = matrix(c(3:n, 1:2), n),
                further = matrix(c(4:n, 1:3), n))
  descent <- c(lsnn:::ne_layout_settings("gradient_descent", 5L, 0L, 1),
               adam[c("phases", "local", "low_dist_thres", "constant")])
  expect_error(lsnn:::.pacmap_layout(Y0, 0L, pairs, descent, c(1L, 2L), 1L, FALSE, FALSE),
               "an objective with a phase hook needs the Adam stepper")
  expect_length(lsnn:::.pacmap_layout(Y0, 0L, pairs, adam, c(1L, 2L), 1L, FALSE, FALSE)$cost, 1L)
})
