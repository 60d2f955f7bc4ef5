# Inputs that once gave a silently wrong result or an internal message: each
# now gives the right result or an error that names the argument or the
# element given.

hostile_data <- function() as.matrix(iris[!duplicated(iris[, 1:4]), 1:4])

# A reference of 100 rows, its index (with local scales) and 20 new rows.
hostile_index <- function() {
  X <- hostile_data()
  res <- extended_knn(X[1:100, ], n_neighbors = 10, n_extra = 5, nn_kind = "exact",
                      ret_index = TRUE)
  list(X = X, ref = X[1:100, ], new = X[101:120, ], enn = res$enn, index = res$index)
}

hostile_model <- function(method = "umap", ...) {
  X <- hostile_data()
  set.seed(7)
  fit <- neighbor_embedding(X[1:100, ], method, ret_model = TRUE, max_iter = 30, ...)
  list(model = fit$model, new = X[101:120, ], ref = X[1:100, ])
}

damaged_index <- "^'index' is damaged or not an lsnn index: "
damaged_model <- "^'model' is damaged or not an lsnn model: "

test_that("a graph that lists a neighbour twice in a row is refused, the row named", {
  h <- hostile_index()
  bad <- h$enn
  bad$idx[17, 9] <- bad$idx[17, 4]
  bad$dist[17, 5:9] <- bad$dist[17, 4]
  expect_error(enn_to_lsnn(bad, 5),
               "^'enn\\$idx' lists [0-9]+ twice in row 17 \\(columns 4 and 9\\)")
  expect_error(umap_affinities(nn_method = bad), "'nn_method\\$idx' lists [0-9]+ twice in row 17")
  expect_error(perplexity_affinities(nn_method = bad, perplexity = 3), "twice in row 17")
  expect_error(neighbor_embedding(nn_method = bad, method = "umap"),
               "'nn_method\\$idx' lists [0-9]+ twice in row 17")
  expect_error(locally_scaled_distances(bad$idx, bad$dist), "'graph\\$idx' lists .* row 17")
  expect_error(sort_knn_graph(bad), "'knn_graph\\$idx' lists .* row 17")
  expect_error(truncate_graph(bad, 3), "'graph\\$idx' lists .* row 17")
  expect_error(neighbor_overlap(bad, h$enn), "^'g1\\$idx' lists .* row 17")
  expect_error(neighbor_overlap(h$enn$idx, bad$idx), "^'g2' lists .* row 17")
  # the row itself listed again
  bad <- h$enn
  bad$idx[3, 2] <- 3L
  expect_error(enn_to_lsnn(bad, 5), "lists 3 twice in row 3 \\(columns 1 and 2\\)")
  # rows of duplicated data list distinct rows at distance 0: accepted
  dup <- rbind(h$ref, h$ref[1:5, ])
  g <- extended_knn(dup, 8, 0, nn_kind = "exact")
  expect_equal(dim(enn_to_lsnn(g, 5)$idx), c(105L, 5L))
})

test_that("the repeat check takes BiocNeighbors' form and names its elements", {
  h <- hostile_index()
  bio <- list(index = h$enn$idx[, -1], distance = h$enn$dist[, -1])
  expect_equal(enn_to_lsnn(bio, 5), enn_to_lsnn(h$enn, 5))
  bio$index[8, 6] <- bio$index[8, 2]
  expect_error(enn_to_lsnn(bio, 5), "^'enn\\$index' lists [0-9]+ twice in row 8 \\(columns 2 and 6\\)")
})

test_that("a triplet sparse matrix storing a pair twice is read once, with a warning", {
  h <- hostile_index()
  g <- truncate_graph(h$enn, 9)
  n <- nrow(g$idx)
  i <- as.vector(g$idx[, -1]) - 1L
  j <- rep(seq_len(n) - 1L, 8)
  x <- as.vector(g$dist[, -1])
  twice <- methods::new("dgTMatrix", i = c(i, i[1:3]), j = c(j, j[1:3]), x = c(x, x[1:3]),
                        Dim = c(n, n))
  expect_warning(P <- umap_affinities(nn_method = twice),
                 "^'nn_method' stores 3 distances of pairs it already holds")
  expect_equal(P, umap_affinities(nn_method = g))
})

test_that("the repeat check is linear: a 1e5 x 31 graph is checked in well under a second", {
  skip_if_quick()
  set.seed(1)
  n <- 1e5
  k <- 31
  shift <- sample.int(n - 1L, k - 1L)
  idx <- cbind(seq_len(n), sapply(shift, function(s) (seq_len(n) - 1L + s) %% n + 1L))
  g <- list(idx = idx, dist = matrix(rep(0:(k - 1), each = n), n, k))
  expect_lt(system.time(lsnn:::check_graph(g, "enn"))[["elapsed"]], 2)
  g$idx[n, k] <- g$idx[n, 2]
  expect_error(lsnn:::check_graph(g, "enn"), paste0("twice in row ", format(n, scientific = FALSE)))
})

test_that("an index is checked whole: rows, scales, graph order", {
  h <- hostile_index()
  # local scales NA (the LSNN query once answered, 73% right)
  bad <- h$index
  bad$sigma[c(3, 40)] <- NA
  expect_error(locally_scaled_knn_query(bad, h$new, 5),
               paste0(damaged_index, "'index\\$sigma' must hold finite, positive local scales \\(row 3"))
  bad$sigma <- h$index$sigma
  bad$sigma[5] <- 2 * bad$sigma[5]
  expect_error(locally_scaled_knn_query(bad, h$new, 5), "'index\\$sigma' does not hold the local scales")
  bad$sigma <- -h$index$sigma
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$sigma' must hold finite, positive")
  # graph rows permuted (the approximate query once had a recall of 0.4)
  bad <- h$index
  set.seed(2)
  p <- sample(100)
  bad$graph$idx <- bad$graph$idx[p, ]
  bad$graph$dist <- bad$graph$dist[p, ]
  expect_error(extended_knn_query(bad, h$new, 5),
               paste0(damaged_index, "the first column of 'index\\$graph\\$idx' must be the row itself"))
  # a data matrix with fewer rows than the graph (the exact query once answered)
  bad <- h$index
  bad$data <- bad$data[-1, ]
  expect_error(extended_knn_query(bad, h$new, 5, nn_kind = "exact"),
               paste0(damaged_index, "'index\\$graph' has 100 rows but 'index\\$data' has 99"))
  bad <- h$index
  bad$graph$idx[4, 3] <- 101L
  expect_error(extended_knn_query(bad, h$new, 5),
               "'index\\$graph\\$idx' must contain row numbers from 1 to 100 \\(found 101 in row 4\\)")
  bad <- h$index
  bad$graph$idx[6, 5] <- bad$graph$idx[6, 4]
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$graph\\$idx' lists [0-9]+ twice in row 6")
  bad <- h$index
  bad$data[2, 2] <- NaN
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$data' contains NA, NaN or infinite")
})

test_that("every element of an index removed or of the wrong type is named", {
  h <- hostile_index()
  for (element in c("format_version", "data", "metric", "graph", "sigma", "scale_from",
                    "scale_to", "search")) {
    removed <- h$index
    removed[[element]] <- NULL
    expect_error(extended_knn_query(removed, h$new, 5),
                 paste0(damaged_index, "'index\\$", element, "'"), info = element)
    wrong <- h$index
    wrong[[element]] <- "x"
    expect_error(locally_scaled_knn_query(wrong, h$new, 5),
                 paste0(damaged_index, "'index\\$", element, "'"), info = element)
  }
  bad <- h$index
  bad$graph$idx <- bad$graph$idx + 0
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$graph' must be list\\(idx, dist\\)")
  bad <- h$index
  bad$search$degree <- -1L
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$search'")
  bad <- h$index
  bad$scale_to <- 99L
  expect_error(extended_knn_query(bad, h$new, 5), "'index\\$sigma' is present, though")
})

test_that("format versions are compared as numbers", {
  h <- hostile_index()
  v <- h$index
  v$format_version <- 1
  expect_equal(extended_knn_query(v, h$new, 5, nn_kind = "exact"),
               extended_knn_query(h$index, h$new, 5, nn_kind = "exact"))
  v$format_version <- 2
  expect_error(extended_knn_query(v, h$new, 5), "^'index' has format version 2; this version")
  hm <- hostile_model()
  m <- hm$model
  m$format_version <- 1
  set.seed(3)
  a <- neighbor_embedding_transform(hm$new, m)
  set.seed(3)
  expect_identical(a, neighbor_embedding_transform(hm$new, hm$model))
  m$format_version <- 2
  expect_error(neighbor_embedding_transform(hm$new, m), "^'model' has format version 2")
})

test_that("an index too narrow for local scales says so and how to rebuild it", {
  X <- hostile_data()
  narrow <- extended_knn(X[1:100, ], n_neighbors = 3, n_extra = 0, nn_kind = "exact",
                         ret_index = TRUE)$index
  expect_error(locally_scaled_knn_query(narrow, X[101:110, ], 3),
               paste0("^'index' holds no local scales: its graph has 4 columns, fewer than the 7 ",
                      "of its scale_to; build it with n_neighbors \\+ n_extra of at least 6"))
  # an index with scales but too few candidates asked for
  h <- hostile_index()
  expect_error(locally_scaled_knn_query(h$index, h$new, 3, n_extra = 0), "raise 'n_extra'")
})

test_that("a model is checked whole: its embedding, method and every element", {
  hm <- hostile_model()
  m <- hm$model
  short <- m
  short$embedding <- short$embedding[-1, ]
  expect_error(neighbor_embedding_transform(hm$new, short),
               paste0(damaged_model, "'model\\$embedding' has 99 rows but 'model\\$index' holds 100"))
  pca <- m
  pca$method <- "pca"
  expect_error(neighbor_embedding_transform(hm$new, pca),
               paste0(damaged_model, "'model\\$method' must be one of .* \\(it is \"pca\"\\)"))
  for (element in c("format_version", "method", "cost", "gradient", "embedding", "neighbors",
                    "perplexity", "n_neighbors", "eta", "negative_sample_rate",
                    "sample_gamma")) {
    removed <- m
    removed[[element]] <- NULL
    expect_error(neighbor_embedding_transform(hm$new, removed),
                 paste0(damaged_model, "'model\\$", element, "'"), info = element)
    wrong <- m
    wrong[[element]] <- "x"
    expect_error(neighbor_embedding_transform(hm$new, wrong),
                 paste0(damaged_model, "'model\\$", element, "'"), info = element)
  }
  wrong <- m
  wrong$index <- "x"
  expect_error(neighbor_embedding_transform(hm$new, wrong), "'model\\$index' must be an lsnn index")
  wrong <- m
  wrong$index$sigma[1] <- NA
  expect_error(neighbor_embedding_transform(hm$new, wrong),
               paste0(damaged_model, "'model\\$index\\$sigma' must hold finite"))
  wrong <- m
  wrong$cost$method <- NULL
  expect_error(neighbor_embedding_transform(hm$new, wrong), "'model\\$cost' must hold the settings")
  wrong <- m
  wrong$cost$a <- numeric(0)
  expect_error(neighbor_embedding_transform(hm$new, wrong), "'model\\$cost\\$a' must be a positive")
  wrong <- m
  wrong$embedding[2, 1] <- NaN
  expect_error(neighbor_embedding_transform(hm$new, wrong), "'model\\$embedding' contains NA")
  # without its index a model is one fitted on a graph: new rows need nn_method
  removed <- m
  removed$index <- NULL
  expect_error(neighbor_embedding_transform(hm$new, removed), "give the new rows' neighbours")
})

test_that("a PaCMAP model is checked with its own elements", {
  hm <- hostile_model("pacmap")
  set.seed(4)
  Y <- neighbor_embedding_transform(hm$new, hm$model)
  expect_equal(dim(Y), c(20L, 2L))
  bad <- hm$model
  bad$gradient <- "exact"
  expect_error(neighbor_embedding_transform(hm$new, bad), "'model\\$gradient' must be one of \"pairs\"")
  bad <- hm$model
  bad$pca <- list(center = 1:2)
  expect_error(neighbor_embedding_transform(hm$new, bad), "'model\\$pca' must be NULL")
  expect_error(neighbor_embedding_transform(hm$new[, 1:3], hm$model), "^'X_new' has 3 columns")
})

test_that("transform errors name X_new, not the query inside", {
  hm <- hostile_model()
  expect_error(neighbor_embedding_transform(hm$new[, 1:3], hm$model),
               "^'X_new' has 3 columns; the reference data has 4")
  with_na <- hm$new
  with_na[4, 2] <- NA
  expect_error(neighbor_embedding_transform(with_na, hm$model),
               "^'X_new' contains 1 NA, NaN or infinite values \\(first in row 4\\)")
  expect_error(neighbor_embedding_transform(hm$new[0, ], hm$model), "^'X_new' must have at least 1 row$")
  expect_error(neighbor_embedding_transform(list(idx = matrix(1L), dist = matrix(0)), hm$model),
               "^'X_new' is a neighbour graph")
  hl <- hostile_model("umap", neighbors = "lsnn")
  expect_error(neighbor_embedding_transform(hl$new[, 1:2], hl$model), "^'X_new' has 2 columns")
  expect_equal(dim(neighbor_embedding_transform(hl$new, hl$model)), c(20L, 2L))
})

test_that("the new rows' neighbours are read in every graph form", {
  hm <- hostile_model("tsne", perplexity = 5, exaggeration = 1)
  h <- hostile_index()
  q <- extended_knn_query(h$index, h$new, 15, nn_kind = "exact")
  set.seed(5)
  ref <- neighbor_embedding_transform(model = hm$model, nn_method = q)
  set.seed(5)
  bio <- neighbor_embedding_transform(model = hm$model,
                                      nn_method = list(index = q$idx, distance = q$dist))
  expect_identical(bio, ref)
  S <- Matrix::sparseMatrix(i = as.vector(t(q$idx)), j = rep(seq_len(20), each = 15),
                            x = as.vector(t(q$dist)), dims = c(100, 20))
  set.seed(5)
  expect_equal(neighbor_embedding_transform(model = hm$model, nn_method = S), ref)
  set.seed(5)
  expect_identical(neighbor_embedding_transform(model = hm$model, nn_method = list(euclidean = q)),
                   ref)
  bad <- q
  bad$idx[2, 7] <- bad$idx[2, 3]
  expect_error(neighbor_embedding_transform(model = hm$model, nn_method = bad),
               "^'nn_method\\$idx' lists [0-9]+ twice in row 2 \\(columns 3 and 7\\)")
  bad <- q
  bad$idx[5, 1] <- 101L
  expect_error(neighbor_embedding_transform(model = hm$model, nn_method = bad),
               "'nn_method\\$idx' must contain reference row numbers from 1 to 100 \\(found 101 in row 5\\)")
  bad <- list(index = q$idx[-1, ], distance = q$dist[-1, ])
  expect_error(neighbor_embedding_transform(h$new, hm$model, nn_method = bad),
               "^'nn_method' has 19 rows but 'X_new' has 20")
})

test_that("choice arguments name themselves", {
  X <- hostile_data()
  expect_error(neighbor_embedding(X, "pca"), "^'method' must be one of \"tsne\"")
  expect_error(neighbor_embedding(X, neighbors = "pca"), "^'neighbors' must be one of \"knn\", \"lsnn\"")
  expect_error(neighbor_embedding(X, gradient = "pca"), "^'gradient' must be one of")
  expect_error(cost_gradient(X[1:10, 1:2], diag(10), gradient = "pca"), "^'gradient' must be one of")
})

test_that("every field of the option lsnn.grid is range-checked and named", {
  set.seed(6)
  Y <- matrix(stats::rnorm(40), 20)
  P <- Matrix::Matrix(0.01 * (1 - diag(20)), sparse = TRUE)
  old <- options(lsnn.grid = NULL)
  on.exit(options(old))
  run <- function(g) {
    options(lsnn.grid = g)
    cost_gradient(Y, P, "tsne", gradient = "approx")
  }
  expect_error(run(list(nodes = 4, box_width = 1, min_boxes = 1e9)),
               "^option 'lsnn.grid' has field 'min_boxes' = 1e\\+09; it must be a whole number from 1 to 512")
  full <- list(nodes = 5, box_width = 4, min_boxes = 1, near_field = TRUE, points_per_box = 64,
               near_boxes = 2, pair_weight = 1, smooth_width = 0.3, by_components = TRUE,
               shallow_width = 0.45, fine_nodes = 7, fine_smooth_width = 0.6)
  wrong <- list(nodes = 33, nodes = 2.5, box_width = 0.01, box_width = -Inf, min_boxes = 0,
                min_boxes = 1.5, near_field = 2, points_per_box = 1, near_boxes = 0,
                near_boxes = 9, pair_weight = -1, smooth_width = Inf, by_components = 0.5,
                shallow_width = -1, fine_nodes = 33, fine_smooth_width = -1, nodes = NA,
                near_field = NA, box_width = "4", nodes = c(5, 7))
  for (k in seq_along(wrong)) {
    g <- full
    g[[names(wrong)[k]]] <- wrong[[k]]
    expect_error(run(g), paste0("^option 'lsnn.grid' has field '", names(wrong)[k], "' = "),
                 info = paste(names(wrong)[k], format(wrong[[k]])))
  }
  expect_error(run(c(5, 4, 1)), "^option 'lsnn.grid' must be NULL or a named list of grid fields")
  expect_error(run(list(5, box_width = 4)), "^option 'lsnn.grid' must be NULL or a named list")
  expect_error(run(list(nodes = 5, width = 4)),
               "^option 'lsnn.grid' has an unknown field 'width'; its fields are nodes, box_width")
  expect_error(run(list(nodes = 5, nodes = 7)), "^option 'lsnn.grid' names the field 'nodes' twice")
  # fields left to the default must fit those given
  expect_error(run(list(nodes = 20)), "^option 'lsnn.grid' has nodes = 20, too many for the default points_per_box = 64")
  expect_true(is.finite(run(full)$cost))
  expect_true(is.finite(run(list(nodes = 7, box_width = 0.5, min_boxes = 20, near_field = FALSE,
                                 pair_weight = 0, by_components = FALSE))$cost))
  expect_true(is.finite(run(list(nodes = 3, box_width = Inf, near_field = FALSE))$cost))
  expect_true(is.finite(run(c(nodes = 7, near_boxes = 1))$cost))
})

# ---- a second round of hostile inputs: PaCMAP, pair sets and sharded files ----

test_that("a second round of hostile inputs: PaCMAP and LocalMAP run on 4 to 7 points", {
  set.seed(11)
  X <- matrix(stats::rnorm(7 * 3), 7)
  for (n in 4:7) {
    for (method in c("pacmap", "localmap")) {
      Y <- neighbor_embedding(X[seq_len(n), ], method, phases = c(5, 5, 5))
      expect_identical(dim(Y), c(n, 2L), info = paste(method, n))
      expect_true(all(is.finite(Y)), info = paste(method, n))
    }
  }
  expect_identical(dim(neighbor_embedding(X[1:4, ], "pacmap", n_components = 4,
                                          phases = c(5, 5, 5))), c(4L, 4L))
  # a model of 4 points places new ones
  fit <- neighbor_embedding(X[1:4, ], "pacmap", ret_model = TRUE, phases = c(5, 5, 5))
  expect_true(all(is.finite(neighbor_embedding_transform(X[5:6, ], fit$model))))
  # 3 points leave room for near pairs only without mid-near and further ones
  Y <- neighbor_embedding(X[1:3, ], "pacmap", mn_ratio = 0, fp_ratio = 0, phases = c(5, 5, 5))
  expect_true(all(is.finite(Y)))
  expect_error(neighbor_embedding(X[1:3, ], "pacmap"),
               "^PaCMAP needs more points: 3 .* with mn_ratio = 0.5 and fp_ratio = 2$")
})

test_that("a second round of hostile inputs: pair ratios too large for the points name themselves", {
  X <- matrix(stats::rnorm(20 * 3), 20)
  expect_error(neighbor_embedding(X, "pacmap", fp_ratio = 1e9),
               "^PaCMAP needs more points: 20 .* fp_ratio = 1e\\+09$")
  expect_error(neighbor_embedding(X, "pacmap", mn_ratio = 1e300), "mn_ratio = 1e\\+300")
})

test_that("a second round of hostile inputs: extras a method does not return are refused", {
  X <- matrix(stats::rnorm(20 * 3), 20)
  expect_error(neighbor_embedding(X, "pacmap", ret_extra = "P"),
               "^'ret_extra' asks for \"P\", which method = \"pacmap\" does not return")
  expect_error(neighbor_embedding(X, "localmap", ret_extra = c("nn", "fgraph")),
               "^'ret_extra' asks for \"fgraph\", which method = \"localmap\" does not return")
  expect_error(neighbor_embedding(X, "tsne", perplexity = 5, ret_extra = "pairs"),
               "^'ret_extra' asks for \"pairs\", which method = \"tsne\" does not return")
})

test_that("a second round of hostile inputs: cost_gradient() of pair sets", {
  set.seed(12)
  X <- matrix(stats::rnorm(20 * 3), 20)
  P <- neighbor_embedding(X, "pacmap", ret_extra = "pairs", phases = c(5, 5, 5))$pairs
  Y <- matrix(stats::rnorm(40), 20)
  bad <- P
  bad$near[20, 2] <- 20L
  expect_error(cost_gradient(Y, bad, "pacmap"), "^'P\\$near' pairs a point with itself \\(row 20\\)$")
  expect_error(cost_gradient(Y * 1e200, P, "localmap"), "^'Y' is too spread out")
  expect_error(cost_gradient(Y * 1e200, P, "pacmap"), "^'Y' is too spread out")
  expect_error(cost_gradient(Y, P, c("pacmap", "localmap")), "^'method' must be one of")
  expect_error(cost_gradient(Y, P, "pca"), "^'method' must be one of")
})

test_that("a second round of hostile inputs: a damaged shard index or set is named", {
  future::plan(future::sequential)
  X <- matrix(stats::rnorm(40 * 3), 40)
  dir <- tempfile("shards-")
  on.exit(unlink(dir, recursive = TRUE))
  sh <- write_shards(X, dir, rows_per_shard = 15)
  index_file <- file.path(dir, "shards.rds")
  index <- readRDS(index_file)
  short <- index
  short$rows <- c(15L, 15L)
  saveRDS(short, index_file)
  expect_error(shard_set(dir), "shards.rds' is not an index of write_shards\\(\\) \\('rows' must")
  expect_error(extended_knn_sharded(dir, 5, 0, nn_kind = "exact"), "is not an index of write_shards")
  saveRDS("junk", index_file)
  expect_error(shard_set(dir), "shards.rds' is not an index of write_shards\\(\\) \\(it is not a list\\)")
  writeBin(as.raw(1:9), index_file)
  expect_error(shard_set(dir), "shards.rds' is not an index of write_shards")
  saveRDS(index, index_file)
  expect_identical(shard_set(dir), sh)
  damaged <- sh
  damaged$rows <- damaged$rows[-1]
  expect_error(extended_knn_sharded(damaged, 5, 0, nn_kind = "exact"),
               "^'shards' is damaged \\('rows' must")
})

test_that("a second round of hostile inputs: damaged graph files of a sharded run are named", {
  future::plan(future::sequential)
  X <- matrix(stats::rnorm(40 * 3), 40)
  dir <- tempfile("shards-")
  out <- tempfile("graph-")
  on.exit(unlink(c(dir, out), recursive = TRUE))
  sh <- write_shards(X, dir, rows_per_shard = 15)
  res <- extended_knn_sharded(sh, 5, 0, nn_kind = "exact", out_dir = out)
  g <- read_graph_shards(res)
  expect_identical(g, extended_knn(X, 5, 0, nn_kind = "exact"))
  file <- res$files[2]
  part <- readRDS(file)
  writeBin(as.raw(1:9), file)
  expect_error(read_graph_shards(res), "^graph file '.*graph-00002.rds' of 'x' cannot be read")
  saveRDS(list(idx = part$idx[1:3, 1:2], dist = part$dist[1:3, 1:2]), file)
  expect_error(read_graph_shards(res), "graph-00002.rds' of 'x' is not the graph of its shard's 15 rows")
  # right shape, wrong contents: a resumed run does not return them, it
  # computes them again
  wrong <- part
  wrong$idx[] <- 1L
  saveRDS(wrong, file)
  expect_error(read_graph_shards(res), "graph-00002.rds' of 'x' is damaged")
  expect_message(again <- extended_knn_sharded(sh, 5, 0, nn_kind = "exact", out_dir = out),
                 "graph-00002.rds' of 'out_dir' is damaged .*: computing it again")
  expect_identical(read_graph_shards(again), g)
  wrong <- part
  wrong$idx[, 1:2] <- wrong$idx[, 2:1]
  saveRDS(wrong, file)
  expect_error(read_graph_shards(out), "graph-00002.rds' of 'x' is damaged \\(rows that do not list themselves first\\)")
  saveRDS(part, file)
  expect_identical(read_graph_shards(out), g)
  writeBin(as.raw(1:9), file.path(out, "complete.rds"))
  expect_error(read_graph_shards(out), "complete.rds', the record of the finished run in 'x', cannot be read")
  damaged <- res
  damaged$k <- NULL
  expect_error(read_graph_shards(damaged), "^'x' is damaged \\('k' must")
})
