# The argument checks (R/checks.R): one message style across the package,
# the argument named first, no silent coercion. Items 5 to 7 of issue 11 and
# the small surprises of issue 13.

test_that("the check helpers word their messages the same way", {
  expect_identical(lsnn:::check_whole(3, "k"), 3L)
  expect_error(lsnn:::check_whole(2.5, "k"), "^'k' must be a single whole number \\(it is 2.5\\)$")
  expect_error(lsnn:::check_whole(NA, "k"), "^'k' must be a single whole number$")
  expect_error(lsnn:::check_whole(c(1, 2), "k"), "^'k' must be a single whole number$")
  expect_error(lsnn:::check_whole("3", "k"), "^'k' must be a single whole number$")
  expect_error(lsnn:::check_whole(Inf, "k"), "^'k' must be a single whole number$")
  expect_error(lsnn:::check_whole(0, "k", min = 1), "^'k' must be at least 1 \\(it is 0\\)$")
  expect_error(lsnn:::check_whole(1e10, "k"), "^'k' must be at most 2147483647 \\(it is 1e\\+10\\)$")
  expect_identical(lsnn:::check_whole(1e10, "k", clamp = TRUE), .Machine$integer.max)
  expect_identical(lsnn:::check_number(0.5, "x", min = 0, max = 1), 0.5)
  expect_error(lsnn:::check_number(NaN, "x"), "^'x' must be a single finite number$")
  expect_error(lsnn:::check_number(0, "x", min = 0, above = TRUE), "^'x' must be positive \\(it is 0\\)$")
  expect_error(lsnn:::check_number(1, "x", min = 1, above = TRUE), "^'x' must be greater than 1 \\(it is 1\\)$")
  expect_error(lsnn:::check_number(-1, "x", min = 0), "^'x' must be at least 0 \\(it is -1\\)$")
  expect_error(lsnn:::check_number(2, "x", min = 0, max = 1), "^'x' must be between 0 and 1 \\(it is 2\\)$")
  expect_error(lsnn:::check_number(1, "x", min = 0, max = 1, below = TRUE),
               "^'x' must be between 0 and 1 \\(exclusive\\) \\(it is 1\\)$")
  expect_error(lsnn:::check_flag(NA, "verbose"), "^'verbose' must be TRUE or FALSE$")
  expect_error(lsnn:::check_choice("x", "metric", c("a", "b")), "^'metric' must be one of \"a\", \"b\"$")
})

test_that("sizes near the integer limit are capped or named (issue 11, item 5)", {
  set.seed(1)
  X <- matrix(rnorm(200), 50)
  g <- extended_knn(X, .Machine$integer.max, 1, nn_kind = "exact")
  expect_equal(dim(g$idx), c(50L, 50L))
  expect_equal(dim(extended_knn(X, 1e10, 1e10, nn_kind = "exact")$idx), c(50L, 50L))
  lg <- locally_scaled_knn(X, 10, n_extra = .Machine$integer.max, nn_kind = "exact")
  expect_equal(dim(lg$idx), c(50L, 10L))
  enn <- extended_knn(X, 10, 0, nn_kind = "exact")
  expect_equal(dim(enn_to_lsnn(enn, 5, n_extra = .Machine$integer.max)$idx), c(50L, 5L))
  expect_error(enn_to_lsnn(enn, .Machine$integer.max),
               "'n_neighbors' \\(49, capped at n - 1\\) is more than the 11 columns 'enn' has")
  expect_error(extended_knn(X, 5, 5, nn_args = approx_control(n_trees = .Machine$integer.max)),
               "'n_trees' \\(2147483647\\) is too many for 50 rows")
})

test_that("neighbor_embedding() never coerces silently (issue 11, item 6)", {
  set.seed(2)
  X <- matrix(rnorm(120), 40)
  expect_error(neighbor_embedding(X, stop_lying_iter = 1e10), "^'stop_lying_iter' must be at most 2147483647")
  expect_error(neighbor_embedding(X, max_iter = 1e10), "^'max_iter' must be at most 2147483647")
  expect_error(neighbor_embedding(X, epoch = 1e10), "^'epoch' must be at most")
  expect_error(neighbor_embedding(X, n_components = 1e10), "^'n_components' must be at most")
  expect_error(neighbor_embedding(X, n_components = 41),
               "^'n_components' must be at most the number of points, 40")
  expect_error(neighbor_embedding(X, n_components = 1.7), "^'n_components' must be a single whole number \\(it is 1.7\\)")
  expect_error(neighbor_embedding(X, "umap", n_neighbors = 2.9), "^'n_neighbors' must be a single whole number")
  expect_error(neighbor_embedding(X, "umap", n_neighbors = 41), "^'n_neighbors' must be at most the number of points, 40")
  expect_error(neighbor_embedding(X, perplexity = 1), "^'perplexity' must be greater than 1")
  expect_error(neighbor_embedding(X, momentum = 1), "^'momentum' must be between 0 and 1")
  expect_error(neighbor_embedding(X, final_momentum = -0.1), "^'final_momentum' must be between 0 and 1")
  expect_error(neighbor_embedding(X, mom_switch_iter = 2.5), "^'mom_switch_iter' must be a single whole number")
  expect_error(neighbor_embedding(X, min_gain = -1), "^'min_gain' must be at least 0")
  expect_error(neighbor_embedding(X, tol = NA), "^'tol' must be a single finite number")
  expect_error(neighbor_embedding(X, eta = 0), "^'eta' must be positive")
  expect_error(neighbor_embedding(X, exaggeration = -1), "^'exaggeration' must be positive")
  expect_error(neighbor_embedding(X, init_sdev = 0), "^'init_sdev' must be positive")
  expect_error(neighbor_embedding(X, n_threads = 1.5), "^'n_threads' must be a single whole number")
  expect_error(neighbor_embedding(X, gamma = -1), "^'gamma' must be at least 0")
  expect_error(neighbor_embedding(X, weight = "x"), "^'weight' must be one of")
  expect_error(neighbor_embedding(X, "umap", a = 0), "^'a' must be positive")
})

test_that("parameters out of range are named (issue 11, item 7)", {
  set.seed(3)
  X <- matrix(rnorm(120), 40)
  expect_error(umap_ab(min_dist = 3), "^'min_dist' \\(3\\) must not be greater than 'spread' \\(1\\)")
  expect_error(umap_ab(spread = 0), "^'spread' must be positive")
  expect_error(umap_ab(min_dist = -1), "^'min_dist' must be at least 0")
  ab <- umap_ab(spread = 1e-8, min_dist = 0)
  expect_true(all(is.finite(ab)) && all(ab > 0))
  # the fit scales with spread: the curve at d = spread * u is the same
  ab1 <- umap_ab(1, 0.25)
  ab2 <- umap_ab(4, 1)
  u <- c(0.5, 1, 2)
  expect_equal(1 / (1 + ab2[["a"]] * (4 * u)^(2 * ab2[["b"]])),
               1 / (1 + ab1[["a"]] * u^(2 * ab1[["b"]])))
  expect_error(neighbor_embedding(X, ret_extra = NA), "^'ret_extra' must be TRUE or FALSE")
  expect_error(neighbor_embedding(X, verbose = NA), "^'verbose' must be TRUE or FALSE")
  expect_error(perplexity_affinities(X, 5, ret_extra = NA), "^'ret_extra' must be TRUE or FALSE")
  expect_error(umap_affinities(X, 5, ret_extra = NA), "^'ret_extra' must be TRUE or FALSE")
  expect_error(umap_affinities(X, 5, set_op_mix_ratio = 2), "^'set_op_mix_ratio' must be between 0 and 1")
  expect_error(umap_affinities(X, 5, bandwidth = 0), "^'bandwidth' must be positive")
  expect_error(extended_knn(X, 5, verbose = NA), "^'verbose' must be TRUE or FALSE")
  # exaggeration or step sizes that blow the coordinates up are an error,
  # never NaN coordinates (a given eta: the default divides by the exaggeration)
  expect_error(neighbor_embedding(X, perplexity = 10, exaggeration = 1e300, eta = 100,
                                  max_iter = 100, stop_lying_iter = 50),
               "the embedding diverged at iteration [0-9]+ .*'exaggeration'")
  expect_error(neighbor_embedding(X, perplexity = 10, init_sdev = 1e300),
               "^'init_sdev' \\(1e\\+300\\) is too large")
  expect_error(neighbor_embedding(X, perplexity = 10, init = matrix(1e200, 40, 2)),
               "^'init' has coordinates too large")
})

test_that("the data generators and readers use the same checks", {
  expect_error(swissroll(1e10), "^'n' must be at most 2147483647")
  expect_error(spheres(radius = -1), "^'radius' must be positive \\(it is -1\\)")
  expect_error(scurvehole(10, noise = -1), "^'noise' must be at least 0 \\(it is -1\\)")
  expect_error(hierarchical(dim = 0), "^'dim' must be at least 1")
  expect_error(read_idx(tempfile(), flatten = NA), "^'flatten' must be TRUE or FALSE")
})

test_that("small surprises get a word (issue 13, item 5)", {
  set.seed(4)
  X <- matrix(rnorm(120), 40)
  # a data frame's other columns are dropped with a message
  expect_message(neighbor_embedding(iris[1:60, ], perplexity = 5, max_iter = 5, exaggeration = 1),
                 "dropped: Species")
  expect_message(perplexity_affinities(iris[1:60, ], 5), "dropped: Species")
  # ending inside early exaggeration is warned about
  expect_warning(neighbor_embedding(X, perplexity = 5, max_iter = 100),
                 "'max_iter' \\(100\\) is below 'stop_lying_iter' \\(250\\)")
  expect_silent(neighbor_embedding(X, perplexity = 5, max_iter = 100, exaggeration = 1))
  # a run that stops at max_iter says so under verbose
  expect_message(neighbor_embedding(X, "umap", n_neighbors = 5, max_iter = 20, verbose = TRUE,
                                    gradient = "exact"),
                 "stopped at max_iter = 20 without converging")
  # uwot-style ret_extra
  expect_error(neighbor_embedding(X, "umap", n_neighbors = 5, ret_extra = c("model", "nn")),
               "^'ret_extra' asks for \"model\", which lsnn does not return")
  res <- neighbor_embedding(X, "umap", n_neighbors = 5, max_iter = 10, ret_extra = c("nn", "P"))
  expect_named(res, c("embedding", "nn", "P"))
  expect_equal(dim(res$nn$idx), c(40L, 5L))
  expect_s4_class(res$P, "dgCMatrix")
  # P freed at the end when not returned; returned whenever asked for
  set.seed(6)
  nn_only <- neighbor_embedding(X, "tsne", perplexity = 5, max_iter = 10, exaggeration = 1,
                                ret_extra = "nn")
  expect_named(nn_only, c("embedding", "nn"))
  set.seed(6)
  everything <- neighbor_embedding(X, "tsne", perplexity = 5, max_iter = 10, exaggeration = 1,
                                   ret_extra = TRUE)
  expect_s4_class(everything$P, "dgCMatrix")
  expect_identical(everything$embedding, nn_only$embedding)
})

test_that("graph consumers check the uwot format and read other packages' graphs (issue 13, item 3)", {
  set.seed(5)
  X <- matrix(rnorm(120), 40)
  g <- extended_knn(X, 8, 0, nn_kind = "exact")
  # distances out of order: the first bad row is named
  bad <- g
  bad$dist[c(7, 3), ] <- bad$dist[c(7, 3), 9:1]
  for (f in list(function(x) enn_to_lsnn(x, 5), function(x) umap_affinities(nn_method = x),
                 function(x) perplexity_affinities(nn_method = x, perplexity = 3),
                 function(x) locally_scaled_distances(x$idx, x$dist))) {
    expect_error(f(bad), "must not decrease along a row \\(row 3, column")
  }
  expect_error(neighbor_embedding(nn_method = bad), "'nn_method\\$dist' must not decrease along a row \\(row 3")
  # the row itself must be first, at distance 0
  bad <- g
  bad$dist[5, 1] <- 0.5 * bad$dist[5, 2]
  expect_error(enn_to_lsnn(bad, 5), "'enn\\$dist' must be 0 for the row itself, in column 1 \\(row 5")
  bad <- g
  bad$idx[6, 1:2] <- bad$idx[6, 2:1]
  expect_error(enn_to_lsnn(bad, 5), "row 6 is not")
  # a single-precision self distance of about 1e-7 passes
  near <- g
  near$dist[, 1] <- 1e-8
  expect_silent(enn_to_lsnn(near, 5))
  # sort_knn_graph() takes unsorted graphs (truncate_graph() refuses them)
  bad <- g
  bad$dist[3, ] <- rev(bad$dist[3, ])
  expect_silent(sort_knn_graph(bad))
  # uwot's nested nn output: one metric is used, several are named
  nested <- list(euclidean = g)
  expect_equal(enn_to_lsnn(nested, 5), enn_to_lsnn(g, 5))
  expect_equal(umap_affinities(nn_method = nested), umap_affinities(nn_method = g))
  two <- list(euclidean = g, cosine = g)
  expect_error(enn_to_lsnn(two, 5), "'enn' holds 2 graphs \\(euclidean, cosine\\): choose one, e.g. enn\\$euclidean")
  expect_error(neighbor_embedding(X, nn_method = two), "'nn_method' holds 2 graphs")
  expect_error(neighbor_embedding(nested), "'X' is a neighbour graph: pass it as 'nn_method'")
  # extra elements (as other packages add) are ignored
  expect_equal(enn_to_lsnn(c(g, list(sigma = 1)), 5), enn_to_lsnn(g, 5))
})

test_that("graphs from uwot, rnndescent and RcppHNSW are read", {
  set.seed(6)
  X <- matrix(rnorm(300), 100)
  ref <- extended_knn(X, 9, 0, nn_kind = "exact")
  if (requireNamespace("uwot", quietly = TRUE)) {
    nn <- uwot::umap(X, n_neighbors = 10, ret_nn = TRUE, n_epochs = 0, init = "random",
                     nn_method = "fnn")$nn
    expect_equal(neighbor_overlap(nn, ref), 1)
    expect_equal(dim(enn_to_lsnn(nn, 5)$idx), c(100L, 5L))
  }
  if (requireNamespace("RcppHNSW", quietly = TRUE)) {
    h <- RcppHNSW::hnsw_knn(X, k = 10, distance = "euclidean")
    expect_gt(neighbor_overlap(h, ref), 0.95)
    expect_equal(dim(umap_affinities(nn_method = h)), c(100L, 100L))
    hc <- RcppHNSW::hnsw_knn(X, k = 10, distance = "cosine")
    expect_equal(dim(enn_to_lsnn(hc, 5)$idx), c(100L, 5L))
  }
  if (requireNamespace("rnndescent", quietly = TRUE)) {
    r <- rnndescent::brute_force_knn(X, k = 10)
    expect_equal(neighbor_overlap(r, ref), 1)
    expect_equal(dim(enn_to_lsnn(r, 5)$idx), c(100L, 5L))
  }
})
