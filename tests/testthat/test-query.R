# Brute force in plain R: the k nearest rows of X for every row of Q, by
# (distance, row number).
ref_query <- function(X, Q, k, metric = "euclidean") {
  D <- ref_dist(rbind(X, Q), metric)[nrow(X) + seq_len(nrow(Q)), seq_len(nrow(X)), drop = FALSE]
  idx <- t(apply(D, 1, function(r) order(r, seq_along(r))[seq_len(k)]))
  dimnames(idx) <- NULL
  dist <- t(vapply(seq_len(nrow(Q)), function(i) D[i, idx[i, ]], numeric(k)))
  dimnames(dist) <- NULL
  list(idx = idx, dist = dist)
}

recall <- function(a, b) {
  mean(vapply(seq_len(nrow(a)), function(i) length(intersect(a[i, ], b[i, ])), 0)) / ncol(a)
}

test_that("the exact query is brute force, ties by row number, for every metric", {
  set.seed(11)
  X <- round(clustered(400, 6) * 4)
  X <- rbind(X, X[1:40, ], X[1:10, ])          # duplicated rows: ties
  Q <- rbind(round(clustered(60, 6) * 4), X[c(3, 5, 401), ])
  for (metric in c("euclidean", "cosine", "correlation", "manhattan")) {
    res <- extended_knn(X, 10, 5, nn_kind = "exact", metric = metric, ret_index = TRUE)
    q <- extended_knn_query(res$index, Q, 12, nn_kind = "exact", n_threads = 2)
    ref <- ref_query(X, Q, 12, metric)
    expect_identical(q$idx, ref$idx, info = metric)
    expect_equal(q$dist, ref$dist, tolerance = 1e-12, info = metric)
  }
  # a query row equal to rows 3, 403 and 443 of X lists them in that order
  expect_equal(q$idx[61, 1:3], c(3L, 403L, 443L))
})

test_that("querying the reference rows gives the reference graph without ties", {
  set.seed(12)
  X <- clustered(700, 8)
  res <- extended_knn(X, 20, 5, nn_kind = "exact", ret_index = TRUE)
  q <- extended_knn_query(res$index, X, 26, nn_kind = "exact")
  expect_identical(q, res$enn)
  # float-exact data (stored in single precision) and data that is not
  # (double) give the same distances, bit for bit
  Xi <- round(X * 100)
  res_i <- extended_knn(Xi, 20, 5, nn_kind = "exact", ret_index = TRUE)
  q_d <- extended_knn_query(res_i$index, rbind(Xi[1:50, ] + 0.1, Xi), 26, nn_kind = "exact")
  expect_identical(q_d$idx[-(1:50), ], res_i$enn$idx)
  expect_identical(q_d$dist[-(1:50), ], res_i$enn$dist)
})

test_that("the exact query's exclude leaves out one reference row per query row", {
  set.seed(13)
  X <- round(clustered(300, 5) * 4)
  Q <- rbind(X[1:40, ], round(clustered(20, 5) * 4))
  # each of the first 40 query rows leaves out its own copy (0-based), the
  # others one far row or none
  skip <- c(0:39, rep(c(299L, -1L), 10))
  for (metric in c("euclidean", "cosine")) {
    full <- lsnn:::.knn_query_dense(X, Q, 9, metric, TRUE, list(), c(0L, 0L), 2L, FALSE, "auto")
    ex <- lsnn:::.knn_query_dense(X, Q, 8, metric, TRUE, list(), c(0L, 0L), 2L, FALSE, "auto",
                                  skip)
    expect_false(any(ex$idx == skip + 1L))
    for (i in seq_len(nrow(Q))) {
      keep <- full$idx[i, ] != skip[i] + 1L
      expect_identical(ex$idx[i, ], full$idx[i, keep][1:8], info = i)
      expect_identical(ex$dist[i, ], full$dist[i, keep][1:8], info = i)
    }
    # sparse rows stacked under the reference rows: the same
    S <- methods::as(methods::as(rbind(X, Q), "CsparseMatrix"), "RsparseMatrix")
    sp <- lsnn:::.knn_query_sparse(S@p, S@j, S@x, nrow(S), ncol(S), nrow(X), 8L, metric, TRUE,
                                   list(), c(0L, 0L), 1L, FALSE, "auto", skip)
    expect_identical(sp$idx, ex$idx)
    # NULL and an empty vector mean none
    expect_identical(lsnn:::.knn_query_dense(X, Q, 9, metric, TRUE, list(), c(0L, 0L), 1L,
                                             FALSE, "auto", integer()), full)
  }
  expect_error(lsnn:::.knn_query_dense(X, Q, 8, "euclidean", TRUE, list(), c(0L, 0L), 1L,
                                       FALSE, "auto", skip[-1]), "one entry per query row")
  expect_error(lsnn:::.knn_query_dense(X, Q, 8, "euclidean", TRUE, list(), c(0L, 0L), 1L,
                                       FALSE, "auto", replace(skip, 3, 360L)), "rows of the data")
  expect_error(lsnn:::.knn_query_dense(X[1:5, ], Q, 5, "euclidean", TRUE, list(), c(0L, 0L), 1L,
                                       FALSE, "auto", rep(0L, 60)), "k is more than")
})

test_that("the approximate query finds the neighbours, for any n_threads and reproducibly", {
  set.seed(13)
  XQ <- clustered(3300, 10, n_clusters = 10)
  X <- XQ[1:3000, ]
  Q <- XQ[3001:3300, ]
  res <- locally_scaled_knn(X, 15, ret_index = TRUE, nn_kind = "exact")
  ex <- extended_knn_query(res$index, Q, 30, nn_kind = "exact")
  set.seed(1)
  a1 <- extended_knn_query(res$index, Q, 30, n_threads = 1)
  set.seed(1)
  a2 <- extended_knn_query(res$index, Q, 30, n_threads = 2)
  expect_identical(a1, a2)
  expect_equal(dim(a1$idx), c(300L, 30L))
  expect_true(all(a1$dist[, -1] - a1$dist[, -30] >= 0))
  expect_gt(recall(a1$idx, ex$idx), 0.98)
  # found neighbours have their exact distances
  hit <- a1$idx == ex$idx
  expect_equal(a1$dist[hit], ex$dist[hit], tolerance = 0)
  # sparse data: the same exact query
  S <- Matrix::Matrix(X * (abs(X) > 0.5), sparse = TRUE)
  rs <- extended_knn(S, 10, 5, nn_kind = "exact", ret_index = TRUE)
  qs <- extended_knn_query(rs$index, S[1:20, ], 16, nn_kind = "exact")
  expect_identical(qs$idx, rs$enn$idx[1:20, ])
  expect_identical(qs$dist, rs$enn$dist[1:20, ])
})

# The approximate query of an index's own rows: nearly every row finds
# itself first, and the 5 nearest match the exact query's.
expect_query_finds_rows <- function(Y, min_recall) {
  index <- extended_knn(Y, 10, 0, nn_kind = "exact", ret_index = TRUE)$index
  a <- extended_knn_query(index, Y, 5, seed = 1)
  ex <- extended_knn_query(index, Y, 5, nn_kind = "exact")
  expect_gt(mean(a$idx[, 1] == seq_len(nrow(Y))), 0.99)
  expect_gt(recall(a$idx, ex$idx), min_recall)
}

test_that("the approximate query ranks close rows far from the data's centre", {
  # two rings of 3,000 points 60 apart, neighbours 0.002 apart: the rows'
  # norms are 30,000 times their neighbours' distances, which scores from
  # norms and products in single precision cannot tell apart
  set.seed(1)
  t <- sort(runif(3000)) * 2 * pi
  Y <- rbind(cbind(-30 + cos(t), sin(t)), cbind(30 + cos(t), sin(t)))
  expect_query_finds_rows(Y, min_recall = 0.95)
})

test_that("the approximate query reaches groups no sampled entry point falls in", {
  # 100 groups of 20 rows with no neighbour between them, against 64
  # sampled entry points: each group is entered by its own first row
  set.seed(2)
  centres <- matrix(runif(200, -100, 100), 100)
  Y <- centres[rep(1:100, each = 20), ] + matrix(rnorm(4000, sd = 0.1), 2000)
  expect_query_finds_rows(Y, min_recall = 0.98)
})

test_that("locally scaled query follows the definition and fits uwot::umap_transform", {
  set.seed(14)
  X <- clustered(300, 5)
  Q <- clustered(40, 5)
  res <- locally_scaled_knn(X, 10, n_extra = 20, nn_kind = "exact", ret_index = TRUE)
  q <- locally_scaled_knn_query(res$index, Q, 10, n_extra = 20, nn_kind = "exact")
  expect_equal(dim(q$idx), c(40L, 10L))
  # plain R: sigma of the reference rows from their extended graph, sigma of
  # a query row from its 4th to 6th nearest reference rows
  enn <- res$index$graph
  sigma <- pmax(rowMeans(enn$dist[, 5:7]), 1e-10)
  expect_identical(res$index$sigma, sigma)
  cand <- ref_query(X, Q, 30)
  for (i in seq_len(nrow(Q))) {
    s_q <- max(mean(cand$dist[i, 4:6]), 1e-10)
    scaled <- cand$dist[i, ]^2 / s_q / sigma[cand$idx[i, ]]
    keep <- order(scaled)[1:10]
    keep <- keep[order(cand$dist[i, keep], cand$idx[i, keep])]
    expect_identical(q$idx[i, ], cand$idx[i, keep])
  }
  skip_if_not_installed("uwot")
  set.seed(1)
  model <- uwot::umap(X, nn_method = res$lsnn, ret_model = TRUE, n_epochs = 20)
  emb <- uwot::umap_transform(Q, model, nn_method = q, n_epochs = 5)
  expect_equal(dim(emb), c(40L, 2L))
  expect_true(all(is.finite(emb)))
})

test_that("the index survives saveRDS and readRDS in a new R process", {
  set.seed(15)
  X <- clustered(800, 6)
  Q <- clustered(50, 6)
  res <- locally_scaled_knn(X, 15, ret_index = TRUE)
  f_index <- tempfile(fileext = ".rds")
  f_query <- tempfile(fileext = ".rds")
  f_out <- tempfile(fileext = ".rds")
  on.exit(unlink(c(f_index, f_query, f_out)))
  saveRDS(res$index, f_index)
  saveRDS(Q, f_query)
  set.seed(2)
  here <- list(extended_knn_query(res$index, Q, 20),
               locally_scaled_knn_query(res$index, Q, 15, nn_kind = "exact"))
  expect_output(print(res$index), "lsnn index: 800 reference rows x 6 columns")
  skip_if_quick()  # (a child R process)
  script <- sprintf(paste0(
    "library(lsnn); index <- readRDS('%s'); Q <- readRDS('%s'); set.seed(2); ",
    "saveRDS(list(extended_knn_query(index, Q, 20), ",
    "locally_scaled_knn_query(index, Q, 15, nn_kind = 'exact')), '%s')"), f_index, f_query, f_out)
  status <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(script)),
                    env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)),
                    stdout = FALSE, stderr = FALSE)
  expect_equal(status, 0)
  expect_identical(readRDS(f_out), here)
})

test_that("bad input gets errors naming the argument", {
  set.seed(16)
  X <- clustered(100, 4)
  res <- extended_knn(X, 10, 0, nn_kind = "exact", ret_index = TRUE)
  expect_error(extended_knn_query(res$index, X[, 1:3], 5), "'query' has 3 columns")
  Qna <- X[1:5, ]
  Qna[2, 3] <- NA
  expect_error(extended_knn_query(res$index, Qna, 5), "'query' contains")
  Qinf <- X[1:5, ]
  Qinf[1, 1] <- Inf
  expect_error(extended_knn_query(res$index, Qinf, 5), "'query' contains")
  expect_error(extended_knn_query(res$enn, X, 5), "'index' must be an lsnn index")
  old <- res$index
  old$format_version <- 0L
  expect_error(extended_knn_query(old, X, 5), "'index' has format version 0")
  expect_error(extended_knn_query(res$index, X, 101), "'n_neighbors' \\(101\\) is more than")
  expect_error(locally_scaled_knn_query(res$index, X, 101), "'n_neighbors' \\(101\\) is more than")
  expect_error(extended_knn_query(res$index, X, 5, epsilon = -1), "'epsilon'")
  expect_error(extended_knn(X, ret_index = NA), "'ret_index'")
  # one query row, as a vector
  expect_equal(dim(extended_knn_query(res$index, X[7, ], 3)$idx), c(1L, 3L))
})
