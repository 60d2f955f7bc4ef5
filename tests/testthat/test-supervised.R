# Supervised layouts (neighbor_embedding(y = )): the data's affinities mixed
# with a graph of labels or numeric targets (R/supervised.R).

sup_iris <- function() {
  keep <- !duplicated(iris[, 1:4])
  list(X = as.matrix(iris[keep, 1:4]), label = iris$Species[keep])
}

# The share of points whose 10 nearest others in Y (rows of `from`, all of
# them when NULL) mostly carry their label.
knn_label_accuracy <- function(Y, label, from = NULL, label_from = label, k = 10) {
  ref <- if (is.null(from)) Y else from
  D <- as.matrix(stats::dist(rbind(Y, ref)))[seq_len(nrow(Y)), nrow(Y) + seq_len(nrow(ref))]
  if (is.null(from)) diag(D) <- Inf
  votes <- apply(D, 1, function(d) {
    tab <- table(label_from[order(d)[seq_len(k)]])
    names(tab)[which.max(tab)]
  })
  mean(votes == as.character(label))
}

test_that("target_weight = 0 and all-NA labels give the data's graph and layout bit for bit", {
  d <- sup_iris()
  for (method in c("umap", "tsne")) {
    set.seed(1)
    plain <- neighbor_embedding(d$X, method, max_iter = 30, ret_extra = c("P", "nn"),
                                stop_lying_iter = 10)
    set.seed(1)
    zero <- neighbor_embedding(d$X, method, max_iter = 30, ret_extra = c("P", "nn"),
                               stop_lying_iter = 10, y = d$label, target_weight = 0)
    expect_identical(zero, plain)
    set.seed(1)
    zero_num <- neighbor_embedding(d$X, method, max_iter = 30, ret_extra = c("P", "nn"),
                                   stop_lying_iter = 10, y = d$X[, 3], target_weight = 0)
    expect_identical(zero_num, plain)
    set.seed(1)
    none <- neighbor_embedding(d$X, method, max_iter = 30, ret_extra = c("P", "nn"),
                               stop_lying_iter = 10, y = factor(rep(NA, nrow(d$X))))
    expect_identical(none, plain)
    set.seed(1)
    none_num <- neighbor_embedding(d$X, method, max_iter = 30, ret_extra = c("P", "nn"),
                                   stop_lying_iter = 10, y = rep(NA_real_, nrow(d$X)))
    expect_identical(none_num, plain)
  }
})

test_that("labels weaken edges between labels as uwot's categorical intersection", {
  d <- sup_iris()
  P0 <- neighbor_embedding(d$X, "umap", max_iter = 0, ret_extra = "P")$P
  for (w in c(0.3, 0.5, 1)) {
    set.seed(2)
    label <- d$label
    label[sample(length(label), 30)] <- NA
    P <- neighbor_embedding(d$X, "umap", max_iter = 0, ret_extra = "P", y = label,
                            target_weight = w)$P
    expect_s4_class(P, "dgCMatrix")
    expect_identical(P, Matrix::t(P))
    expect_lte(max(P@x), 1)
    # by hand: edge factors, each point's memberships over its largest, fuzzy union
    A <- as.matrix(P0)
    li <- as.integer(label)
    same <- outer(li, li, "==")
    f <- ifelse(is.na(same), exp(-1), ifelse(same, 1, exp(-2.5 / (1 - w))))
    A <- A * f
    A <- sweep(A, 2, apply(A, 2, max), "/")
    A[!is.finite(A)] <- 0
    expected <- A + t(A) - A * t(A)
    expect_equal(as.matrix(P), expected, tolerance = 1e-12, ignore_attr = TRUE)
    if (w == 1) {
      i <- Matrix::summary(P)
      differ <- li[i$i] != li[i$j]
      expect_false(any(differ, na.rm = TRUE))
    }
  }
})

test_that("the labels' graph matches uwot's intersections", {
  skip_if_not_installed("uwot")
  uwot_ns <- asNamespace("uwot")
  skip_if_not(exists("categorical_simplicial_set_intersection", uwot_ns) &&
                exists("set_intersect", uwot_ns), "uwot's internal intersections not found")
  d <- sup_iris()
  V <- neighbor_embedding(d$X, "umap", max_iter = 0, ret_extra = "P")$P
  set.seed(3)
  label <- d$label
  label[sample(length(label), 30)] <- NA
  for (w in c(0.2, 0.5, 0.9)) {
    target <- lsnn:::check_target(label, w, NULL, "euclidean", "umap", 15L)
    ours <- lsnn:::supervise_affinities(V, target, "umap", 1L, FALSE)
    theirs <- uwot_ns$categorical_simplicial_set_intersection(V, as.integer(label),
                                                              far_dist = 2.5 / (1 - w))
    expect_equal(as.matrix(ours), as.matrix(theirs), tolerance = 1e-12, ignore_attr = TRUE)
  }
  # numeric targets: the same target graph, intersected and reset
  values <- matrix(d$X[, 3])
  none <- rep(FALSE, nrow(values))
  Vy <- lsnn:::target_graph(values, none, 10L, "euclidean", 1L, FALSE)
  for (w in c(0.2, 0.5, 0.8)) {
    ours <- lsnn:::target_reset(lsnn:::target_intersection(V, Vy, none, w))
    theirs <- uwot_ns$set_intersect(V, Vy, w)
    expect_equal(as.matrix(ours), as.matrix(theirs), tolerance = 1e-10, ignore_attr = TRUE)
  }
})

test_that("a factor of one level, characters and t-SNE's renormalised P", {
  d <- sup_iris()
  P0 <- neighbor_embedding(d$X, "umap", max_iter = 0, ret_extra = "P")$P
  one <- factor(rep("a", nrow(d$X)))
  set.seed(4)
  res <- neighbor_embedding(d$X, "umap", max_iter = 20, y = one, ret_extra = "P")
  expect_true(all(is.finite(res$embedding)))
  # no edge changes; the reset makes each membership a + a - a^2
  expect_equal(res$P@x, 2 * P0@x - P0@x^2, tolerance = 1e-14)
  # characters are the factor of their values
  ch <- as.character(d$label)
  set.seed(5)
  a <- neighbor_embedding(d$X, "umap", max_iter = 20, y = ch, ret_extra = "P")
  set.seed(5)
  b <- neighbor_embedding(d$X, "umap", max_iter = 20, y = d$label, ret_extra = "P")
  expect_identical(a, b)
  # t-SNE and LargeVis: the mixed P is symmetric and sums to 1
  for (method in c("tsne", "largevis")) {
    T0 <- neighbor_embedding(d$X, method, max_iter = 0, ret_extra = "P")$P
    T1 <- neighbor_embedding(d$X, method, max_iter = 0, ret_extra = "P", y = d$label)$P
    expect_equal(sum(T1@x), 1, tolerance = 1e-12)
    expect_identical(T1, Matrix::t(T1))
    li <- as.integer(d$label)
    f <- ifelse(outer(li, li, "=="), 1, exp(-5))
    expected <- as.matrix(T0) * f
    expect_equal(as.matrix(T1), expected / sum(expected), tolerance = 1e-12,
                 ignore_attr = TRUE)
    T_one <- neighbor_embedding(d$X, method, max_iter = 0, ret_extra = "P", y = one)$P
    expect_equal(T_one, T0, tolerance = 1e-14)
  }
})

test_that("numeric targets with NA rows, and a matrix of targets", {
  d <- sup_iris()
  target <- d$X[, 3]
  target[c(1, 60, 120)] <- NA
  P0 <- neighbor_embedding(d$X, "umap", max_iter = 0, ret_extra = "P")$P
  for (method in c("umap", "tumap", "tsne", "largevis")) {
    set.seed(6)
    res <- neighbor_embedding(d$X, method, max_iter = 20, y = target, ret_extra = "P",
                              target_n_neighbors = 8, stop_lying_iter = 10)
    expect_true(all(is.finite(res$embedding)))
    expect_identical(res$P, Matrix::t(res$P))
    if (method %in% c("tsne", "largevis")) expect_equal(sum(res$P@x), 1, tolerance = 1e-12)
  }
  # an edge at an unlabelled point takes the target membership exp(-1)
  unl <- is.na(target)
  Vy <- lsnn:::target_graph(matrix(target), unl, 8L, "euclidean", 1L, FALSE)
  expect_equal(sum(Vy[unl, ]), 0)
  M <- lsnn:::target_intersection(P0, Vy, unl, 0.5)
  expect_equal(as.matrix(M)[unl, ], exp(-1) * as.matrix(P0)[unl, ], ignore_attr = TRUE)
  # every extra that returns the affinities returns the mixed ones; "nn" the data's graph
  set.seed(6)
  every <- neighbor_embedding(d$X, "umap", max_iter = 5, y = target, ret_extra = TRUE)
  set.seed(6)
  some <- neighbor_embedding(d$X, "umap", max_iter = 5, y = target, ret_extra = c("P", "fgraph", "nn"))
  set.seed(6)
  plain <- neighbor_embedding(d$X, "umap", max_iter = 5, ret_extra = "nn")
  expect_identical(every$P, some$P)
  expect_identical(some$fgraph, some$P)
  expect_identical(some$nn, plain$nn)
  expect_false(identical(some$P, P0))
  # a matrix of targets, in another metric; a one-column matrix is the vector
  set.seed(7)
  a <- neighbor_embedding(d$X, "umap", max_iter = 20, y = d$X[, 3:4], target_metric = "manhattan",
                          ret_extra = "P")
  expect_true(all(is.finite(a$embedding)))
  set.seed(7)
  v <- neighbor_embedding(d$X, "umap", max_iter = 20, y = d$X[, 3])
  set.seed(7)
  m <- neighbor_embedding(d$X, "umap", max_iter = 20, y = d$X[, 3, drop = FALSE])
  expect_identical(v, m)
  # target_n_neighbors defaults to n_neighbors
  set.seed(8)
  k1 <- neighbor_embedding(d$X, "umap", max_iter = 0, y = d$X[, 3], n_neighbors = 10,
                           ret_extra = "P")$P
  k2 <- neighbor_embedding(d$X, "umap", max_iter = 0, y = d$X[, 3], n_neighbors = 10,
                           target_n_neighbors = 10, ret_extra = "P")$P
  expect_identical(k1, k2)
  k3 <- neighbor_embedding(d$X, "umap", max_iter = 0, y = d$X[, 3], n_neighbors = 10,
                           target_n_neighbors = 30, ret_extra = "P")$P
  expect_false(identical(k1, k3))
})

test_that("y of the wrong length or type, and bad target settings, are errors naming them", {
  d <- sup_iris()
  n <- nrow(d$X)
  ne <- function(...) neighbor_embedding(d$X, "umap", max_iter = 5, ...)
  expect_error(ne(y = d$label[-1]), "'y' must have one element per point, 149 \\(it has 148\\)")
  expect_error(ne(y = d$X[-1, 3:4]), "'y' must have one row per point")
  expect_error(ne(y = c(d$X[, 3], 1)), "'y' must have one element per point")
  expect_error(ne(y = as.list(d$label)), "'y' must be a factor.*a list")
  expect_error(ne(y = rep(NA, n)), "'y' must be a factor.*logical")
  expect_error(ne(y = rep(TRUE, n)), "'y' must be a factor.*logical")
  expect_error(ne(y = data.frame(a = d$X[, 3])), "'y' must be a factor")
  expect_error(ne(y = complex(n)), "'y' must be a factor")
  expect_error(ne(y = replace(d$X[, 3], 2, Inf)), "'y' has infinite values")
  expect_error(ne(y = d$X[, 0]), "'y' has no columns")
  expect_error(ne(y = d$label, target_weight = 2), "'target_weight'")
  expect_error(ne(y = d$label, target_weight = NA), "'target_weight'")
  expect_error(ne(y = d$X[, 3], target_n_neighbors = 1), "'target_n_neighbors'")
  expect_error(ne(y = d$X[, 3], target_metric = "hamming"), "'target_metric'")
  expect_error(neighbor_embedding(d$X, "pacmap", y = d$label),
               "'y' is not available for method = \"pacmap\"")
  expect_error(neighbor_embedding(d$X, "localmap", y = d$label),
               "'y' is not available for method = \"localmap\"")
  # labels that leave no edge
  X <- matrix(rnorm(20), 10)
  expect_error(neighbor_embedding(X, "umap", n_neighbors = 3, y = factor(1:10),
                                  target_weight = 1, max_iter = 5),
               "'y' leaves no affinities")
})

test_that("supervised layouts do not depend on the number of threads", {
  d <- sup_iris()
  for (case in list(list("umap", d$label), list("tsne", d$X[, 3]),
                    list("largevis", d$label), list("tumap", d$X[, 3:4]))) {
    run <- function(threads) {
      set.seed(9)
      neighbor_embedding(d$X, case[[1]], max_iter = 40, y = case[[2]], n_threads = threads,
                         ret_extra = "P", stop_lying_iter = 20)
    }
    expect_identical(run(1), run(2), info = case[[1]])
  }
})

test_that("labels pull overlapping clusters apart", {
  set.seed(10)
  n <- 300
  label <- factor(sample(3, n, replace = TRUE))
  centres <- matrix(rnorm(3 * 5, sd = 0.6), 3)
  X <- centres[label, ] + matrix(rnorm(n * 5), n)
  set.seed(11)
  plain <- neighbor_embedding(X, "umap", max_iter = 200)
  set.seed(11)
  sup <- neighbor_embedding(X, "umap", max_iter = 200, y = label)
  acc_plain <- knn_label_accuracy(plain, label)
  acc_sup <- knn_label_accuracy(sup, label)
  expect_gt(acc_sup, acc_plain + 0.1)
  expect_gt(acc_sup, 0.9)
  # half the labels hidden: the labelled half is pulled apart among itself
  # (the hidden half of such overlapping clusters gains little)
  hidden <- seq_len(n) %% 2 == 0
  half <- label
  half[hidden] <- NA
  set.seed(11)
  semi <- neighbor_embedding(X, "umap", max_iter = 200, y = half)
  expect_gt(knn_label_accuracy(semi[!hidden, ], label[!hidden]),
            knn_label_accuracy(plain[!hidden, ], label[!hidden]) + 0.05)
})

test_that("a supervised model places new points without labels, and survives saveRDS()", {
  d <- sup_iris()
  train <- seq_len(nrow(d$X)) %% 5 != 0
  set.seed(12)
  fit <- neighbor_embedding(d$X[train, ], "umap", max_iter = 100, y = d$label[train],
                            ret_model = TRUE)
  set.seed(13)
  placed <- neighbor_embedding_transform(d$X[!train, ], fit$model)
  expect_equal(dim(placed), c(sum(!train), 2))
  expect_true(all(is.finite(placed)))
  expect_gt(knn_label_accuracy(placed, d$label[!train], from = fit$embedding,
                               label_from = d$label[train]), 0.85)
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file))
  saveRDS(fit$model, file)
  set.seed(13)
  expect_identical(neighbor_embedding_transform(d$X[!train, ], readRDS(file)), placed)
  # t-SNE with numeric targets
  set.seed(14)
  fit <- neighbor_embedding(d$X[train, ], "tsne", max_iter = 100, y = d$X[train, 3],
                            ret_model = TRUE, stop_lying_iter = 50)
  set.seed(15)
  placed <- neighbor_embedding_transform(d$X[!train, ], fit$model)
  expect_true(all(is.finite(placed)))
})

test_that("a sharded graph's affinities are mixed as the same graph in memory", {
  d <- sup_iris()
  case <- sharded_lsnn_case(d$X, rows_per_shard = 50)
  on.exit(unlink(case$dirs, recursive = TRUE))
  g <- read_graph_shards(case$graph)
  set.seed(16)
  a <- neighbor_embedding(method = "umap", nn_method = g, y = d$label, max_iter = 20,
                          ret_extra = "P")
  set.seed(16)
  b <- neighbor_embedding(method = "umap", nn_method = list(idx = g$idx, dist = g$dist),
                          y = d$label, max_iter = 20, ret_extra = "P")
  expect_identical(a, b)
  P0 <- neighbor_embedding(method = "umap", nn_method = g, max_iter = 0, ret_extra = "P")$P
  target <- lsnn:::check_target(d$label, 0.5, NULL, "euclidean", "umap", 15L)
  expect_identical(a$P, lsnn:::supervise_affinities(P0, target, "umap", 1L, FALSE))
})
