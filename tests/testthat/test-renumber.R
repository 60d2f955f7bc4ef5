# Large PaCMAP and LocalMAP layouts run in a breadth-first order of the near
# graph (R/renumber.R, inst/include/lsnn/embed/renumber.h) and return
# everything in the user's order. The threshold is lowered through the
# internal option lsnn.renumber so that small data take that path.

# Four separated clusters of 5-D points in random row order, with row names.
renumber_case <- function(n = 1200, seed = 1) {
  set.seed(seed)
  label <- sample.int(4, n, TRUE)
  X <- matrix(rnorm(n * 5), n) + 8 * diag(5)[label, ]
  rownames(X) <- sprintf("p%04d", seq_len(n))
  list(X = X, label = label)
}

# The share of each row's k nearest rows in the layout Y that share its label.
layout_purity <- function(Y, label, k = 10) {
  idx <- extended_knn(unname(Y), k, 0, nn_kind = "exact")$idx[, -1, drop = FALSE]
  mean(matrix(label[idx], ncol = k) == label)
}

test_that("the breadth-first order is a permutation that keeps a graph's clusters together", {
  set.seed(2)
  n <- 600
  # two groups of points that list only their own group; points 1 to 20 of
  # each group are listed by no one, and point 600 lists nothing but itself
  group <- rep(1:2, length.out = n)
  idx <- t(vapply(seq_len(n), function(i) {
    same <- which(group == group[i] & seq_len(n) > 40)
    c(i, sample(setdiff(same, i), 5))
  }, integer(6)))
  idx[n, ] <- n
  o <- lsnn:::.neighbour_order(idx, 1L, 5L)
  expect_identical(sort(o), seq_len(n))
  # each group is one run of positions, apart from the point that lists no one
  runs <- rle(group[o[o != n]])
  expect_length(runs$lengths, 2)
  # a point listed by no one comes right after its first neighbour (or after
  # that neighbour's other such points)
  pos <- integer(n)
  pos[o] <- seq_len(n)
  unlisted <- setdiff(seq_len(n), idx[, -1])
  unlisted <- unlisted[unlisted != n]
  host <- idx[cbind(unlisted, 2L)]
  gap <- pos[unlisted] - pos[host]
  expect_true(all(gap >= 1 & gap <= 40))
  # the same graph gives the same order; the order does not look at distances
  expect_identical(lsnn:::.neighbour_order(idx, 1L, 5L), o)
})

test_that("a renumbered PaCMAP layout is the layout of the renumbered points, in the user's order", {
  case <- renumber_case(800)
  n <- nrow(case$X)
  counts <- lsnn:::pacmap_pair_counts(n, 10L, 0.5, 2)
  graph <- locally_scaled_knn(case$X, n_neighbors = 11, n_extra = 5, scale_from = 5,
                              scale_to = 7, nn_kind = "exact")
  data <- lsnn:::prepare_data(case$X, "euclidean", "X")
  mid <- lsnn:::.pacmap_mid_near(data, "euclidean", counts[["mid_near"]], c(1L, 2L), 1L,
                                 lsnn:::simd_option())
  Y0 <- matrix(rnorm(n * 2, sd = 1e-2), n)
  o <- lsnn:::.neighbour_order(graph$idx, 1L, 10L)
  rank <- integer(n)
  rank[o] <- seq_len(n)
  for (local in c(FALSE, TRUE)) {
    layout <- lsnn:::ne_layout_settings("adam", 40L, 0L, 1, phases = c(10L, 10L, 20L),
                                        local = local, constant = FALSE)
    given <- lsnn:::.pacmap_layout(Y0, 0L, list(near = graph$idx, near_from = 1L, near_k = 10L,
                                               mid_near = mid, further = NULL,
                                               n_further = counts[["further"]]),
                                   layout, c(3L, 4L), 1L, FALSE, TRUE, o)
    # the same run on the points and pairs renumbered by hand
    renumbered <- function(m) matrix(rank[m[o, , drop = FALSE]], n)
    by_hand <- lsnn:::.pacmap_layout(Y0[o, ], 0L,
                                     list(near = renumbered(graph$idx[, 2:11]),
                                          mid_near = renumbered(mid), further = NULL,
                                          n_further = counts[["further"]]),
                                     layout, c(3L, 4L), 1L, FALSE, TRUE)
    expect_identical(given$Y, by_hand$Y[rank, ])
    expect_identical(given$cost, by_hand$cost)
    expect_identical(given$further, matrix(o[by_hand$further[rank, ]], n))
    # and it is the same on two threads
    expect_identical(lsnn:::.pacmap_layout(Y0, 0L, list(near = graph$idx, near_from = 1L,
                                                        near_k = 10L, mid_near = mid,
                                                        further = NULL,
                                                        n_further = counts[["further"]]),
                                           layout, c(3L, 4L), 2L, FALSE, TRUE, o), given)
  }
  # orders that are not permutations of the points are refused
  pairs <- list(near = graph$idx, near_from = 1L, near_k = 10L, mid_near = mid,
                further = NULL, n_further = counts[["further"]])
  layout <- lsnn:::ne_layout_settings("adam", 2L, 0L, 1, phases = c(1L, 1L, 0L),
                                      local = FALSE, constant = FALSE)
  bad <- o
  bad[1] <- bad[2]
  expect_error(lsnn:::.pacmap_layout(Y0, 0L, pairs, layout, c(3L, 4L), 1L, FALSE, FALSE, bad),
               "permutation")
  expect_error(lsnn:::.pacmap_layout(Y0, 0L, pairs, layout, c(3L, 4L), 1L, FALSE, FALSE, o[-1]),
               "every point")
})

test_that("renumbered PaCMAP and LocalMAP layouts return rows, names and extras in the user's order", {
  case <- renumber_case(1200)
  X <- case$X
  n <- nrow(X)
  old <- options(lsnn.renumber = FALSE)
  on.exit(options(old))
  for (method in c("pacmap", "localmap")) {
    options(lsnn.renumber = FALSE)
    plain <- neighbor_embedding(X, method, seed = 5, ret_extra = TRUE)
    options(lsnn.renumber = 500)
    seen <- NULL
    watch <- function(iteration, Y) {
      seen <<- Y
      TRUE
    }
    one <- neighbor_embedding(X, method, seed = 5, ret_extra = TRUE, callback = watch)
    two <- neighbor_embedding(X, method, seed = 5, ret_extra = TRUE, n_threads = 2)
    # the renumbered path ran: its further pairs differ from the plain run's
    expect_false(identical(one$pairs$further, plain$pairs$further))
    expect_identical(one$embedding, two$embedding)
    expect_identical(one$pairs, two$pairs)
    # without the extras (the pair lists then freed once grouped) the same
    bare <- neighbor_embedding(X, method, seed = 5)
    expect_identical(as.vector(bare), as.vector(one$embedding))
    expect_identical(rownames(one$embedding), rownames(X))
    # the graph and the near and mid-near pairs are the user's, as without
    expect_identical(one$nn, plain$nn)
    expect_identical(one$pairs$near, plain$pairs$near)
    expect_identical(one$pairs$mid_near, plain$pairs$mid_near)
    # the further pairs are the user's rows: never the row or one of its near
    # partners (a scrambled numbering would hit them by chance)
    far <- one$pairs$further
    expect_false(any(far == seq_len(n)))
    near_too <- vapply(seq_len(n), function(i) any(far[i, ] %in% one$pairs$near[i, ]), TRUE)
    expect_false(any(near_too))
    # the callback saw the rows in the user's order, named
    expect_identical(rownames(seen), rownames(X))
    expect_identical(unname(seen), unname(one$embedding))
    # each row sits among rows of its own cluster, as without renumbering
    expect_gt(layout_purity(one$embedding, case$label), 0.99)
    expect_gt(layout_purity(plain$embedding, case$label), 0.99)
    # near partners are close in the layout, PaCMAP's further ones far
    Y <- one$embedding
    pair_dist <- function(m) mean(sqrt(rowSums((Y[rep(seq_len(n), ncol(m)), ] - Y[c(m), ])^2)))
    if (method == "pacmap") expect_lt(pair_dist(one$pairs$near), 0.2 * pair_dist(far))
  }
  # LocalMAP redraws its further pairs among points near in the layout: in
  # the user's numbering they are near their rows there
  Y <- one$embedding
  redrawn <- sqrt(rowSums((Y[rep(seq_len(n), ncol(far)), ] - Y[c(far), ])^2))
  expect_gt(mean(redrawn <= 10), 0.5)
})

test_that("a renumbered PaCMAP model places new points among their own rows", {
  case <- renumber_case(1200, seed = 3)
  old <- options(lsnn.renumber = 500)
  on.exit(options(old))
  fit <- neighbor_embedding(case$X[-(1:40), ], "pacmap", seed = 2, ret_model = TRUE)
  expect_identical(rownames(fit$embedding), rownames(case$X)[-(1:40)])
  placed <- neighbor_embedding_transform(case$X[1:40, ], fit$model, seed = 4)
  # each new point's nearest reference point in the layout is of its cluster
  ref <- fit$model$embedding
  nearest <- apply(placed, 1, function(y) which.min(colSums((t(ref) - y)^2)))
  expect_gt(mean(case$label[-(1:40)][nearest] == case$label[1:40]), 0.95)
})

test_that("small layouts are not renumbered unless asked, and the option is checked", {
  case <- renumber_case(600, seed = 4)
  old <- options(lsnn.renumber = NULL)
  on.exit(options(old))
  default <- neighbor_embedding(case$X, "pacmap", seed = 1, max_iter = 30, ret_extra = "pairs")
  options(lsnn.renumber = FALSE)
  expect_identical(neighbor_embedding(case$X, "pacmap", seed = 1, max_iter = 30,
                                      ret_extra = "pairs"), default)
  expect_null(lsnn:::layout_order(matrix(1L, 10, 3), 1L, 2L, 10))
  options(lsnn.renumber = TRUE)
  expect_length(lsnn:::layout_order(cbind(1:10, c(2:10, 1L)), 1L, 1L, 10), 10)
  options(lsnn.renumber = "yes")
  expect_error(lsnn:::layout_order(matrix(1L, 10, 3), 1L, 2L, 10), "lsnn.renumber")
})

test_that("a renumbered sampled layout is the layout of the renumbered points, in the user's order", {
  case <- renumber_case(900, seed = 6)
  g <- extended_knn(case$X, 10, 0, nn_kind = "exact")
  P <- umap_affinities(nn_method = g)
  n <- nrow(case$X)
  set.seed(3)
  Y0 <- matrix(rnorm(2 * n), n)
  old <- options(lsnn.renumber = TRUE)
  on.exit(options(old))
  seen <- NULL
  watch <- function(iteration, Y) {
    seen <<- Y
    FALSE
  }
  for (method in c("umap", "largevis")) {
    one <- neighbor_embedding(P = P, method = method, init = Y0, max_iter = 40, seed = 2,
                              gradient = "sampled", callback = watch, epoch = 40)
    two <- neighbor_embedding(P = P, method = method, init = Y0, max_iter = 40, seed = 2,
                              gradient = "sampled", n_threads = 2)
    expect_identical(one, two)
    expect_identical(unname(seen), unname(one))
    # the same run on the points renumbered by hand
    o <- lsnn:::.renumber_affinities(P)$order
    expect_identical(sort(o), seq_len(n))
    expect_false(identical(o, seq_len(n)))
    options(lsnn.renumber = FALSE)
    by_hand <- neighbor_embedding(P = P[o, o], method = method, init = Y0[o, ], max_iter = 40,
                                  seed = 2, gradient = "sampled")
    options(lsnn.renumber = TRUE)
    expect_identical(one[o, ], by_hand)
  }
})

test_that("renumbered densMAP returns its radii, P and rows in the user's order", {
  case <- renumber_case(900, seed = 7)
  old <- options(lsnn.renumber = FALSE)
  on.exit(options(old))
  plain <- neighbor_embedding(case$X, "umap", densmap = TRUE, seed = 4, max_iter = 60,
                              ret_extra = c("radii", "P", "nn"))
  options(lsnn.renumber = TRUE)
  # (a callback of uwot's form, three arguments)
  seen <- NULL
  watch <- function(epoch, n_epochs, Y) {
    seen <<- Y
    NULL
  }
  one <- neighbor_embedding(case$X, "umap", densmap = TRUE, seed = 4, max_iter = 60,
                            ret_extra = c("radii", "P", "nn"), callback = watch, epoch = 60)
  expect_identical(seen, one$embedding)
  expect_false(identical(one$embedding, plain$embedding))
  expect_identical(rownames(one$embedding), rownames(case$X))
  expect_identical(one$P, plain$P)
  expect_identical(one$nn, plain$nn)
  expect_identical(one$radii$data, plain$radii$data)
  ab <- umap_ab(1, 0.1)
  again <- lsnn:::dens_radii_result(one$radii$data, one$embedding, one$P,
                                    list(a = ab[["a"]], b = ab[["b"]]), 1L)
  expect_equal(one$radii$layout, again$layout)
  expect_gt(cor(one$radii$data, one$radii$layout), 0.5)
  bare <- neighbor_embedding(case$X, "umap", densmap = TRUE, seed = 4, max_iter = 60,
                             n_threads = 2)
  expect_identical(unname(bare), unname(one$embedding))
})
